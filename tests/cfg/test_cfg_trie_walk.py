"""The C walks (every token from a lexer state over the trie, token remainders from the empty
lexeme) equal stepping each token byte by byte."""
import random

import numpy as np
import pytest

from constrained import Grammar
from constrained.automata.token_walk import trie_spans
from constrained.cfg.lexer import Lexer
from constrained.cfg.prepare import prepare_grammar
from constrained.cfg.token_tables import vocab_index, walk_lexer_trie, walk_pairs

pytestmark = pytest.mark.slow


def _brute(lex: Lexer, vocab, q: int, items=None):
    """(ok tokens, {terminal set: {(token, offset)}}) stepping byte by byte; ``items`` are
    (token, offset) remainders read from the empty lexeme, default every text token from q."""
    if items is None:
        items = [(t, 0) for t in np.nonzero(vocab.text_token_mask[:vocab.n_tokens])[0].tolist()]
    ok, groups = set(), {}
    for t, start in items:
        data, s = vocab.token_bytes[t], q
        for off in range(start, len(data)):
            nxt = lex.rows[s][data[off]]
            if nxt < 0:
                if lex.acc_list[s]:
                    groups.setdefault(lex.accepting_terms[s], set()).add((t, off))
                break
            s = nxt
        else:
            ok.add(t)
    return ok, groups


def _as_sets(index, ok, groups):
    got = {}
    for terms, pairs in groups:
        assert terms not in got            # one group per terminal set
        got[terms] = {(int(index.tok_of[p]), int(p - index.start[index.tok_of[p]]))
                      for p in pairs.tolist()}
    return set(ok.tolist()), got


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
            got = _as_sets(index, *walk_lexer_trie(lex, spans, index, q))
            assert got == _brute(lex, llama3_vocab, q)
        # token remainders: random pairs of the whole vocabulary (and every pair of a few tokens)
        pairs = np.array(sorted(rng.sample(range(len(index.flat)), 3000)), dtype=np.int32)
        items = [(int(index.tok_of[p]), int(p - index.start[index.tok_of[p]])) for p in pairs]
        got = _as_sets(index, *walk_pairs(lex, index, pairs))
        assert got == _brute(lex, llama3_vocab, 0, items)
