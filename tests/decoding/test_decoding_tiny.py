"""The decode loop on a tiny random model: validity under sampling, budget, batches, errors."""
import json
import re

import pytest
import torch

from constrained import DecodingError, Grammar, VocabularyError, generate, stream
from constrained.errors import BudgetError
from constrained.compiler import compile_grammar
from constrained.decoding import GrammarLogitsProcessor
from constrained.vocabulary import Vocabulary

HOT = {"temperature": 1.0, "top_k": 0, "top_p": 1.0, "min_p": 0.0}
VERY_HOT = {"temperature": 5.0, "top_k": 0, "top_p": 1.0, "min_p": 0.0}
PATTERN = r'\{"a": [0-9]{1,3}, "b": "[a-zé]{0,8}"\}'
PROMPT = [1, 2, 3]


@pytest.fixture(autouse=True)
def _single_thread(one_torch_thread):
    yield


@pytest.mark.parametrize("sampling", [HOT, VERY_HOT], ids=["t1", "t5"])
def test_decoding_regex_outputs_match_under_sampling(tiny, sampling):
    model, vocab = tiny
    cg = compile_grammar(Grammar.from_regex(PATTERN), vocab)
    for seed in range(4):
        r = generate(model, vocab, PROMPT, grammar=cg, sampling=sampling, seed=seed,
                     max_new_tokens=40)
        assert r.finish_reason == "stop" and r.complete
        assert re.fullmatch(PATTERN, r.text), r.text
        assert vocab.decode(r.token_ids).decode("utf-8") == r.text
        assert r.forced_tokens >= 4  # the fixed keys and punctuation are forced


def test_decoding_forced_tokens_are_fed_without_sampling(tiny):
    model, vocab = tiny
    g = Grammar.from_regex(r'\{"key": "value"\}')
    r = generate(model, vocab, PROMPT, grammar=g, sampling=HOT, seed=0, max_new_tokens=20)
    assert r.text == '{"key": "value"}' and r.finish_reason == "stop"
    assert r.forced_tokens == r.n_tokens + 1  # every text token and the EOS were forced
    assert len(r.timings.steps) == 1          # the forced text went in with the prompt


def test_decoding_json_grammar_with_budget_always_completes(tiny):
    model, vocab = tiny
    g = Grammar.from_file("grammars/json.lark")
    cg = compile_grammar(g, vocab)
    for seed in range(4):
        r = generate(model, vocab, PROMPT, grammar=cg, sampling=VERY_HOT, seed=seed,
                     max_new_tokens=12, complete_within_budget=True)
        assert r.complete and r.finish_reason == "stop", r
        assert r.n_tokens + 1 <= 12
        json.loads(r.text)


def test_decoding_budget_fits_a_completion_shorter_in_tokens_than_the_plan(tiny):
    """The byte-shortest completion ``{"0":0}`` takes 6 tokens here, ``{"0": 0}`` takes 5
    (the vocabulary has ``": ``); keys may be any word, so states differ in the key written.
    A budget of 5 tokens and the end-of-sequence token is feasible and must not be refused."""
    model, vocab = tiny
    schema = {"type": "object", "minProperties": 1,
              "patternProperties": {"^[a-z0-9]+$": {}}, "additionalProperties": False}
    cg = compile_grammar(Grammar.from_json_schema(schema, property_order="any"), vocab)
    for seed in range(3):
        r = generate(model, vocab, PROMPT, grammar=cg, sampling=VERY_HOT, seed=seed,
                     max_new_tokens=6, complete_within_budget=True)
        assert r.complete and r.finish_reason == "stop", r
        assert r.n_tokens <= 5 and len(json.loads(r.text)) >= 1
    with pytest.raises(BudgetError):
        generate(model, vocab, PROMPT, grammar=cg, max_new_tokens=5, complete_within_budget=True)


