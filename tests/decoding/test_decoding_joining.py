"""Continuous batching: rows that join a running batch (and rows that leave it) decode exactly
what they decode alone, and a failing row does not stop the others."""
import pytest

from constrained import Grammar, generate
from constrained.compiler import compile_grammar
from constrained.decoding.loop import DecodeOptions, Decoder, build_row
from constrained.decoding.setup import resolve_sampling

HOT = {"temperature": 1.0, "top_k": 0, "top_p": 1.0, "min_p": 0.0}
CASES = [  # (prompt, grammar, seed, max_new_tokens)
    ([1, 2, 3], Grammar.from_regex(r'\{"a": [0-9]{1,3}, "b": "[a-z]{0,8}"\}'), 11, 24),
    ([5, 6], None, 12, 9),
    ([7, 8, 9, 10, 11], Grammar.from_file("grammars/json.lark"), 13, 30),
    ([4], Grammar.from_regex(r"[0-9]{2,12}"), 14, 16),
    ([9, 9, 9, 9, 9, 9, 9, 9, 9], Grammar.from_regex(r"(ab|abc)+"), 15, 12),
]


@pytest.fixture(autouse=True)
def _single_thread(one_torch_thread):
    yield


def _row(vocab, i):
    prompt, grammar, seed, max_new = CASES[i]
    compiled = compile_grammar(grammar, vocab) if grammar is not None else None
    return build_row(vocab, i, prompt, compiled, resolve_sampling(HOT, seed), (),
                     options=DecodeOptions(max_new_tokens=max_new))


@pytest.mark.parametrize("join_at", [(0, 0, 0, 0, 0), (0, 1, 3, 3, 7), (0, 5, 2, 9, 20)])
def test_rows_joining_later_decode_what_they_decode_alone(tiny, join_at):
    model, vocab = tiny
    alone = [generate(model, vocab, p, grammar=g, sampling=HOT, seed=s, max_new_tokens=m)
             for p, g, s, m in CASES]
    decoder = Decoder(model, vocab, [], DecodeOptions(), pad_token_id=256)
    results, step = {}, 0
    waiting = sorted(range(len(CASES)), key=lambda i: join_at[i])
    cumulative = 0
    while waiting or decoder.busy:
        while waiting and join_at[waiting[0]] <= cumulative:
            decoder.admit([_row(vocab, waiting.pop(0))])
        _, finished = decoder.step()
        for row in finished:
            results[row.index] = row.result()
        cumulative += 1
        step += 1
        assert step < 500
    for i, want in enumerate(alone):
        assert results[i].token_ids == want.token_ids, i
        assert results[i].text == want.text and results[i].finish_reason == want.finish_reason


def test_a_failing_row_leaves_the_others_decoding(tiny):
    model, vocab = tiny
    from constrained.decoding.result import FINISH_ERROR
    from constrained.errors import BudgetError
    decoder = Decoder(model, vocab, [], DecodeOptions(), pad_token_id=256, isolate_errors=True)
    ok = _row(vocab, 0)
    tight = build_row(vocab, 7, [1], compile_grammar(Grammar.from_regex("[a-z]{20}"), vocab),
                      resolve_sampling(HOT, 1), (),
                      options=DecodeOptions(max_new_tokens=5, complete_within_budget=True))
    decoder.admit([ok, tight])
    done = {}
    while decoder.busy:
        for row in decoder.step()[1]:
            done[row.index] = row
    assert done[7].finish == FINISH_ERROR and isinstance(done[7].error, BudgetError)
    want = generate(model, vocab, CASES[0][0], grammar=CASES[0][1], sampling=HOT,
                    seed=CASES[0][2], max_new_tokens=CASES[0][3])
    assert done[0].result().token_ids == want.token_ids


def test_a_cancelled_row_leaves_and_frees_its_cache_columns(tiny):
    model, vocab = tiny
    decoder = Decoder(model, vocab, [], DecodeOptions(), pad_token_id=256)
    a, b = _row(vocab, 2), _row(vocab, 1)
    decoder.admit([a, b])
    decoder.step()
    decoder.step()
    a.cancelled = True
    _, finished = decoder.step()
    assert [r.index for r in finished] == [2] and a.finish == "cancelled"
    while decoder.busy:
        decoder.step()
    assert b.finish is not None and decoder.kv.cache is None   # empty batch: cache released


def test_a_row_whose_bias_bans_every_allowed_token_fails_alone(tiny):
    model, vocab = tiny
    from samplers import SamplerError
    decoder = Decoder(model, vocab, [], DecodeOptions(), pad_token_id=256, isolate_errors=True)
    params = resolve_sampling({**HOT, "logit_bias": {d: float("-inf") for d in range(48, 58)}}, 1)
    banned = build_row(vocab, 9, [1, 2], compile_grammar(Grammar.from_regex("[0-9]"), vocab),
                       params, (), options=DecodeOptions(max_new_tokens=4))
    ok = _row(vocab, 3)
    decoder.admit([banned, ok])
    done = {}
    while decoder.busy:
        for row in decoder.step()[1]:
            done[row.index] = row
    assert done[9].finish == "error" and isinstance(done[9].error, SamplerError)
    assert done[3].error is None and done[3].finish in ("stop", "length")
