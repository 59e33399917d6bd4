"""Parser + lexer state and how bytes move it: the exact semantics every mask must agree with.

A matcher state is ``(column, q)``: ``column`` is the Earley column where the current lexeme
started and ``q`` the state of that column's lexer (the union DFA of the candidate terminals:
expected by the parser plus ignored ones). ``q == 0`` means no byte of the lexeme was read yet.

Lexing is greedy without backtracking. A byte that extends the lexeme (some candidate can still
match a longer text) is always taken into it. A byte that cannot extend it ends the lexeme: the
lexeme must then be a full match of at least one candidate, the parser advances over *all*
candidates that match it (ambiguity is kept, ignored terminals leave the parser where it was, and
terminal priorities never reject a parse), and the byte starts the next lexeme. The text so far
is a complete sentence when the lexeme is empty and the column complete, or the lexeme is a full
match whose advance completes the parse.

Consequences of greedy lexing (tested in tests/cfg/test_cfg_matcher_api.py):

- ``start: A "a"`` with ``A: /a+/`` accepts nothing: every ``a`` extends ``A``, so the lexeme
  never ends before the last ``a`` (Lark's default ``dynamic`` Earley lexer agrees; only its
  ``dynamic_complete`` mode tries every split);
- a lexeme is never cut back to a shorter match: with ``X: "abcd"`` and ``Y: "ab"`` both
  candidates, ``abc`` commits to ``X`` and ``abce`` is refused even if ``Y "ce"`` would parse;
- keywords and identifiers: a lexeme matched by several expected terminals (``if`` as IF and
  NAME) feeds all of them to the parser; priorities never reject, as in Lark's Earley parser.

So every text accepted here is accepted by Lark's Earley parser (``lexer="dynamic"``) for the
same grammar, and texts whose only parse needs a shorter lexeme than the greedy one are not.

Exactness: a state is *live* when the current lexeme can still grow into a full match of a
candidate; since every rule is productive and every terminal DFA trimmed, a live state has a
continuation unless every way to end the lexeme is blocked by greedy lexing (as in the ``A "a"``
example). Masks allow exactly the tokens leading to live states (EOS exactly when complete).
"""
from __future__ import annotations

from ..gc_untrack import untrack_all
from .earley import EarleyParser
from .lexer import Lexer
from .prepare import PreparedGrammar

State = tuple  # (Column, int)


class Runtime:
    """Lexers by candidate set, byte steps and acceptance for one prepared grammar."""

    def __init__(self, grammar: PreparedGrammar, *, max_lexer_states: int = 20_000,
                 max_lexers: int = 1024, max_columns: int = 50_000) -> None:
        self.grammar = grammar
        self.parser = EarleyParser(grammar, max_interned=max_columns,
                                   max_advances=2 * max_columns)
        self.max_lexer_states = max_lexer_states
        self._lexers: dict[frozenset, Lexer] = {}
        self._max_lexers = max_lexers

    @property
    def initial(self) -> State:
        return (self.parser.initial, 0)

    def lexer(self, candidates: frozenset) -> Lexer:
        """The lexer of a candidate terminal set (built on first use)."""
        lex = self._lexers.get(candidates)
        if lex is None:
            lex = Lexer(candidates, self.grammar.dfas, self.max_lexer_states, self.grammar.words)
            if len(self._lexers) >= self._max_lexers:
                self._lexers.clear()
            lex = self._lexers.setdefault(candidates, lex)
        return lex

    def step(self, state: State, data: bytes) -> State | None:
        """The state after ``data``, or None when the text stops being viable."""
        col, q = state
        lex = self.lexer(col.candidates)
        rows = lex.rows
        advance = self.parser.advance
        for b in data:
            nq = rows[q][b]
            if nq >= 0:
                q = nq
                continue
            if not lex.acc_list[q]:
                return None
            col = advance(col, lex.accepting_terms[q])
            if col is None:
                return None
            lex = self.lexer(col.candidates)
            rows = lex.rows
            q = rows[0][b]
            if q < 0:
                return None
        state = (col, q)
        untrack_all(state)      # a column (untracked, acyclic) and an int
        return state

    def is_accepting(self, state: State) -> bool:
        """Whether the text read so far is a complete sentence."""
        col, q = state
        if q == 0:
            return col.complete
        lex = self.lexer(col.candidates)
        if not lex.acc_list[q]:
            return False
        nxt = self.parser.advance(col, lex.accepting_terms[q])
        return nxt is not None and nxt.complete

    def next_bytes(self, state: State) -> list[int]:
        """Every byte that keeps the text viable after ``state``."""
        return [b for b in range(256) if self.step(state, bytes((b,))) is not None]

    def forced_bytes(self, state: State, limit: int = 4096) -> bytes:
        """Bytes every continuation must start with (stops at a choice or a complete text)."""
        out = bytearray()
        while len(out) < limit and not self.is_accepting(state):
            choices = self.next_bytes(state)
            if len(choices) != 1:
                break
            out.append(choices[0])
            state = self.step(state, bytes(choices))
        return bytes(out)

