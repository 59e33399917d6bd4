"""Token terminals resolved against a vocabulary: special tokens as their exact spellings.

A grammar's token references (``<think>``, ``<[151667]>``, ``!<think>``) become byte automata
over the spellings of ``special_spelling``: a special token is read only as its own spelling,
which no text and no other token holds, so it matches only as that token id and text never
matches it. A negation matches any one UTF-8 character of text, or any special token but the
ones it names and the end-of-sequence tokens; repeated (``!<x>*``), that is exactly the token
sequences without ``x``.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..automata import regex_to_byte_dfa
from ..automata.byte_dfa import ByteDFA, dfa_from_arrays
from ..automata.literal_dfa import literals_dfa
from ..errors import GrammarError, LimitExceededError
from ..grammar import Grammar, TokenRef
from ..vocabulary import Vocabulary, special_spelling

_ONE_CHAR = regex_to_byte_dfa(r"[\s\S]")


def resolve_token_terminals(grammar: Grammar, vocab: Vocabulary,
                            max_dfa_states: int = 100_000) -> Grammar:
    """The grammar with every token terminal's automaton built for ``vocab`` (unchanged when
    it has none). Unknown names, ids outside the vocabulary and ordinary (text) tokens named
    by id raise GrammarError at the reference's line and column."""
    if not grammar.has_token_refs:
        return grammar
    terminals = dict(grammar.terminals)
    for name, term in grammar.terminals.items():
        if term.tokens is not None:
            ids = token_ids_of(term.tokens, vocab)
            terminals[name] = replace(term, automaton=_token_dfa(ids, term.tokens, vocab,
                                                                 max_dfa_states))
    return replace(grammar, terminals=terminals)


def token_ids_of(ref: TokenRef, vocab: Vocabulary) -> list[int]:
    """The special token ids a reference names."""
    out = []
    for text in ref.names:
        tid = vocab.special_ids_by_text.get(text.encode("utf-8"))
        if tid is None:
            spelled = text.encode("utf-8") in set(vocab.token_bytes)
            raise GrammarError(
                f"{text} is not a special token of vocabulary {vocab.name or '(unnamed)'}"
                + ("; it is ordinary text there: write it as a string" if spelled else ""),
                line=ref.line, column=ref.column)
        out.append(tid)
    for tid in ref.ids:
        if not 0 <= tid < vocab.n_tokens:
            raise GrammarError(f"<[{tid}]>: token id outside the vocabulary "
                               f"(0..{vocab.n_tokens - 1})", line=ref.line, column=ref.column)
        if tid not in vocab.special_token_ids:
            raise GrammarError(
                f"<[{tid}]> is an ordinary token ({vocab.token_bytes[tid]!r}), not a special "
                "token: grammars match text, so write its text as a string",
                line=ref.line, column=ref.column)
        out.append(tid)
    return sorted(set(out))


def _token_dfa(ids: list[int], ref: TokenRef, vocab: Vocabulary, max_states: int) -> ByteDFA:
    if ref.negated:
        excluded = set(ids) | set(vocab.eos_token_ids)
        ids = sorted(vocab.special_token_ids - excluded)
    words = [special_spelling(t) for t in ids]
    if words:
        built = literals_dfa(words, max_states)
        if built is None:
            raise LimitExceededError(f"{ref.text} names more special tokens than "
                                     f"max_dfa_states={max_states} allows")
        trans, acc, init = built
    else:
        trans, acc, init = np.full((1, 256), -1, np.int32), np.zeros(1, bool), 0
    if not ref.negated:
        if not words:
            raise GrammarError(f"{ref.text} names no token", line=ref.line, column=ref.column)
        return dfa_from_arrays(np.asarray(trans, np.int32), np.asarray(acc, bool), init,
                               ref.text)
    # one character of text, or (through byte 0xFF) one of the special tokens left
    char = _ONE_CHAR
    offset = char.n_states
    special = np.where(trans >= 0, trans + offset, -1).astype(np.int32)
    table = np.vstack([char.transitions, special])
    table[char.initial, 0xFF] = special[init, 0xFF]
    accepting = np.concatenate([char.accepting, np.asarray(acc, bool)])
    return dfa_from_arrays(table, accepting, char.initial, ref.text)
