"""Sizes of a Lark grammar text, measured in one linear pass before Lark reads it.

Lark's reader spends about a tenth of a millisecond per rule, expands optional and repeated
items into alternatives (``a? b? c?`` becomes eight), inlines every terminal reference into the
terminals using it, and recurses over nested groups and terminal references; a hostile text can
keep it busy for minutes or exhaust Python's stack. The scan tokenizes the text as Lark's
reader does (strings, regular expressions and comments are opaque), estimates the alternatives
Lark would build, and refuses texts past the limits before Lark starts: LimitExceededError for
sizes (``max_rules``, terminal inlining), GrammarError for nesting, each naming a line.
"""
from __future__ import annotations

import re

from ..errors import GrammarError, LimitExceededError

MAX_NESTING = 100             # groups, optional items and template arguments inside one another
MAX_TERMINAL_DEPTH = 50       # terminals referencing terminals referencing ... terminals
MAX_INLINED = 20_000          # items Lark copies into terminals from the terminals they use
_REPEAT_INLINE = 50           # Lark writes ``item~n..m`` out as alternatives when m < 50

_TOKEN = re.compile(r'"(?:\\"|\\\\|[^"\n])*?"i?'          # string literal
                    r'|/(?!/)(?:\\/|\\\\|[^/])*?/[imslux]*'  # regular expression
                    r'|//[^\n]*|#[^\n]*'                   # comments
                    r'|\\[ ]*\r?\n'                        # line continuation
                    r'|\n|->|\.\.|%?[A-Za-z_]\w*|\d+|[^\s\w]')
_OPEN = {"(": ")", "[": "]", "{": "}"}
_DIRECTIVES = ("%ignore", "%import", "%declare")


def where(text: str, pos: int) -> tuple[int, int]:
    """Line and column (from 1) of offset ``pos`` in ``text``."""
    return text.count("\n", 0, pos) + 1, pos - text.rfind("\n", 0, pos)


class _Frame:
    """Alternatives of one group being read: finished ones, and the current expansion as the
    product of its items before the last one times the last one (which a postfix changes)."""

    __slots__ = ("total", "product", "last", "opener", "callee", "grows")

    def __init__(self, opener: str, callee: str = "") -> None:
        self.total, self.product, self.last = 0, 1, 1
        self.opener = opener
        self.callee = callee          # for ``name{...}``: the template used
        self.grows = False            # its arguments wrap a parameter in another template use


