"""Token healing: back the prompt up to a token boundary the model can re-choose, grammar-aware."""
from .generate import HealingGrammar, generate_healed
from .healer import HealingPlan, TokenHealer, heal_prompt
from .hook import HealedRow, SkipBytes, heal_for_decoding
from .matcher import HealingMatcher, UnconstrainedMatcher
from .prefix import PrefixIndex

__all__ = ["HealedRow", "HealingGrammar", "HealingMatcher", "HealingPlan", "PrefixIndex",
           "SkipBytes", "TokenHealer", "UnconstrainedMatcher", "generate_healed",
           "heal_for_decoding", "heal_prompt"]
