"""Fill-in-the-middle: FIM prompt layouts per model family and grammar-constrained middles."""
from .matcher import InfillError, InfillGrammar, InfillMatcher
from .fill import fill_in_the_middle
from .prompts import (FAMILIES, FimError, FimFamily, FimPrompt, FimTokens, build_fim_prompt,
                      build_fim_prompt_text, detect_fim_tokens, fim_tokens)

__all__ = ["FAMILIES", "FimError", "FimFamily", "FimPrompt", "FimTokens", "InfillError", "InfillGrammar",
           "InfillMatcher", "build_fim_prompt", "build_fim_prompt_text", "detect_fim_tokens",
           "fill_in_the_middle", "fim_tokens"]
