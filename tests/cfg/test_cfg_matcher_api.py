"""Matcher API of the CFG engine: rollback, bitmask shapes, EOS, forced bytes, errors, limits."""
import gc
import threading
import weakref

import lark
import numpy as np
import pytest
import torch

from cfg_grammars import JSON, KEYWORDS
from cfg_lark import grammar_from_lark_text
from constrained import compile_grammar
from constrained.bitmask import allowed_token_ids
from constrained.cfg import CompiledCFG, compile_cfg
from constrained.errors import DeadEndError, GrammarError, LimitExceededError
from constrained.grammar import Grammar, Terminal
from constrained.vocabulary import Vocabulary

TOKENS = [bytes([b]) for b in range(128)] + [b"true", b"tr", b'{"', b'"}', b"},{", b'": ',
                                              b"\xc3", b"\xa9", b"caf\xc3\xa9"]
VOCAB = Vocabulary.from_token_bytes(TOKENS + [b"<eos>", b"<sp>"], eos_token_ids=[len(TOKENS)],
                                    special_token_ids=[len(TOKENS) + 1],
                                    vocab_size=len(TOKENS) + 40)
EOS = len(TOKENS)
TID = {t: i for i, t in enumerate(TOKENS)}


@pytest.fixture(scope="module")
def json_cg():
    return compile_cfg(grammar_from_lark_text(JSON), VOCAB)


