"""Grammar front-ends and the one representation they produce."""
from ._grammar import Grammar, RegionBudget, Terminal, TokenRef

__all__ = ["Grammar", "RegionBudget", "Terminal", "TokenRef"]
