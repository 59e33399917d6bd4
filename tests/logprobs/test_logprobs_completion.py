"""The OpenAI-style completion function on SmolLM2, and logprob recovery against it."""
import math

import numpy as np
import pytest
import torch

from constrained import Grammar
from constrained.logprobs import recover_by_bisection, recover_k_per_call, recover_one_per_call, \
    recover_top_n
from constrained.logprobs.completion import completion_oracle, true_logprobs

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def completer():
    from constrained.logprobs.completion import default_completer
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one thread: no spin-waiting when the machine is busy
    yield default_completer()  # loaded once per test process
    torch.set_num_threads(threads)


PROMPT = "The capital of France is"


def test_greedy_completion_and_its_logprobs(completer):
    r = completer(PROMPT, max_tokens=3, top_logprobs=5)
    ids = completer.encode(PROMPT)
    with torch.no_grad():  # the same tokens and logprobs from plain forward passes
        for tok, lp, alts in zip(r.token_ids, r.token_logprobs, r.top_logprobs):
            logits = completer.model(input_ids=torch.tensor([ids])).logits[0, -1].double()
            ref = torch.log_softmax(logits, -1)
            assert tok == int(torch.argmax(ref))
            assert lp == pytest.approx(float(ref[tok]), abs=1e-4)
            assert list(alts)[0] == tok and len(alts) == 5
            assert list(alts.values()) == sorted(alts.values(), reverse=True)
            ids = ids + [tok]
    assert r.text == completer.vocab.decode(r.token_ids).decode()
    out = r.to_openai()
    lp = out["choices"][0]["logprobs"]
    assert lp["tokens"][0] == r.text[:len(lp["tokens"][0])]
    assert lp["text_offset"][0] == 0 and out["usage"]["completion_tokens"] == 3
    assert list(lp["top_logprobs_ids"][0]) == list(r.top_logprobs[0])


def test_logit_bias_bans_and_forces(completer):
    first = completer(PROMPT, max_tokens=1).token_ids[0]
    banned = completer(PROMPT, max_tokens=1, logit_bias={first: -math.inf})
    assert banned.token_ids[0] != first
    forced = completer(PROMPT, max_tokens=1, logit_bias={"42": 100.0}, top_logprobs=2)
    assert forced.token_ids[0] == 42 and forced.token_logprobs[0] > -1e-6


def test_grammar_and_sampling(completer):
    r = completer(PROMPT, max_tokens=6, grammar=Grammar.from_regex(r" [0-9]+ km"),
                  temperature=1.0, seed=3)
    assert r.text.startswith(" ") and r.text[1:2].isdigit()
    again = completer(PROMPT, max_tokens=6, grammar=Grammar.from_regex(r" [0-9]+ km"),
                      temperature=1.0, seed=3)
    assert again.token_ids == r.token_ids


@pytest.mark.parametrize("prompt", [PROMPT, 'The link is <a href="http:'])
def test_recovery_reproduces_the_full_distribution(completer, prompt):
    truth = true_logprobs(completer, prompt)
    V = completer.vocab.size
    k = 20
    rec = recover_k_per_call(completion_oracle(completer, prompt, k), V, k)
    assert not rec.unresolved and len(rec.known_ids()) == V
    assert np.abs(rec.logprobs - truth).max() < 1e-4
    theory = 1 + math.ceil((V - k) / (k - 1))  # ~ V / k
    assert theory <= rec.calls <= 1.02 * theory  # a few batches retried with a larger bias


def test_other_methods_on_a_restricted_candidate_set(completer):
    truth = true_logprobs(completer, PROMPT)
    V = completer.vocab.size
    rng = np.random.default_rng(0)
    subset = rng.choice(V, 60, replace=False).tolist()
    one = recover_one_per_call(completion_oracle(completer, PROMPT, 1), V, token_ids=subset)
    assert np.abs(one.logprobs[subset] - truth[subset]).max() < 1e-4
    assert len(subset) <= one.calls <= 3 * len(subset)
    top = recover_top_n(completion_oracle(completer, PROMPT, 8), V, 40)
    ids = top.known_ids()
    assert set(ids) == set(np.argsort(-truth)[:40])
    assert np.abs(top.logprobs[ids] - truth[ids]).max() < 1e-4

    def argmax(bias):
        return completer(PROMPT, max_tokens=1, logit_bias=bias).token_ids[0]

    few = subset[:4]
    bis = recover_by_bisection(argmax, V, token_ids=few, tol=1e-7)
    top_id = int(np.argmax(truth))
    for t in few:
        assert bis.logprobs[t] == pytest.approx(truth[t] - truth[top_id], abs=1e-4)


def test_recovery_through_the_decode_loop_matches_the_model(completer):
    """The same recovery, each call a run of constrained.generate (the decode loop with its
    logit_bias and logprobs), on a random subset: the loop reports the model's distribution."""
    from constrained.logprobs.over_generate import generate_oracle
    truth = true_logprobs(completer, PROMPT)
    V = completer.vocab.size
    subset = np.random.default_rng(1).choice(V, 95, replace=False).tolist()
    k = 20
    ids = completer.encode(PROMPT)
    rec = recover_k_per_call(generate_oracle(completer.model, completer.vocab, ids, k), V, k,
                             token_ids=subset)
    assert np.abs(rec.logprobs[subset] - truth[subset]).max() < 1e-4
    assert rec.calls <= 1 + math.ceil(len(subset) / (k - 1)) + 2
