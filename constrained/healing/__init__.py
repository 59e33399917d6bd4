"""Token healing: back the prompt up to a token boundary the model can re-choose, grammar-aware."""
from .healer import HealingPlan, TokenHealer, heal_prompt
from .hook import HealedRow, SkipBytes, heal_for_decoding
from .matcher import HealingGrammar, HealingMatcher, UnconstrainedMatcher
from .prefix import PrefixIndex

__all__ = ["HealedRow", "HealingGrammar", "HealingMatcher", "HealingPlan", "PrefixIndex",
           "SkipBytes", "TokenHealer", "UnconstrainedMatcher",
           "heal_for_decoding", "heal_prompt"]
