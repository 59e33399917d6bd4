"""Hand-made grammars for the CFG tests (Lark syntax) with documents each must accept."""
from __future__ import annotations

JSON = r"""
?start: value
?value: object | array | string | SIGNED_NUMBER -> number | "true" -> true
      | "false" -> false | "null" -> null
array  : "[" [value ("," value)*] "]"
object : "{" [pair ("," pair)*] "}"
pair   : string ":" value
string : ESCAPED_STRING
%import common.ESCAPED_STRING
%import common.SIGNED_NUMBER
%import common.WS
%ignore WS
"""

ARITH = r"""
?start: sum
?sum: product | sum "+" product | sum "-" product
?product: atom | product "*" atom | product "/" atom
?atom: NUMBER | "-" atom | "(" sum ")" | NAME "(" [sum ("," sum)*] ")" | NAME
%import common.NUMBER
%import common.CNAME -> NAME
%import common.WS
%ignore WS
"""

AMBIGUOUS = r"""
start: e
e: e "+" e | e "*" e | "(" e ")" | NUMBER
NUMBER: /[0-9]+/
%ignore " "
"""

LEFT_RECURSIVE = r"""
start: l
l: l "a" | l "ab" | "b"
"""

RIGHT_RECURSIVE = r"""
start: r
r: "a" r | "b" | "c" r "d"
"""

EPSILON = r"""
start: a b c
a: "x"?
b: | "y" b
c: "z" | d d
d: | "w"
"""

PREFIX_TERMINALS = r"""
start: item*
item: LT | SHL | LE | SHLEQ | ARROW | MINUS | NUM
LT: "<"
SHL: "<<"
LE: "<="
SHLEQ: "<<="
ARROW: "->"
MINUS: "-"
NUM: /[0-9]+(\.[0-9]+)?/
%ignore " "
"""

KEYWORDS = r"""
start: stmt+
stmt: "if" NAME "then" stmt "end" | NAME "=" value ";" | "return" value ";"
value: NAME | INT
NAME: /[a-z_][a-z0-9_]*/
INT: /[0-9]+/
%ignore /[ \n]+/
"""

UNICODE = r"""
start: (word | ARROW | EMOJI)+
word: GREEK | CAFE
GREEK: /[α-ω]+/
CAFE: "café" | "crème"
ARROW: "→"
EMOJI: /[\U0001F600-\U0001F64F]/
%ignore " "
"""

NESTING = r"""
start: p
p: "(" p ")" p | "[" p "]" p |
"""

NEWLINES = r"""
start: line+
line: WORD+ NL
WORD: /[a-z]+/
NL: /\n/
%ignore /[ \n]+/
"""

GRAMMARS = {
    "json": (JSON, ['{"a": [1, 2.5, -3e4, true, null], "b": {"c": "x\\"y"}}', "[]",
                    '  {"k" : "v"}  ', '"é😀"', "[[[[1]]]]", '{"x":[{"y":{}},[]]}']),
    "arith": (ARITH, ["1 + 2 * (3 - x)", "f(1, g(2), -3)", "-(-4.5)/ 2", "a*b+c"]),
    "ambiguous": (AMBIGUOUS, ["1+2*3", "(1 + 2) * 3+4", "12"]),
    "left_recursive": (LEFT_RECURSIVE, ["b", "baaba", "bababab"]),
    "right_recursive": (RIGHT_RECURSIVE, ["b", "aab", "cabd", "ccbdd"]),
    "epsilon": (EPSILON, ["z", "xz", "yyz", "", "w", "ww", "xyw"]),
    "prefix_terminals": (PREFIX_TERMINALS, ["< << <= <<= -> - 3.5", "<<<=", "<-1-", "--->"]),
    "keywords": (KEYWORDS, ["if x then y = 1; end", "iffy = then_ ; return x;",
                            "return returned;\nx=1;"]),
    "unicode": (UNICODE, ["αβγ café → 😀", "crème😃ω"]),
    "nesting": (NESTING, ["", "()", "([()])[]", "((((((((((()))))))))))"]),
    "newlines": (NEWLINES, ["ab cd\n", "a\n\nb\n"]),
}
