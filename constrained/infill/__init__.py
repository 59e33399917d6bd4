"""Fill-in-the-middle: FIM prompt layouts per model family and grammar-constrained middles."""
from .matcher import InfillMatcher
from .prompts import (FAMILIES, FimError, FimFamily, FimPrompt, FimTokens, build_fim_prompt,
                      build_fim_prompt_text, detect_fim_tokens, fim_tokens)

__all__ = ["FAMILIES", "FimError", "FimFamily", "FimPrompt", "FimTokens", "InfillMatcher",
           "build_fim_prompt", "build_fim_prompt_text", "detect_fim_tokens", "fim_tokens"]
