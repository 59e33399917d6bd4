"""Byte-level automata shared by the regex and grammar engines.

Stable API:

- ``ByteDFA``: ``transitions`` int32[n_states, 256] (-1 dead), ``accepting`` bool[n_states],
  ``initial`` (-1 for the empty language); every state can reach acceptance, so a live state
  means a viable prefix. ``key`` is a digest of the automaton for cache keys; ``walk(state,
  data)``, ``accepts(data)``, ``forced_bytes(state)``.
- ``regex_to_byte_dfa(pattern, max_states=DEFAULT_MAX_STATES) -> ByteDFA``: Python ``re``
  syntax, full match, ASCII ``\\d \\w \\s``; RegexError(position=...) on bad or unsupported
  input, LimitExceededError past ``max_states``.
- ``walk_tokens(dfa, vocab, state) -> int32[vocab.n_tokens]`` and
  ``walk_tokens_many(dfa, vocab, states) -> int32[len(states), n_tokens]``: end state of every
  token from a start state, -1 for dead, special and empty tokens; vectorized, no Python loop
  over the vocabulary.
- ``TokenTable.get(dfa, vocab)``: the shared per-(dfa.key, vocab.hash) table;
  ``table.row(state)`` -> ``TokenRow`` with ``mask`` (packed int32 words, text tokens only, no
  EOS), ``tokens`` and ``ends`` (allowed ids and the DFA state after each); rows are computed
  lazily, ``table.save()`` persists their masks to the disk cache.
- ``disk_cache``: ``save_arrays(name, arrays)``, ``load_arrays(name) -> dict | None`` (atomic,
  checksummed, corrupt files rebuilt), ``cache_name(kind, *parts)``, ``cache_dir()``
  ($CONSTRAINED_CACHE_DIR, default ~/.cache/constrained).
- ``utf8_sequences(ranges)``: UTF-8 byte-range sequences of code-point ranges.
"""
from .byte_dfa import DEFAULT_MAX_STATES, ByteDFA, regex_difference_dfa, regex_to_byte_dfa
from .token_table import TokenRow, TokenTable
from .token_walk import walk_tokens, walk_tokens_many
from .utf8 import utf8_sequences

__all__ = ["ByteDFA", "DEFAULT_MAX_STATES", "TokenRow", "TokenTable", "regex_difference_dfa",
           "regex_to_byte_dfa",
           "walk_tokens", "walk_tokens_many", "utf8_sequences"]
