"""Lark front-end: rules, terminals, flags, imports and errors."""
import os

import interegular
import pytest

from constrained.errors import GrammarError, GrammarFileError
from constrained.grammar import Grammar


def _fsm(g, name):
    return interegular.parse_pattern(g.terminals[name].pattern).to_fsm()


def test_rules_terminals_and_ignore():
    g = Grammar.from_lark('''
        ?start: item ("," item)*
        item: WORD | NUMBER -> num
        %import common.WORD
        %import common.NUMBER
        %import common.WS
        %ignore WS
    ''')
    assert g.source == "lark" and g.start == "start"
    assert g.ignore == ("WS",)
    assert set(g.terminals) == {"WORD", "NUMBER", "WS", "COMMA"}
    assert ("WORD",) in g.rules["item"] and ("NUMBER",) in g.rules["item"]
    assert all(type(n) is str for n in g.rules)
    assert all(type(s) is str for alts in g.rules.values() for a in alts for s in a)
    for name in g.terminals:
        interegular.parse_pattern(g.terminals[name].pattern)
    assert _fsm(g, "COMMA").accepts(",")
    assert _fsm(g, "NUMBER").accepts("1.5e3")


def test_priorities_are_kept():
    g = Grammar.from_lark('start: A | B\nA.3: "a"\nB: /[a-z]/\n')
    assert g.terminals["A"].priority == 3
    assert g.terminals["B"].priority == 0


def test_case_insensitive_literal_and_regex():
    g = Grammar.from_lark('start: KW NAME\nKW: "select"i\nNAME: /[a-c]+x/i\n%ignore " "\n')
    kw, name = _fsm(g, "KW"), _fsm(g, "NAME")
    assert kw.accepts("select") and kw.accepts("SeLeCt") and not kw.accepts("selec")
    assert name.accepts("ABcx") and name.accepts("abCX") and not name.accepts("abdx")
    assert "(?i" not in g.terminals["KW"].pattern


def test_inline_flag_groups_and_dotall():
    g = Grammar.from_lark('start: A B C\nA: /(?i:ab)c/\nB: /x.y/s\nC: /p.q/\n')
    a, b, c = _fsm(g, "A"), _fsm(g, "B"), _fsm(g, "C")
    assert a.accepts("ABc") and not a.accepts("ABC")
    assert b.accepts("x\ny") and not c.accepts("p\nq") and c.accepts("p-q")


def test_verbose_flag_drops_layout():
    g = Grammar.from_lark('start: A\nA: /a b  # comment\n c/x\n')
    assert _fsm(g, "A").accepts("abc")


def test_unicode_escapes_become_characters():
    g = Grammar.from_lark('start: A\nA: /\\u00e9+\\x41/\n')
    assert _fsm(g, "A").accepts("\u00e9\u00e9A")
    assert "\\u" not in g.terminals["A"].pattern


def test_anonymous_regex_terminals_are_named():
    g = Grammar.from_lark('start: /[0-9]+/ "+" /[0-9]+/\n')
    assert all(s in g.terminals for s in g.rules["start"][0])


@pytest.mark.parametrize("pattern, fragment", [
    ("/a(?=b)/", "lookaround"),
    ("/^a/", "anchor"),
    ("/a$/", "anchor"),
    ("/(a)\\1/", "backreference"),
    ("/\\bword/", "word boundary"),
    ("/a++/", "possessive"),
])
def test_non_regular_terminals_are_refused_by_name(pattern, fragment):
    with pytest.raises(GrammarError) as info:
        Grammar.from_lark(f"start: THING\nTHING: {pattern}\n")
    assert "THING" in str(info.value) and fragment in str(info.value)


def test_empty_terminal_refused():
    with pytest.raises(GrammarError, match="zero-width|empty"):
        Grammar.from_lark("start: A\nA: /a*/\n")


def test_syntax_error_has_line_and_column():
    with pytest.raises(GrammarError) as info:
        Grammar.from_lark('start: "a"\nother: "b" (\n')
    assert info.value.line == 2 and info.value.column is not None
    with pytest.raises(GrammarError) as info:
        Grammar.from_lark('start: "a"\n  | @@\n')
    assert (info.value.line, info.value.column) == (2, 5)


