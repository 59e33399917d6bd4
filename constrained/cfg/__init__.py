"""Context-free grammars to exact token masks: Earley parser over a greedy contextual lexer.

``compile_cfg(grammar, vocab, **options) -> CompiledCFG``; ``CompiledCFG.matcher()`` gives a
``CFGMatcher`` with the common GrammarMatcher API. Lexing semantics: see runtime.py.
"""
from .compiled import CompiledCFG, compile_cfg
from .matcher import CFGMatcher

__all__ = ["CompiledCFG", "CFGMatcher", "compile_cfg"]
