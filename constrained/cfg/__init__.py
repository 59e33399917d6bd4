"""Context-free grammars to exact token masks: Earley parser over a greedy contextual lexer.

``compile_cfg(grammar, vocab, **options) -> CompiledCFG``; ``CompiledCFG.matcher()`` gives a
``CFGMatcher`` with the common GrammarMatcher API.

Modules, in the order data flows: prepare.py (grammar -> numbered, trimmed rules and terminal
DFAs), earley.py (interned Earley columns), lexer.py (union DFA of a candidate terminal set),
runtime.py (the exact lexing semantics: greedy, contextual, no backtracking; read its
docstring), token_tables.py (token walks over the vocabulary trie, in C),
mask.py (masks from walks + parser steps, memoized; traversal and assembly in C, _assemble.c),
matcher.py, compiled.py. The C extensions: _product.c (lexer tables), _walks.c (trie walks),
_earley.c (column advance and closure), _assemble.c.
"""
from .compiled import CompiledCFG, compile_cfg
from .matcher import CFGMatcher

__all__ = ["CompiledCFG", "CFGMatcher", "compile_cfg"]
