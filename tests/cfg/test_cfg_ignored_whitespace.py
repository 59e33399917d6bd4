"""Runs of %ignore'd whitespace are bounded (Grammar.from_lark(max_ignored_whitespace=...)):
after a complete statement a model cannot fill its budget with blank lines."""
import pytest

from constrained import Grammar, Vocabulary, compile_grammar
from constrained.bitmask import allocate_token_bitmask, unpack_bitmask

TEXT = r'''
start: stmt+
stmt: NAME "=" NAME ";"
NAME: /[a-z]+/
%import common.WS
%ignore WS
%ignore /#[^\n]*/
'''
TOKENS = [bytes([i]) for i in range(256)] + [b"\n\n", b"    ", b"a=b;", b"<eos>"]
EOS = len(TOKENS) - 1
VOCAB = Vocabulary.from_token_bytes(TOKENS, eos_token_ids=[EOS], special_token_ids=[EOS])


def _allowed(m):
    bm = allocate_token_bitmask(VOCAB.size)
    m.fill_next_token_bitmask(bm)
    return unpack_bitmask(bm, VOCAB.size)


def test_a_whitespace_run_stops_at_the_bound():
    cg = compile_grammar(Grammar.from_lark(TEXT, max_ignored_whitespace=8), VOCAB)
    m = cg.matcher()
    assert m.accept_bytes(b"a=b;" + b"\n" * 6)
    allowed = _allowed(m)
    assert allowed[TOKENS.index(b"\n\n")] and not allowed[TOKENS.index(b"    ")]
    assert m.accept_bytes(b"\n\n")
    allowed = _allowed(m)
    assert not allowed[ord("\n")] and not allowed[ord(" ")] and allowed[EOS]
    assert allowed[ord("c")] and allowed[ord("#")]
    # a comment ends the run: whitespace may follow it again
    assert m.accept_bytes(b"#note") and m.accept_bytes(b"\n" * 8) and not m.accept_bytes(b" ")
    assert m.accept_bytes(b"c=d;") and m.is_accepting()


def test_masks_agree_with_stepping_every_token():
    cg = compile_grammar(Grammar.from_lark(TEXT, max_ignored_whitespace=8), VOCAB)
    for text in (b"a=b;", b"a=b;   ", b"a=b;" + b" " * 8, b"a = b;\n#x\n   ", b"  a=b;  "):
        m = cg.matcher()
        assert m.accept_bytes(text)
        allowed = _allowed(m)
        for t in range(EOS):
            ok = m.accept_token(t)
            if ok:
                m.rollback(1)
            assert bool(allowed[t]) == ok, (text, TOKENS[t])
        assert bool(allowed[EOS]) == m.is_accepting()


def test_the_bound_is_on_by_default_and_can_be_lifted():
    default = compile_grammar(Grammar.from_lark(TEXT), VOCAB).matcher()
    assert default.accept_bytes(b"a=b;" + b"\n" * 256) and not default.accept_bytes(b"\n")
    free = compile_grammar(Grammar.from_lark(TEXT, max_ignored_whitespace=None), VOCAB).matcher()
    assert free.accept_bytes(b"a=b;" + b"\n" * 2000) and free.is_accepting()
    assert Grammar.from_lark(TEXT).key != Grammar.from_lark(TEXT, max_ignored_whitespace=None).key
    with pytest.raises(ValueError, match="max_ignored_whitespace"):
        Grammar.from_lark(TEXT, max_ignored_whitespace=0)


def test_single_character_ignores_are_not_runs():
    """``%ignore " "``: each space is its own lexeme (greedy lexing cannot merge them), so
    there is no run to bound and two spaces stay valid."""
    g = Grammar.from_lark('start: "a" "b"\n%ignore " "\n', max_ignored_whitespace=1)
    m = compile_grammar(g, VOCAB).matcher()
    assert m.accept_bytes(b"a    b   ") and m.is_accepting()


def test_a_lexeme_both_expected_and_ignored_may_be_either():
    # after "a", a space is the expected SP of the first alternative and ignorable before the
    # "c" of the second: the column after it holds both
    text = 'start: "a" SP "b" | "a" "c"\nSP: " "\n%ignore SP\n'
    cg = compile_grammar(Grammar.from_lark(text), VOCAB)
    m = cg.matcher()
    assert m.accept_bytes(b"a ")
    allowed = _allowed(m)
    assert allowed[ord("b")] and allowed[ord("c")] and allowed[ord(" ")]
    assert not allowed[ord("a")] and not allowed[EOS]
    for good in (b"a b", b"a c", b"ac", b"a  b", b" a c"):
        m = cg.matcher()
        assert m.accept_bytes(good) and m.is_accepting(), good
    m = cg.matcher()
    assert not m.accept_bytes(b"ab")
