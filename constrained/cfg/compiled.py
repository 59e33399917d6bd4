"""A context-free grammar compiled against a vocabulary (immutable, shareable across threads)."""
from __future__ import annotations

from ..bitmask import bitmask_words
from ..matching import CompiledGrammar, vocabulary_facts
from ..grammar import Grammar
from ..vocabulary import Vocabulary
from .mask import MaskEngine
from .prepare import PreparedGrammar, prepare_grammar
from .runtime import Runtime
from .token_terminals import resolve_token_terminals

_REGEX_OPTIONS = {"cache", "precompute", "max_states"}


class CompiledCFG(CompiledGrammar):
    """Prepared grammar, parser, lexers and mask caches; matchers share all of them.

    Internal caches fill lazily (under locks) but never change what any state means.
    """

    def __init__(self, grammar: Grammar, vocab: Vocabulary, prepared: PreparedGrammar,
                 runtime: Runtime, engine: MaskEngine) -> None:
        self.grammar = grammar
        self.vocab = vocab
        self.prepared = prepared
        self.runtime = runtime
        self.engine = engine
        self.words = bitmask_words(vocab.size)
        facts = vocabulary_facts(vocab)
        self.eos_mask = facts.eos_mask
        self.eos_ids = facts.eos_ids
        # special tokens step as their spellings (only grammars naming them can read those)
        self.special_ids = facts.special_ids
        self.text_ok = facts.text_ok

    def matcher(self):
        if self.grammar.distinct_keys or self.grammar.distinct_arrays:
            from .distinct_strings import DistinctStringsMatcher
            return DistinctStringsMatcher(self)
        from .matcher import CFGMatcher
        return CFGMatcher(self)

    def __repr__(self) -> str:
        g = self.prepared
        return (f"CompiledCFG(terminals={g.n_terminals}, alternatives={len(g.lhs)}, "
                f"vocab={self.vocab!r})")


def compile_cfg(grammar: Grammar, vocab: Vocabulary, *, max_rules: int = 100_000,
                max_lexer_states: int = 20_000, max_dfa_states: int | None = None,
                mask_cache_size: int = 2048, table_cache_size: int = 65536,
                column_cache_size: int = 50_000, warm: bool = True, **options) -> CompiledCFG:
    """Compile a context-free ``grammar`` for ``vocab``.

    Options: ``max_rules`` (alternatives), ``max_lexer_states`` (states of one lexer, i.e. the
    union DFA of one candidate terminal set), ``max_dfa_states`` (per terminal; the regex option
    ``max_states`` is accepted as an alias) raise LimitExceededError when exceeded;
    ``mask_cache_size`` and ``table_cache_size`` bound the memoized masks and walk results,
    ``column_cache_size`` the parser states kept for reuse (twice as many advance results);
    ``warm`` builds the first lexer at compile time; ``cache`` (default True) keeps the
    vocabulary's token trie on disk (``$CONSTRAINED_CACHE_DIR``) for later processes. The regex option
    ``precompute`` is accepted and ignored.
    """
    unknown = set(options) - _REGEX_OPTIONS
    if unknown:
        raise TypeError(f"unknown compile option(s): {', '.join(sorted(unknown))}")
    if max_dfa_states is None:
        max_dfa_states = int(options.get("max_states", 10_000))
    grammar = resolve_token_terminals(grammar, vocab, max_dfa_states)
    prepared = prepare_grammar(grammar, max_rules=max_rules, max_dfa_states=max_dfa_states)
    runtime = Runtime(prepared, max_lexer_states=max_lexer_states,
                      max_columns=column_cache_size)
    engine = MaskEngine(runtime, vocab, mask_cache_size=mask_cache_size,
                        table_cache_size=table_cache_size, disk_cache=bool(options.get("cache", True)))
    compiled = CompiledCFG(grammar, vocab, prepared, runtime, engine)
    if warm:
        runtime.lexer(runtime.parser.initial.candidates).build()
    return compiled