def test_decoding_budget_steers_regex_to_a_complete_sentence(tiny):
    model, vocab = tiny
    pattern = r'\[[a-z]{1,20}(, [a-z]{1,20}){0,5}\]'
    for seed in range(3):
        r = generate(model, vocab, PROMPT, grammar=Grammar.from_regex(pattern), sampling=HOT,
                     seed=seed, max_new_tokens=6, complete_within_budget=True)
        assert r.finish_reason == "stop" and re.fullmatch(pattern, r.text), r.text
    # without the option, the same budget usually cuts the sentence short
    r = generate(model, vocab, PROMPT, grammar=Grammar.from_regex(r'[a-z]{30}'), sampling=HOT,
                 seed=0, max_new_tokens=5)
    assert r.finish_reason == "length" and not r.complete


def test_decoding_batch_equals_one_by_one(tiny):
    model, vocab = tiny
    grammars = [Grammar.from_regex(PATTERN), None, Grammar.from_file("grammars/json.lark"),
                Grammar.from_regex(r"[0-9]{2,12}")]
    prompts = [[1, 2, 3], [5, 6], [7, 8, 9, 10, 11], [4]]
    seeds = [11, 12, 13, 14]
    batch = generate(model, vocab, prompts, grammar=grammars, sampling=HOT, seed=seeds,
                     max_new_tokens=24)
    for p, g, s, got in zip(prompts, grammars, seeds, batch):
        alone = generate(model, vocab, p, grammar=g, sampling=HOT, seed=s, max_new_tokens=24)
        assert got.token_ids == alone.token_ids
        assert got.text == alone.text and got.finish_reason == alone.finish_reason


def test_decoding_overlap_and_sync_agree(tiny):
    model, vocab = tiny
    g = Grammar.from_file("grammars/json.lark")
    runs = [generate(model, vocab, PROMPT, grammar=g, sampling=HOT, seed=5, max_new_tokens=20,
                     overlap=mode) for mode in (True, False, "auto")]
    assert runs[0].token_ids == runs[1].token_ids == runs[2].token_ids


def test_decoding_stream_never_splits_characters(tiny):
    model, vocab = tiny
    g = Grammar.from_regex(r"(é|ü|😀|字){4,10}")
    s = stream(model, vocab, PROMPT, grammar=g, sampling=HOT, seed=1, max_new_tokens=40,
               force_tokens=False)
    pieces = list(s)
    assert "".join(pieces) == s.result.text
    assert len(pieces) > 1
    for piece in pieces:
        assert "\ufffd" not in piece
        assert piece.encode("utf-8").decode("utf-8") == piece


def test_decoding_stop_strings_cut_and_hold_back(tiny):
    model, vocab = tiny
    s = stream(model, vocab, PROMPT, sampling={**HOT, "logit_bias": {256: float("-inf")}},
               seed=0, max_new_tokens=40, stop=["e", "t", "a", "o", "i"])
    pieces = list(s)
    r = s.result
    assert r.finish_reason == "stop_string" and "".join(pieces) == r.text
    assert not any(c in r.text for c in "etaoi")


def test_decoding_stop_string_never_cuts_a_document_short(tiny):
    model, vocab = tiny
    g = Grammar.from_regex(r"abcabcab(xy)?zz")
    r = generate(model, vocab, PROMPT, grammar=g, sampling=HOT, seed=0, max_new_tokens=30,
                 stop=["cab", "q"])
    assert re.fullmatch(r"abcabcab(xy)?zz", r.text) and r.complete
    assert r.finish_reason == "stop"


def test_decoding_stop_string_ends_a_complete_sentence(tiny):
    model, vocab = tiny
    g = Grammar.from_regex(r"ab|abcab")
    for seed in range(3):   # the end of sequence is banned: the grammar must go on to "cab"
        r = generate(model, vocab, PROMPT, grammar=g, seed=seed, max_new_tokens=30,
                     sampling={**HOT, "logit_bias": {256: float("-inf")}}, stop=["cab"])
        assert r.text == "ab" and r.finish_reason == "stop_string" and r.complete