class LarkScan:
    """One pass over a Lark text; ``check`` raises on the first limit the text exceeds."""

    def __init__(self, text: str, max_rules: int, source: str = "") -> None:
        self.text = text
        self.max_rules = max_rules
        self.cap = max_rules + 1          # estimates saturate here
        self.source = source
        self.alternatives = 0
        self.terminals: dict[str, tuple[int, int, list[str]]] = {}  # name -> (pos, items, refs)
        self.templates: dict[str, tuple[int, list[tuple[str, bool]]]] = {}  # name -> (pos, uses)
        self._reset(0)

    # -- statements -----------------------------------------------------------------------
    def _reset(self, pos: int) -> None:
        self.start = pos
        self.head: list[str] = []
        self.kind = ""                    # "" (head), rule, template, terminal, other
        self.frames = [_Frame("")]
        self.extra = 0                    # alternatives of helper rules (``x*``, ``x+``)
        self.repeat: list[int] | None = None
        self.name = ""
        self.items = 0                    # items of a terminal other than references
        self.refs: list[str] = []         # terminals a terminal references
        self.uses: list[tuple[str, bool]] = []  # templates a template uses, and if it grows
        self.prev = ""
        self.params: set[str] = set()     # a template's parameters

    def check(self) -> None:
        pending = False                   # a newline ended the line: does a '|' continue it?
        for m in _TOKEN.finditer(self.text):
            tok = m.group()
            c = tok[0]
            if c == "\n":
                pending = True
                continue
            if c == "#" or c == "\\" or tok.startswith("//"):
                continue
            if pending:
                pending = False
                if tok != "|":
                    self._end()
                    self._reset(m.start())
            self._feed(tok, m.start())
        self._end()
        self._check_terminals()
        self._check_templates()

    def _feed(self, tok: str, pos: int) -> None:
        if self.kind:
            self._body(tok, pos)
        else:
            self._head(tok)
        self.prev = tok

    def _head(self, tok: str) -> None:
        if not self.head and tok in _DIRECTIVES:
            self.kind = "other"
        elif tok == ":":
            names = [t for t in self.head if t[0].isalpha() or t[0] == "_"]
            if not names:
                self.kind = "other"
                return
            name = names[0].lstrip("_")
            self.name = names[0]
            if name[:1].isupper():
                self.kind = "terminal"
            else:
                self.kind = "template" if "{" in self.head else "rule"
            self.params = set(names[1:])
        elif tok != "%override":
            self.head.append(tok)

    def _body(self, tok: str, pos: int) -> None:
        if self.repeat is not None:
            if tok.isdigit():
                self.repeat.append(int(tok))
                return
            if tok == "..":
                return
            self._apply_repeat()
        f = self.frames[-1]
        c = tok[0]
        if c in _OPEN:
            if len(self.frames) > MAX_NESTING:
                raise self._error(GrammarError, f"groups nested deeper than {MAX_NESTING}", pos)
            named = c == "{" and (self.prev[:1].isalpha() or self.prev[:1] == "_")
            self.frames.append(_Frame(c, self.prev if named else ""))
        elif c in ")]}":
            if len(self.frames) > 1 and _OPEN[f.opener] == c:
                self.frames.pop()
                if f.callee and self.kind == "template":
                    self.uses.append((f.callee, f.grows))
                self._item(1 if c == "}" else f.total + f.product * f.last + (c == "]"))
        elif c == "|":
            f.total = min(self.cap, f.total + f.product * f.last)
            f.product = f.last = 1
        elif c == "?":
            f.last = min(self.cap, f.last + 1)
        elif c == "*" or c == "+":
            self.extra = min(self.cap, self.extra + 2 * f.last)
            f.last = 2 if c == "*" else 1
        elif c == "~":
            self.repeat = []
        elif c == '"' or c == "/":
            self._item(1)
            self.items += 1
        elif c.isalpha() or c == "_":
            self._item(1)
            if self.kind == "terminal" and tok.lstrip("_")[:1].isupper():
                self.refs.append(tok)
            elif self.kind == "template" and tok in self.params:
                uses = [g for g in self.frames if g.callee]
                for g in uses[:-1]:       # the parameter sits inside another template use
                    g.grows = True

    def _item(self, value: int) -> None:
        """A new last item of the current expansion, with ``value`` alternatives."""
        f = self.frames[-1]
        f.product = min(self.cap, f.product * f.last)
        f.last = min(self.cap, value)

    def _apply_repeat(self) -> None:
        counts, self.repeat = self.repeat, None
        if not counts:
            return
        f = self.frames[-1]
        lo, hi = counts[0], counts[-1]
        if hi >= _REPEAT_INLINE:      # Lark builds helper rules instead
            self.extra = min(self.cap, self.extra + 2 * f.last)
            f.last = 1
            return
        total, power = 0, 1
        for k in range(hi + 1):
            if k >= lo:
                total = min(self.cap, total + power)
            power = min(self.cap, power * f.last)
        f.last = max(total, 1)

    def _end(self) -> None:
        if self.repeat is not None:
            self._apply_repeat()
        while len(self.frames) > 1:       # unclosed groups: Lark reports them
            f = self.frames.pop()
            self._item(min(self.cap, f.total + f.product * f.last))
        f = self.frames[0]
        if self.kind == "rule":
            count = min(self.cap, f.total + f.product * f.last + self.extra)
            self.alternatives += count
            if self.alternatives > self.max_rules:
                line, _ = where(self.text, self.start)
                raise self._rules_error(
                    f"rule {self.name!r} (line {line}) expands to more than max_rules="
                    f"{self.max_rules} alternatives" if count > self.max_rules else
                    f"the grammar defines more than max_rules={self.max_rules} alternatives by "
                    f"line {line}")
        elif self.kind == "terminal":
            self.terminals[self.name] = (self.start, self.items, self.refs)
        elif self.kind == "template":
            self.templates[self.name] = (self.start, self.uses)

    # -- terminals ------------------------------------------------------------------------
    def _check_terminals(self) -> None:
        """Depth and inlined size of every terminal (references followed without recursion;
        a cycle is left for Lark to report)."""
        terms = self.terminals
        depth: dict[str, int] = {}
        size: dict[str, int] = {}
        total = 0
        for root in terms:
            if root in depth:
                continue
            path = [(root, iter(terms[root][2]))]
            on_path = {root}
            while path:
                name, refs = path[-1]
                for r in refs:
                    if r in terms and r not in depth and r not in on_path:
                        if len(path) >= MAX_TERMINAL_DEPTH:
                            raise self._depth_error(path[0][0])
                        path.append((r, iter(terms[r][2])))
                        on_path.add(r)
                        break
                else:
                    path.pop()
                    on_path.discard(name)
                    pos, items, all_refs = terms[name]
                    depth[name] = 1 + max((depth.get(r, 0) for r in all_refs), default=0)
                    if depth[name] > MAX_TERMINAL_DEPTH:
                        raise self._depth_error(name)
                    inlined = sum(size.get(r, 1) for r in all_refs)
                    size[name] = min(MAX_INLINED + 1, items + inlined)
                    total += inlined
                    if total > MAX_INLINED:
                        raise self._error(LimitExceededError, f"terminal {name}: Lark would copy "
                                          f"more than {MAX_INLINED} items of referenced "
                                          "terminals into the terminals using them", pos)

    # -- templates ------------------------------------------------------------------------
    def _check_templates(self) -> None:
        """Refuse a template that, through a cycle of template uses, wraps one of its
        parameters in another template use: Lark would instantiate it without end."""
        graph = {name: [u for u, _ in uses] for name, (_, uses) in self.templates.items()}
        component = strong_components(graph)
        for name, (pos, uses) in self.templates.items():
            for used, grows in uses:
                if grows and component.get(used) == component[name]:
                    raise self._error(GrammarError, f"template {name!r} uses itself with ever "
                                      "larger arguments (a parameter inside another template "
                                      "use), so it has no finite expansion", pos)

    # -- errors ---------------------------------------------------------------------------
    def _error(self, kind: type, message: str, pos: int) -> Exception:
        line, column = where(self.text, pos)
        if self.source:
            return kind(f"{self.source}: {message} (line {line}, column {column})")
        if kind is LimitExceededError:
            return kind(f"{message} (line {line}, column {column})")
        return kind(message, line=line, column=column)

    def _depth_error(self, name: str) -> GrammarError:
        return self._error(GrammarError, f"terminal {name} references terminals nested deeper "
                           f"than {MAX_TERMINAL_DEPTH}", self.terminals[name][0])

    def _rules_error(self, message: str) -> LimitExceededError:
        source = f"{self.source}: " if self.source else ""
        return LimitExceededError(f"{source}{message} (Lark's expansion of optional and "
                                  "repeated items included; pass a larger max_rules to "
                                  "Grammar.from_lark and to compile_grammar)")


def strong_components(graph: dict[str, list[str]]) -> dict[str, int]:
    """Strongly connected component of every node of ``graph`` (Tarjan's algorithm without
    recursion); nodes only named as successors get no component."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    component: dict[str, int] = {}
    stack: list[str] = []
    for root in graph:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        work = [(root, iter(graph[root]))]
        while work:
            v, successors = work[-1]
            for w in successors:
                if w not in graph:
                    continue
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    work.append((w, iter(graph[w])))
                    break
                if w not in component:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    u = work[-1][0]
                    low[u] = min(low[u], low[v])
                if low[v] == index[v]:
                    while True:
                        w = stack.pop()
                        component[w] = index[v]
                        if w == v:
                            break
    return component
