"""GBNF front-end: structure of the representation and errors with line and column."""
import interegular
import pytest

from constrained.errors import GrammarError
from constrained.grammar import Grammar


def _one_char_language(pattern: str) -> bool:
    fsm = interegular.parse_pattern(pattern).to_fsm()
    return not fsm.accepts("") and not any(fsm.accepts(s) for s in ("aa", "\n\n", "0a"))


def test_terminals_are_single_characters_and_shared():
    g = Grammar.from_gbnf('root ::= "aba" [a] [^a] . [a-c] [cba]\n')
    assert g.source == "gbnf" and g.start == "root"
    for t in g.terminals.values():
        assert _one_char_language(t.pattern), t
    # "a" literal and [a] share one terminal; [a-c] and [cba] too
    assert len(g.terminals) == 5
    (alt,) = g.rules["root"]
    assert alt[0] == alt[2] == alt[3]
    assert alt[-1] == alt[-2]


def test_terminal_patterns_match_what_they_say():
    g = Grammar.from_gbnf('root ::= [^"\\\\\\x00-\\x1F] "\\u00e9" . [\\]-]\n')
    pats = [g.terminals[s].pattern for s in g.rules["root"][0]]
    fsms = [interegular.parse_pattern(p).to_fsm() for p in pats]
    assert fsms[0].accepts("a") and fsms[0].accepts("\u20ac") and not fsms[0].accepts('"')
    assert not fsms[0].accepts("\\") and not fsms[0].accepts("\x1f")
    assert fsms[1].accepts("\u00e9") and not fsms[1].accepts("e")
    assert fsms[2].accepts("\n") and fsms[2].accepts("\U0001F600")
    assert fsms[3].accepts("]") and fsms[3].accepts("-") and not fsms[3].accepts("a")


def test_bounded_repetition_stays_linear():
    g = Grammar.from_gbnf('root ::= ("ab" | "c"){0,1000}\n')
    assert sum(len(a) for alts in g.rules.values() for a in alts) < 5000
    g = Grammar.from_gbnf('root ::= (("x"{100}){100}){10}\n')
    assert sum(len(a) for alts in g.rules.values() for a in alts) < 1000


def test_custom_start_and_hygiene():
    g = Grammar.from_gbnf('doc ::= "a" | bad\nbad ::= bad "x"\nunused ::= "u"\n', start="doc")
    assert g.start == "doc"
    assert "bad" not in g.rules and "unused" not in g.rules
    assert g.rules["doc"] == (("CHAR_0061",),)


def test_names_cannot_collide_with_generated_ones():
    g = Grammar.from_gbnf('root ::= ("a")* root-1\nroot-1 ::= "b"\n')
    assert "root-1" in g.rules
    assert not set(g.rules) & set(g.terminals)


@pytest.mark.parametrize("text, line, column, fragment", [
    ('root ::= "a"\nfoo = "b"\n', 2, 5, "::="),
    ('root ::= "a" x\n', 1, 14, "undefined rule 'x'"),
    ('root ::= "a\n', 2, 1, "unterminated string"),
    ('root ::= "\\q"\n', 1, 11, "unknown escape"),
    ('root ::= "\\x4"\n', 1, 11, "hex digits"),
    ('root ::= []\n', 1, 10, "empty character class"),
    ('root ::= [z-a]\n', 1, 11, "reversed"),
    ('root ::= "a"\nroot ::= "b"\n', 2, 1, "already defined on line 1"),
    ('root ::= * "a"\n', 1, 10, "expecting an item"),
    ('root ::= "a"{,3}\n', 1, 14, "expecting an integer"),
    ('root ::= "a"{3,1}\n', 1, 13, "reversed"),
    ('root ::= "a"{2001}\n', 1, 14, "exceeds the limit"),
    ('root ::= <think\n', 1, 10, "token reference"),
    ('root ::= "a"\n  | "b"\n', 2, 3, "end the line with '|'"),
    ('root ::= ("a" | "b"\n', 2, 1, "expecting ')'"),
    ('root ::= "a" )\n', 1, 14, "expecting newline"),
    ('root ::= [ab\n', 1, 10, "unterminated character class"),
    ('root ::= ""*\n', 1, 12, "expecting an item"),
])
def test_errors_carry_line_and_column(text, line, column, fragment):
    with pytest.raises(GrammarError) as info:
        Grammar.from_gbnf(text)
    err = info.value
    assert fragment in str(err)
    assert (err.line, err.column) == (line, column)


def test_missing_root_and_empty_language():
    with pytest.raises(GrammarError, match="no rule named 'root'"):
        Grammar.from_gbnf('start ::= "a"\n')
    with pytest.raises(GrammarError, match="language is empty"):
        Grammar.from_gbnf('root ::= root "a"\n')


def test_comments_and_blank_lines_only_is_missing_root():
    with pytest.raises(GrammarError, match="no rule named"):
        Grammar.from_gbnf("# nothing here\n\n")


def test_type_error_for_bytes():
    with pytest.raises(TypeError):
        Grammar.from_gbnf(b'root ::= "a"')