@pytest.mark.parametrize("text,line,column,fragment", [
    ('start: "abc\n', 1, 8, "unterminated string"),
    ('start: a\na: "x" "abc\n', 2, 8, "unterminated string"),
    ("start: a $ b\n", 1, 10, "unexpected character '$'"),
    ('start: "a" foo\n', 1, 12, "Rule 'foo' used but not defined"),
    ('start: "a" FOO\n', 1, 12, "Terminal 'FOO' used but not defined"),
    ("start: (\n", 1, 9, "Unclosed parenthesis"),
    ('start: [ "a"\n', 1, 13, "unexpected end of line; expected ']'"),
    ('start: "a"\nstart: "b"\n', 2, 1, "defined more than once"),
    ('start: A\nA: "x" A\n', 2, 1, "Recursion in terminal 'A'"),
    ('start: A\nA: ""\n', 2, 4, "Empty terminals"),
    ("start: /(/\n", 1, 8, "invalid regular expression"),
    ('start: "a" ' + "b " * 500 + "$\n", 1, 1012, "unexpected character '$'"),
    ('start: "' + "x" * 1000 + "\n", 1, 8, "unterminated string"),
    ("start: " + "(" * 300 + '"a"' + ")" * 300 + "\n", 1, 108, "nested deeper than 100"),
])
def test_errors_name_the_users_line_and_column(text, line, column, fragment):
    with pytest.raises(GrammarError) as info:
        Grammar.from_lark(text)
    message = str(info.value)
    assert fragment in message
    assert (info.value.line, info.value.column) == (line, column)
    assert len(message) < 300
    for meta in ("_NL", "_RBRA", "Token(", "NonTerminal(", "expansions", '"maybe"'):
        assert meta not in message


def test_size_estimates_match_lark_on_the_shipped_grammars():
    from lark.load_grammar import load_grammar

    from constrained.grammar._lark_scan import LarkScan
    from constrained.grammar._token_refs import replace_lark_token_refs
    folder = os.path.join(os.path.dirname(__file__), "..", "..", "grammars")
    for name in sorted(os.listdir(folder)):
        if name.endswith(".lark"):
            with open(os.path.join(folder, name)) as f:
                text = replace_lark_token_refs(f.read())[0]   # what Lark reads
            scan = LarkScan(text, 10**9)
            scan.check()
            built, _ = load_grammar(text, name, [], False)
            _, rules, _ = built.compile(["start"], set())
            assert len(rules) <= scan.alternatives <= 1.1 * len(rules) + 2, name


def test_undefined_symbols_are_named():
    with pytest.raises(GrammarError, match="'missing'"):
        Grammar.from_lark("start: missing\n")
    with pytest.raises(GrammarError, match="'MISSING'"):
        Grammar.from_lark("start: MISSING\n")
    with pytest.raises(GrammarError, match="'foo'") as info:
        Grammar.from_lark('start: "foo" // foo\n  | "x" foo\n')
    assert (info.value.line, info.value.column) == (2, 9)
    with pytest.raises(GrammarError, match="start rule 'begin'|begin"):
        Grammar.from_lark('start: "a"\n', start="begin")


def test_declare_is_unsupported():
    with pytest.raises(GrammarError, match="INDENT.*declare"):
        Grammar.from_lark('start: INDENT "a"\n%declare INDENT\n')


def test_empty_language_and_hygiene():
    with pytest.raises(GrammarError, match="language is empty"):
        Grammar.from_lark('start: start "a"\n')
    g = Grammar.from_lark('start: "a" | loop\nloop: loop "b"\nunused: "c"\n')
    assert "loop" not in g.rules and "unused" not in g.rules
    assert g.rules["start"] == (("A",),)


def test_imports_inside_the_grammar_folder(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "lib.lark").write_text('WORD: /[a-z]+/\n')
    main = tmp_path / "main.lark"
    main.write_text("start: WORD\n%import .sub.lib.WORD\n")
    g = Grammar.from_file(main)
    assert _fsm(g, "WORD").accepts("abc")


def test_imports_outside_are_refused_unless_allowed(tmp_path, monkeypatch):
    (tmp_path / "lib.lark").write_text('WORD: /[a-z]+/\n')
    text = "start: WORD\n%import .lib.WORD\n"
    monkeypatch.chdir(tmp_path)
    with pytest.raises(GrammarError, match="refused"):
        Grammar.from_lark(text)
    # a grammar file elsewhere may not reach into tmp_path either
    other = tmp_path / "nested"
    other.mkdir()
    with pytest.raises(GrammarError):
        Grammar.from_lark("start: WORD\n%import lib.WORD\n", path=str(other / "g.lark"))
    # library imports from an explicit import path are allowed
    g = Grammar.from_lark("start: WORD\n%import lib.WORD\n", import_paths=[str(tmp_path)])
    assert "WORD" in g.terminals


