"""Token healing: back the prompt up to a token boundary the model can re-choose, grammar-aware."""
from .healer import HealingPlan, TokenHealer, heal_prompt
from .matcher import HealingMatcher, UnconstrainedMatcher
from .prefix import PrefixIndex

__all__ = ["HealingMatcher", "HealingPlan", "PrefixIndex", "TokenHealer", "UnconstrainedMatcher",
           "heal_prompt"]
