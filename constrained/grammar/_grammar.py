"""The one grammar representation every front-end produces: rules over regular terminals."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..gc_untrack import untrack_all

if TYPE_CHECKING:
    from ..automata.byte_dfa import ByteDFA


@dataclass(frozen=True)
class TokenRef:
    """A token-level item of a grammar: special tokens named by text (``<think>``) or by id
    (``<[151667]>``); ``negated``: any one token but those (and but end-of-sequence tokens).

    Names are resolved against a vocabulary when the grammar is compiled; ``line`` and
    ``column`` place the reference in the grammar text for errors."""

    names: tuple[str, ...] = ()
    ids: tuple[int, ...] = ()
    negated: bool = False
    line: int | None = field(default=None, compare=False)
    column: int | None = field(default=None, compare=False)

    @property
    def text(self) -> str:
        """The reference as a grammar would write it."""
        items = [*self.names, *(f"<[{i}]>" for i in self.ids)]
        body = "|".join(items)
        return f"!{body}" if self.negated else body


@dataclass(frozen=True)
class RegionBudget:
    """At most ``max_tokens`` tokens after ``begin`` (which opens the output) until ``end``
    closes the region, the end included (a reasoning block: ``<think>`` ... ``</think>``),
    enforced by the decode loop (constrained.decoding.region_budget). ``end_is_token``: the
    grammar reads ``end`` as one special token (else as text)."""

    begin: str
    end: str
    max_tokens: int
    end_is_token: bool = False


@dataclass(frozen=True)
class Terminal:
    """A regular terminal: ``pattern`` is a Python-``re`` regex over text (full match).

    ``exclude`` lists regexes whose full matches are not lexemes of this terminal (a language
    difference, e.g. JSON keys matching none of a schema's patternProperties). ``automaton`` is
    the byte DFA of ``pattern`` when a front-end built it directly (faster than reading the
    regex); it must be that DFA, and it takes no part in comparisons. ``tokens``: the terminal
    is a token-level item (special tokens, see TokenRef), resolved when compiled; ``pattern``
    then only describes it."""

    name: str
    pattern: str
    priority: int = 0
    exclude: tuple[str, ...] = ()
    automaton: "ByteDFA | None" = field(default=None, compare=False, repr=False)
    tokens: TokenRef | None = None

    def __post_init__(self) -> None:
        untrack_all(self)       # text, an automaton, a token reference: no cycle

    @classmethod
    def _plain(cls, name: str, pattern: str, exclude: tuple[str, ...] = (),
               automaton: "ByteDFA | None" = None) -> "Terminal":
        """``Terminal(name, pattern, exclude=exclude, automaton=automaton)``, made without the
        frozen class's checked assignment per field (front-ends make thousands)."""
        t = object.__new__(cls)
        t.__dict__.update(name=name, pattern=pattern, priority=0, exclude=exclude,
                          automaton=automaton, tokens=None)
        untrack_all(t)
        return t


@dataclass(frozen=True)
class Grammar:
    """Rules over terminals, as a front-end produced them.

    ``rules`` maps a rule name to its alternatives; each alternative is a tuple of symbol names,
    each naming a rule or a terminal. ``ignore`` lists terminals that may appear between any two
    terminals (Lark's %ignore). ``source`` says which front-end made it ("regex", "lark", ...).
    ``distinct_keys``: the sentences are JSON texts, and one whose objects repeat a key
    (compared decoded) is not a sentence; the grammar's matchers enforce it
    (constrained.cfg.distinct_strings), so rules need not track which keys were written.
    ``distinct_arrays``: terminals that open JSON arrays whose items are strings that must be
    distinct (compared decoded); enforced the same way.
    ``max_ignored_whitespace``: a run of ignored whitespace (an ignored terminal of the form
    ``[chars]+``, whitespace chars only) holds at most this many bytes (None: no bound), so a
    model cannot fill its budget with blank lines.
    """

    start: str
    rules: dict[str, tuple[tuple[str, ...], ...]]
    terminals: dict[str, Terminal]
    ignore: tuple[str, ...] = ()
    source: str = ""
    text: str = field(default="", compare=False)
    distinct_keys: bool = False
    distinct_arrays: tuple[str, ...] = ()
    max_ignored_whitespace: int | None = None
    budgets: tuple[RegionBudget, ...] = ()

    @classmethod
    def from_regex(cls, pattern: str) -> "Grammar":
        """A grammar whose sentences are the full matches of one regex (Python ``re`` syntax)."""
        from .regex_frontend import grammar_from_regex
        return grammar_from_regex(cls, pattern)

    @classmethod
    def from_lark(cls, text: str, start: str = "start", *, import_paths=(), path=None,
                  allow_outside_imports: bool = False, max_rules: int = 100_000,
                  max_grammar_bytes: int = 4_000_000,
                  max_ignored_whitespace: int | None = 256) -> "Grammar":
        """A grammar from Lark EBNF text, meaning what Lark's Earley parser accepts.

        ``path`` (the file the text came from) anchors relative %imports; imports outside
        that folder and ``import_paths`` are refused unless ``allow_outside_imports``.
        Texts (and imported files) longer than ``max_grammar_bytes``, or defining more than
        ``max_rules`` alternatives once Lark expands optional and repeated items, raise
        LimitExceededError before Lark reads them; so do terminals inlining more than 20,000
        items of the terminals they use. Groups nested deeper than 100 and terminal references
        deeper than 50 raise GrammarError. ``max_ignored_whitespace``: a run of %ignore'd
        whitespace (blank lines, indentation) holds at most this many bytes; None lifts the
        bound (Lark itself has none).
        """
        from .lark_frontend import grammar_from_lark
        if max_ignored_whitespace is not None and (
                isinstance(max_ignored_whitespace, bool)
                or not isinstance(max_ignored_whitespace, int) or max_ignored_whitespace < 1):
            raise ValueError(f"max_ignored_whitespace must be an int >= 1 or None, not "
                             f"{max_ignored_whitespace!r}")
        grammar = grammar_from_lark(cls, text, start, import_paths=import_paths, path=path,
                                    allow_outside_imports=allow_outside_imports,
                                    max_rules=max_rules, max_grammar_bytes=max_grammar_bytes)
        if grammar.ignore and max_ignored_whitespace is not None:
            from dataclasses import replace
            grammar = replace(grammar, max_ignored_whitespace=max_ignored_whitespace)
        return grammar

    @classmethod
    def from_gbnf(cls, text: str, start: str = "root", *, max_rules: int = 100_000,
                  max_grammar_bytes: int = 4_000_000) -> "Grammar":
        """A grammar from llama.cpp GBNF text (character level; the whole text matches start).

        Texts longer than ``max_grammar_bytes`` or defining more than ``max_rules``
        alternatives (helper rules included) raise LimitExceededError.
        """
        from .gbnf_frontend import grammar_from_gbnf
        return grammar_from_gbnf(cls, text, start, max_rules=max_rules,
                                 max_grammar_bytes=max_grammar_bytes)

    @classmethod
    def from_file(cls, path, **kwargs) -> "Grammar":
        """A grammar from a .lark, .gbnf or .json (JSON Schema, or a structural tag whose
        top-level type is "structural_tag") file, chosen by extension."""
        from .file_frontend import grammar_from_file
        return grammar_from_file(cls, path, **kwargs)

    @classmethod
    def from_json_schema(cls, schema, **options) -> "Grammar":
        """A grammar of the JSON texts valid under a JSON Schema (dict, bool or JSON text).

        Options are constrained.grammar.json_schema.SchemaOptions fields (whitespace, separators,
        lenient, ...); the result carries ``dropped`` (what lenient mode did not enforce).
        """
        from .json_schema import schema_to_grammar
        return schema_to_grammar(schema, **options)

    @classmethod
    def from_structural_tag(cls, spec, vocab=None) -> "Grammar":
        """A grammar from a structural tag spec (dict or JSON text: free text, tags, triggers,
        tool calls; see constrained.grammar.structural_tag). With ``vocab``, literal text
        that is a special token's text means that token."""
        from .structural_tag import structural_tag_to_grammar
        return structural_tag_to_grammar(spec, vocab)

    @classmethod
    def from_pydantic(cls, model, **options) -> "Grammar":
        """A grammar of the JSON texts valid for a Pydantic model class (via its JSON Schema)."""
        from .json_schema import pydantic_to_grammar
        return pydantic_to_grammar(model, **options)

    @property
    def regex(self) -> str | None:
        """The single regex this grammar is, when it is one regular terminal and nothing else."""
        if (not self.ignore and len(self.terminals) == 1
                and next(iter(self.terminals.values())).tokens is None and len(self.rules) == 1
                and self.rules.get(self.start) == ((next(iter(self.terminals)),),)
                and not next(iter(self.terminals.values())).exclude):
            return next(iter(self.terminals.values())).pattern
        return None

    @property
    def has_token_refs(self) -> bool:
        """Whether some terminal is a token-level item (a special token or its negation)."""
        return any(t.tokens is not None for t in self.terminals.values())

    @property
    def key(self) -> str:
        """Stable text identifying the grammar's meaning, for cache keys."""
        rules = ";".join(f"{name}:{'|'.join(' '.join(a) for a in alts)}"
                         for name, alts in sorted(self.rules.items()))
        terms = ";".join(f"{t.name}={t.pattern!r}@{t.priority}"
                         + "".join(f"-{e!r}" for e in t.exclude)
                         + (f"~{t.tokens!r}" if t.tokens is not None else "")
                         for t in sorted(self.terminals.values(), key=lambda t: t.name))
        return (f"start={self.start}|{rules}|{terms}|ignore={','.join(self.ignore)}"
                + ("|distinct_keys" if self.distinct_keys else "")
                + (f"|max_ignored_whitespace={self.max_ignored_whitespace}"
                   if self.max_ignored_whitespace is not None else "")
                + "".join(f"|distinct_array={n}" for n in self.distinct_arrays)
                + "".join(f"|budget={b!r}" for b in self.budgets))