def test_symlink_escape_is_refused(tmp_path):
    outside = tmp_path / "outside"
    inside = tmp_path / "inside"
    outside.mkdir()
    inside.mkdir()
    (outside / "lib.lark").write_text('WORD: /[a-z]+/\n')
    try:
        os.symlink(outside / "lib.lark", inside / "lib.lark")
    except OSError:
        pytest.skip("no symlinks")
    (inside / "main.lark").write_text("start: WORD\n%import .lib.WORD\n")
    with pytest.raises(GrammarError, match="refused"):
        Grammar.from_file(inside / "main.lark")
    g = Grammar.from_file(inside / "main.lark", allow_outside_imports=True)
    assert "WORD" in g.terminals


def test_from_file_errors(tmp_path):
    with pytest.raises(GrammarFileError, match="does not exist"):
        Grammar.from_file(tmp_path / "nope.lark")
    (tmp_path / "g.txt").write_text("x")
    with pytest.raises(GrammarFileError, match="format"):
        Grammar.from_file(tmp_path / "g.txt")
    err = GrammarFileError("x")
    assert isinstance(err, FileNotFoundError) and isinstance(err, GrammarError)


def test_from_file_gbnf_and_json(tmp_path):
    (tmp_path / "g.gbnf").write_text('root ::= "hi"\n')
    assert Grammar.from_file(tmp_path / "g.gbnf").source == "gbnf"
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(GrammarFileError, match="not valid JSON"):
        Grammar.from_file(tmp_path / "bad.json")
    if hasattr(Grammar, "from_json_schema"):
        (tmp_path / "s.json").write_text('{"type": "boolean"}')
        assert isinstance(Grammar.from_file(tmp_path / "s.json"), Grammar)


def test_invalid_regex_names_the_terminal():
    with pytest.raises(GrammarError, match="terminal NUM: invalid regular expression"):
        Grammar.from_lark("start: NUM\nNUM: /[0-9/\n")


def test_lark_reads_templates_and_operators():
    g = Grammar.from_lark('''
        start: pair{"a", "b"} list{"c"}
        pair{x, y}: x y
        list{item}: "[" [item ("," item)*] "]"
        %ignore " "
    ''')
    assert g.ignore and all(len(t.pattern) >= 1 for t in g.terminals.values())


def test_escaped_string_from_common_is_exact():
    """common.ESCAPED_STRING uses a lookbehind; its replacement yields the same tokens."""
    import random
    import re

    import lark

    g = Grammar.from_lark("start: ESCAPED_STRING\n%import common.ESCAPED_STRING\n")
    ours = re.compile(g.terminals["ESCAPED_STRING"].pattern)
    parser = lark.Lark("start: ESCAPED_STRING\n%import common.ESCAPED_STRING\n")
    (tdef,) = [t for t in parser.terminals if t.name == "ESCAPED_STRING"]
    theirs = re.compile(tdef.pattern.to_regexp())
    rng = random.Random(3)
    for _ in range(3000):
        s = '"' + "".join(rng.choice('ab"\\\n') for _ in range(rng.randint(0, 8)))
        m = theirs.match(s)
        prefixes = [k for k in range(len(s) + 1) if ours.fullmatch(s[:k])]
        assert len(prefixes) <= 1
        assert (m.end() if m else None) == (prefixes[0] if prefixes else None), repr(s)


def test_lazy_quantifiers_only_when_harmless():
    g = Grammar.from_lark('start: T\nT: /"[^"]*?"/\n')
    assert "?" not in g.terminals["T"].pattern
    for pattern in ("/<!--.*?-->/", "/a+?/"):
        with pytest.raises(GrammarError, match="T: lazy quantifier"):
            Grammar.from_lark(f"start: T\nT: {pattern}\n")


def test_import_paths_may_be_one_path(tmp_path):
    (tmp_path / "lib.lark").write_text('WORD: /[a-z]+/\n')
    g = Grammar.from_lark("start: WORD\n%import lib.WORD\n", import_paths=tmp_path)
    assert "WORD" in g.terminals


def test_shorthand_classes_keep_their_unicode_meaning():
    g = Grammar.from_lark("start: WORD\nWORD: /\\w+/\n")
    word = __import__("re").compile(g.terminals["WORD"].pattern)
    assert word.fullmatch("caf\u00e9_9") and word.fullmatch("\u0663")
    assert not word.fullmatch("a-b")


def test_from_file_tolerates_a_byte_order_mark(tmp_path):
    (tmp_path / "g.lark").write_bytes(b'\xef\xbb\xbfstart: "a"\n')
    assert Grammar.from_file(tmp_path / "g.lark").rules["start"] == (("A",),)

def test_lark_reader_is_prepared_once_and_the_collision_check_flag_restored():
    import lark.lexer
    import lark.load_grammar
    before = lark.lexer.has_interegular
    Grammar.from_lark('start: "a"')
    assert hasattr(lark.load_grammar._get_parser, "cache")
    assert lark.lexer.has_interegular == before
