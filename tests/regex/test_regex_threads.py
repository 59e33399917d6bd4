"""One compiled regex shared by threads: lazily computed masks are the same as sequential ones."""
import threading

import numpy as np

from constrained import Grammar, Vocabulary, compile_grammar
from constrained.bitmask import allocate_token_bitmask

PATTERN = r"(\d{1,3}\.){3}\d{1,3}|[a-f]{2,9}"


def _vocab():
    toks = [str(i).encode() for i in range(300)] + [b".", b"1.", b".2", b"abc", b"de", b"f"]
    return Vocabulary.from_token_bytes(toks + [b"</s>"], eos_token_ids=[len(toks)])


def _trace(cg, ids):
    m, out = cg.matcher(), []
    bm = allocate_token_bitmask(cg.vocab.size, backend="numpy")
    for tid in ids:
        m.fill_next_token_bitmask(bm)
        out.append(bm.copy())
        assert m.accept_token(tid)
    return out


def test_shared_compiled_regex_across_threads():
    vocab = _vocab()
    ids = [192, 300, 168, 300, 1, 301, 42, vocab.n_tokens - 1]
    lazy = compile_grammar(Grammar.from_regex(PATTERN), vocab, cache=False, precompute=False)
    results, errors = [None] * 6, []

    def work(i):
        try:
            results[i] = _trace(lazy, ids)
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    eager = _trace(compile_grammar(Grammar.from_regex(PATTERN), vocab, cache=False,
                                   precompute=True), ids)
    for r in results:
        assert all(np.array_equal(a, b) for a, b in zip(r, eager))
