"""The trie walk of every token from a lexer state equals stepping each token byte by byte."""
import random

import numpy as np
import pytest

from constrained import Grammar
from constrained.automata.token_walk import trie_spans
from constrained.cfg.lexer import Lexer
from constrained.cfg.prepare import prepare_grammar
from constrained.cfg.token_tables import vocab_index, walk_lexer_trie

pytestmark = pytest.mark.slow


def _brute(lex: Lexer, vocab, q: int):
    ok, groups = set(), {}
    for t in np.nonzero(vocab.text_token_mask[:vocab.n_tokens])[0].tolist():
        data, s = vocab.token_bytes[t], q
        for off, byte in enumerate(data):
            nxt = lex.rows[s][byte]
            if nxt < 0:
                if lex.acc_list[s]:
                    groups.setdefault(s, set()).add((t, off))
                break
            s = nxt
        else:
            ok.add(t)
    return ok, groups


def test_trie_walk_equals_byte_by_byte_on_llama3(llama3_vocab):
    props = {f"field_{i}": {"type": "integer"} for i in range(70)}
    props["note"] = {"type": "string"}
    g = Grammar.from_json_schema({"type": "object", "properties": props})
    pg = prepare_grammar(g)
    index, spans = vocab_index(llama3_vocab), trie_spans(llama3_vocab)
    rng = random.Random(7)
    big = frozenset(range(len(pg.dfas)))      # every terminal: keys, strings, numbers, ...
    for terms in (big, frozenset(rng.sample(sorted(big), 20))):
        lex = Lexer(terms, pg.dfas)
        for q in [0] + rng.sample(range(1, lex.n_states), min(2, lex.n_states - 1)):
            ok, groups = walk_lexer_trie(lex, spans, index, q)
            want_ok, want_groups = _brute(lex, llama3_vocab, q)
            assert set(ok.tolist()) == want_ok
            got = {s: {(int(index.tok_of[p]), int(p - index.start[index.tok_of[p]]))
                       for p in pairs.tolist()} for s, pairs in groups}
            assert got == want_groups