def test_decoding_processor_matches_loop_greedily(tiny):
    model, vocab = tiny
    cg = compile_grammar(Grammar.from_file("grammars/json.lark"), vocab)
    loop = generate(model, vocab, PROMPT, grammar=cg, sampling={"temperature": 0.0},
                    max_new_tokens=15, force_tokens=False)
    proc = GrammarLogitsProcessor(cg)
    out = model.generate(torch.tensor([PROMPT]), logits_processor=[proc], do_sample=False,
                         max_new_tokens=15, pad_token_id=256, eos_token_id=256)
    got = out[0, len(PROMPT):].tolist()
    if got and got[-1] == 256:
        got = got[:-1]
    assert got == loop.token_ids


def test_processor_keeps_a_finished_row_to_end_of_sequence_tokens(tiny):
    """generate() stopping only on other ids must not let text follow the grammar's end."""
    model, vocab = tiny
    cg = compile_grammar(Grammar.from_regex("ab"), vocab)
    proc = GrammarLogitsProcessor(cg)
    assert 0 not in vocab.eos_token_ids     # generate stops on token 0, never on the EOS
    out = model.generate(torch.tensor([PROMPT]), logits_processor=[proc], do_sample=True,
                         temperature=5.0, max_new_tokens=8, pad_token_id=0, eos_token_id=0)
    got = out[0, len(PROMPT):].tolist()
    text = b"".join(vocab.token_bytes[t] for t in got if t not in vocab.eos_token_ids)
    assert text == b"ab"
    first_end = next(i for i, t in enumerate(got) if t in vocab.eos_token_ids)
    assert all(t in vocab.eos_token_ids for t in got[first_end:])


def test_decoding_bad_inputs_raise_typed_errors(tiny):
    model, vocab = tiny
    with pytest.raises(DecodingError, match="empty batch"):
        generate(model, vocab, [], max_new_tokens=4)
    other = Vocabulary.from_token_bytes(list(vocab.token_bytes[:256]) + [b"<eos>"],
                                        eos_token_ids=[256], vocab_size=vocab.size)
    foreign = compile_grammar(Grammar.from_regex("[a-z]+"), other)
    with pytest.raises(VocabularyError, match="another vocabulary"):
        generate(model, vocab, PROMPT, grammar=foreign, max_new_tokens=4)
    wide = Vocabulary.from_token_bytes(vocab.token_bytes, eos_token_ids=[256],
                                       vocab_size=vocab.size + 64)
    with pytest.raises(VocabularyError, match="does not fit"):
        generate(model, wide, PROMPT, max_new_tokens=4)
    with pytest.raises(VocabularyError, match="does not fit"):
        GrammarLogitsProcessor(compile_grammar(Grammar.from_regex("a+"), wide))(
            torch.tensor([PROMPT]), torch.zeros((1, vocab.size)))
    with pytest.raises(DecodingError, match="max_new_tokens"):
        generate(model, vocab, PROMPT, max_new_tokens=0)
    with pytest.raises(DecodingError, match="2 entries for 3 prompts"):
        generate(model, vocab, [PROMPT] * 3, grammar=[None, None], max_new_tokens=2)
    with pytest.raises(DecodingError, match="unknown sampling parameter"):
        generate(model, vocab, PROMPT, sampling={"temprature": 1.0}, max_new_tokens=2)
    with pytest.raises(DecodingError, match="need a tokenizer"):
        generate(model, vocab, "text prompt", max_new_tokens=2)


def test_decoding_logprobs_align_with_tokens(tiny):
    model, vocab = tiny
    g = Grammar.from_regex(PATTERN)
    r = generate(model, vocab, PROMPT, grammar=g, sampling={"temperature": 0.0},
                 max_new_tokens=30, logprobs=3)
    assert len(r.token_logprobs) == len(r.top_logprobs) == r.n_tokens
    assert all(lp <= 1e-9 for lp in r.token_logprobs)
    assert r.token_logprobs[0] == 0.0  # '{"' is forced at the start
    for tok, lp, top in zip(r.token_ids, r.token_logprobs, r.top_logprobs):
        if top:  # greedy picks the likeliest allowed token
            assert max(top.values()) == pytest.approx(lp) and tok in top
    with pytest.raises(DecodingError, match="logprobs"):
        generate(model, vocab, PROMPT, max_new_tokens=2, logprobs=-1)
