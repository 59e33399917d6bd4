"""Reasoning budgets: the region's token table against a brute-force search, and the decode
loop keeping the budget."""
import random

import numpy as np
import pytest

from constrained import Grammar, compile_grammar
from constrained.decoding.region_budget import RegionBudgetMatcher, region_table
from constrained.decoding.shortest import ShortestCompletion
from constrained.vocabulary import Vocabulary

PIECES = [b"</", b"think", b">", b"</think>", b"</think>\n", b"ab", b"k>", b"hi</th", b"<",
          b"\xc3", b"\xa9", b"\xc3\xa9", b"in", b"nk", b"</thi", b"/t", "é</".encode()]


def _vocab(special_end: bool) -> Vocabulary:
    toks = [bytes([b]) for b in range(256)] + PIECES + [b"<eos>"]
    eos = len(toks) - 1
    special = [eos]
    if special_end:
        toks.append(b"</think>")
        special.append(len(toks) - 1)
    toks.append(b"<think>")
    special.append(len(toks) - 1)
    return Vocabulary.from_token_bytes(toks, [eos], special)


@pytest.mark.parametrize("special_end", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_table_limits_equal_a_brute_force_search(special_end, seed):
    """From random free-text states, for every budget left: the tokens the table allows are
    exactly those after which a token-level search finds a way to close in time."""
    vocab = _vocab(special_end)
    # the block alone: complete exactly when it is closed
    region = compile_grammar(Grammar.from_structural_tag(
        {"type": "tag", "begin": "<think>", "content": {"type": "any_text"},
         "end": "</think>"}, vocab), vocab)
    table = region_table(vocab, "</think>", special_end)
    search = ShortestCompletion(vocab)
    rng = random.Random(seed)
    begin = vocab.special_ids_by_text[b"<think>"]
    for _ in range(5):
        m = region.matcher()
        assert m.accept_token(begin)
        wrapped = RegionBudgetMatcher(region.matcher(), table, vocab, 1000, b"<think>")
        assert wrapped.accept_token(begin)
        for _ in range(rng.randint(0, 6)):
            choices = [t for t in m.allowed_token_ids().tolist()
                       if t not in vocab.eos_token_ids
                       and vocab.token_bytes[t] not in (b"</think>", b"</think>\n")]
            t = rng.choice(choices)
            assert m.accept_token(t) and wrapped.accept_token(t)
        if m.is_accepting():
            continue
        _, _, state = wrapped._counts[-1]
        text = set(np.flatnonzero(np.isin(np.arange(vocab.size), m.allowed_token_ids())))
        for left in range(1, 7):
            expected = search.budget_mask(m, left + 1)    # + 1: the search counts the EOS
            assert expected is not None
            nxt = table.trans[state]
            got = {t for t in text if nxt[t] >= 0 and table.dist[nxt[t]] <= left - 1}
            want = {t for t in text if expected[t] and t not in vocab.eos_token_ids}
            assert got == want, (left, sorted(vocab.token_bytes[t] for t in got ^ want))


def test_decoding_keeps_the_budget(tiny):
    from constrained import generate
    from constrained.errors import BudgetError
    model, vocab = tiny
    short = {"type": "tag", "begin": "<think>", "content": {"type": "any_text"},
             "end": "</think>", "max_tokens": 7}     # bytes only: "</think>" takes 8 tokens
    with pytest.raises(BudgetError, match="at least 8 tokens"):
        generate(model, vocab, [1, 2, 3], grammar=Grammar.from_structural_tag(short),
                 max_new_tokens=60)
    for n in (8, 10, 14):
        spec = {"type": "sequence", "elements": [
            {"type": "tag", "begin": "<think>", "content": {"type": "any_text"},
             "end": "</think>", "max_tokens": n},
            {"type": "const_string", "value": "!"}]}
        for seed in range(4):
            r = generate(model, vocab, [1, 2, 3], grammar=Grammar.from_structural_tag(spec),
                         max_new_tokens=60, seed=seed, sampling={"temperature": 1.5})
            assert r.finish_reason == "stop" and r.text.endswith("</think>!"), r.text
            think = r.text.index("<think>") + len("<think>")
            counted, seen = 0, 0
            closing = r.text.index("</think>") + len("</think>")
            for t in r.token_ids:
                seen += len(vocab.token_bytes[t])
                if seen > think:
                    counted += 1
                if seen >= closing:
                    break
            assert counted <= n, (n, r.text)


@pytest.mark.parametrize("with_vocab", [False, True])
def test_budget_follows_how_the_grammar_reads_the_end(with_vocab):
    """Built without a vocabulary, "</think>" is text even where the vocabulary has it as a
    special token; with one, it is that token: either way every walk closes within budget."""
    from constrained.decoding.region_budget import budgeted_matcher
    vocab = _vocab(special_end=True)
    spec = {"type": "sequence", "elements": [
        {"type": "tag", "begin": "<think>", "content": {"type": "any_text"},
         "end": "</think>", "max_tokens": 9}, {"type": "const_string", "value": "!"}]}
    grammar = Grammar.from_structural_tag(spec, vocab if with_vocab else None)
    assert grammar.budgets[0].end_is_token is with_vocab
    compiled = compile_grammar(grammar, vocab)
    rng = random.Random(3)
    for _ in range(20):
        m = budgeted_matcher(compiled, compiled.matcher(), grammar.budgets[0])
        text = b""
        while not m.is_accepting():
            choices = [t for t in m.allowed_token_ids().tolist()
                       if t not in vocab.eos_token_ids]
            t = rng.choice(choices)
            assert m.accept_token(t)
            text += vocab.token_bytes[t]
        assert text.endswith(b"</think>!") and m._counts[-1][1] <= 9, text