def _mask(m):
    words = np.zeros((VOCAB.size + 31) // 32, dtype=np.int32)
    m.fill_next_token_bitmask(words)
    return words


def test_dispatch_and_type(json_cg):
    cg = compile_grammar(grammar_from_lark_text(JSON), VOCAB)
    assert isinstance(cg, CompiledCFG) and cg.vocab is VOCAB
    assert isinstance(json_cg.matcher().compiled, CompiledCFG)


def test_rollback_restores_exact_state(json_cg):
    m = json_cg.matcher()
    before = _mask(m)
    seq = [TID[b'{"'], TID[b"a"], TID[b'": '], TID[b"tr"]]
    masks = []
    for t in seq:
        masks.append(_mask(m))
        assert m.accept_token(t)
    assert m.n_steps == 4
    for k in range(4, 0, -1):
        m.rollback(1)
        assert np.array_equal(_mask(m), masks[k - 1])
    assert np.array_equal(_mask(m), before)
    with pytest.raises(ValueError):
        m.rollback(1)


def test_refused_token_leaves_state_unchanged(json_cg):
    m = json_cg.matcher()
    assert m.accept_token(TID[b"["])
    before = _mask(m)
    assert not m.accept_token(TID[b"}"])
    assert not m.accept_token(EOS)
    assert not m.accept_token(EOS + 1)          # special token
    assert not m.accept_token(EOS + 5)          # padding id
    assert not m.accept_token(-1)
    assert np.array_equal(_mask(m), before)
    assert m.n_steps == 1


def test_two_dimensional_torch_bitmask_and_padding(json_cg):
    m = json_cg.matcher()
    bm = torch.full((3, (VOCAB.size + 31) // 32 + 2), -1, dtype=torch.int32)
    m.fill_next_token_bitmask(bm, index=1)
    ids = allowed_token_ids(bm[1, :(VOCAB.size + 31) // 32].numpy(), VOCAB.size)
    assert TID[b"{"] in ids and TID[b"true"] in ids and TID[b"}"] not in ids
    assert EOS not in ids and EOS + 1 not in ids and not any(i >= len(TOKENS) for i in ids)
    assert bm[1, -2:].tolist() == [0, 0]
    assert bm[0].tolist() == [-1] * bm.shape[1]


def test_eos_only_when_complete_then_terminated(json_cg):
    m = json_cg.matcher()
    assert m.accept_string('{"a": 1')
    assert EOS not in allowed_token_ids(_mask(m), VOCAB.size)
    assert m.accept_token(TID[b"}"])
    assert m.is_accepting() and not m.is_terminated()
    assert EOS in allowed_token_ids(_mask(m), VOCAB.size)
    assert m.accept_token(EOS)
    assert m.is_terminated() and m.is_accepting()
    assert list(allowed_token_ids(_mask(m), VOCAB.size)) == [EOS]
    assert not m.accept_token(TID[b" "])
    m.reset()
    assert m.n_steps == 0 and not m.is_accepting()


def test_partial_utf8_tokens(json_cg):
    m = json_cg.matcher()
    assert m.accept_string('"caf')
    ids = set(allowed_token_ids(_mask(m), VOCAB.size))
    assert TID[b"\xc3"] in ids and TID[b"\xa9"] not in ids
    assert m.accept_token(TID[b"\xc3"])
    ids = set(allowed_token_ids(_mask(m), VOCAB.size))
    assert ids == {TID[b"\xa9"]}


def test_forced_bytes_and_jump_forward(json_cg):
    m = json_cg.matcher()
    assert m.accept_string('{"a": t')
    assert m.forced_bytes() == b"rue"
    assert m.find_jump_forward_string() == "rue"
    m2 = json_cg.matcher()
    assert m2.forced_bytes() == b""


def test_dead_end_is_an_error():
    g = grammar_from_lark_text('start: "ab" | "ac"')
    vocab = Vocabulary.from_token_bytes([b"a", b"x", b"<e>"], eos_token_ids=[2])
    m = compile_cfg(g, vocab).matcher()
    assert m.accept_token(0)
    with pytest.raises(DeadEndError):
        m.fill_next_token_bitmask(np.zeros(1, dtype=np.int32))


def test_greedy_lexing_consequence():
    """Lexemes are greedy: a+ followed by "a" can never be matched, though Lark's
    dynamic_complete lexer (every split) accepts "aa"; the default dynamic lexer agrees with us."""
    text = 'start: A "a"\nA: /a+/'
    cg = compile_cfg(grammar_from_lark_text(text), VOCAB)
    for n in range(1, 6):
        m = cg.matcher()
        assert m.accept_string("a" * n)
        assert not m.is_accepting()
    lark.Lark(text, parser="earley", lexer="dynamic_complete").parse("aa")
    with pytest.raises(lark.exceptions.LarkError):
        lark.Lark(text, parser="earley", lexer="dynamic").parse("aa")
    # a lexeme is never cut short to let a shorter terminal match: "ab" "ce" is refused
    cg2 = compile_cfg(grammar_from_lark_text(
        'start: X | Y Z\nX: "abcd"\nY: "ab"\nZ: "ce"'), VOCAB)
    m = cg2.matcher()
    assert m.accept_string("abc") and not m.accept_string("e")


def test_keywords_and_identifiers_follow_lark():
    cg = compile_cfg(grammar_from_lark_text(KEYWORDS), VOCAB)
    parser = lark.Lark(KEYWORDS, parser="earley", lexer="dynamic")
    for text in ["if x then y = 1; end", "iffy = x;", "if = 2;", "return if;",
                 "if if then return x; end"]:
        m = cg.matcher()
        ok = m.accept_string(text) and m.is_accepting()
        try:
            parser.parse(text)
            lark_ok = True
        except lark.exceptions.LarkError:
            lark_ok = False
        assert ok == lark_ok, text


def test_limits_and_grammar_errors():
    g = grammar_from_lark_text(JSON)
    with pytest.raises(LimitExceededError):
        compile_cfg(g, VOCAB, max_lexer_states=3).matcher().fill_next_token_bitmask(
            np.zeros((VOCAB.size + 31) // 32, dtype=np.int32))
    with pytest.raises(LimitExceededError):
        compile_cfg(g, VOCAB, max_rules=3)
    with pytest.raises(LimitExceededError):
        compile_cfg(g, VOCAB, max_dfa_states=4)
    empty = Grammar(start="s", rules={"s": (("A", "s"),)}, terminals={"A": Terminal("A", "a")})
    with pytest.raises(GrammarError):
        compile_cfg(empty, VOCAB)
    undefined = Grammar(start="s", rules={"s": (("B",),)}, terminals={"A": Terminal("A", "a")})
    with pytest.raises(GrammarError, match="undefined"):
        compile_cfg(undefined, VOCAB)
    bad = Grammar(start="s", rules={"s": (("A",), ("A", "A"))},
                  terminals={"A": Terminal("A", "(?<=x)a")})
    with pytest.raises(GrammarError, match="terminal A"):
        compile_cfg(bad, VOCAB)
    with pytest.raises(TypeError):
        compile_cfg(g, VOCAB, no_such_option=1)


def test_nullable_terminal_becomes_optional():
    g = Grammar(start="s", rules={"s": (("A", "B"),)},
                terminals={"A": Terminal("A", "x*"), "B": Terminal("B", "y")})
    cg = compile_cfg(g, VOCAB)
    for text, ok in [("y", True), ("xxy", True), ("x", False), ("", False)]:
        m = cg.matcher()
        assert (m.accept_string(text) and m.is_accepting()) == ok, text


def test_shared_compiled_grammar_across_threads(json_cg):
    cg = compile_cfg(grammar_from_lark_text(JSON), VOCAB)
    prefixes = ['{"a": [1, 2', '[true, {"b', '"x', '{"k": null}', "[[[", "-1.5e"]
    results: dict = {}

    def work(k):
        out = []
        for p in prefixes:
            m = cg.matcher()
            assert m.accept_string(p)
            out.append(_mask(m).tobytes())
        results[k] = out

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ref = []
    for p in prefixes:
        m = json_cg.matcher()
        m.accept_string(p)
        ref.append(_mask(m).tobytes())
    assert all(results[k] == ref for k in range(4))


def test_long_generation_keeps_caches_bounded():
    cg = compile_cfg(grammar_from_lark_text(JSON), VOCAB, mask_cache_size=16,
                     table_cache_size=64)
    m = cg.matcher()
    assert m.accept_string("[")
    for i in range(300):
        _mask(m)
        assert m.accept_string(f'{{"k{i}": [{i}, "v"]}}, ')
    assert len(cg.engine._masks) <= 16 and len(cg.engine._nodes) <= 64


def _watch_columns(parser) -> list:
    """Weak references to every column the parser creates from now on (columns are not
    tracked by the garbage collector, so gc.get_objects() does not list them)."""
    refs = []
    intern = parser._intern

    def watched(closed):
        col = intern(closed)
        refs.append(weakref.ref(col))
        return col

    parser._intern = watched
    return refs


def test_parser_states_of_finished_documents_are_freed():
    """Distinct documents keep creating parser states; only a bounded number stay alive."""
    cg = compile_cfg(grammar_from_lark_text(JSON), VOCAB, column_cache_size=64)
    refs = _watch_columns(cg.runtime.parser)
    rng = np.random.default_rng(7)
    for i in range(150):
        m = cg.matcher()
        depth = int(rng.integers(1, 12))
        doc = "".join(rng.choice(["[", '{"k": '], size=depth).tolist())
        assert m.accept_string(doc + "1"), doc
        _mask(m)
    del m
    gc.collect()
    live = sum(r() is not None for r in refs)
    assert len(refs) > 1000 and live <= 64 + 128 + 16, (len(refs), live)


def test_columns_are_untracked_and_freed_with_their_grammar():
    cg = compile_cfg(grammar_from_lark_text(JSON), VOCAB)
    refs = _watch_columns(cg.runtime.parser)
    m = cg.matcher()
    assert m.accept_string('{"a": [1, {"b": null}], "c": "d"')
    _mask(m)
    assert len(refs) > 10 and not any(gc.is_tracked(r()) for r in refs if r() is not None)
    assert any(r() is not None for r in refs)
    del cg, m
    gc.collect()
    assert all(r() is None for r in refs)


def test_masks_without_disk_cache_are_the_same(tmp_path, monkeypatch):
    monkeypatch.setenv("CONSTRAINED_CACHE_DIR", str(tmp_path))
    g = grammar_from_lark_text(JSON)
    first = compile_cfg(g, VOCAB).matcher()
    assert first.accept_string('{"a": [1, "x')
    no_disk = compile_cfg(g, VOCAB, cache=False).matcher()
    assert no_disk.accept_string('{"a": [1, "x')
    assert np.array_equal(_mask(no_disk), _mask(first))
