"""Grammar front-ends and the one representation they produce."""
from ._grammar import Grammar, Terminal, TokenRef

__all__ = ["Grammar", "Terminal", "TokenRef"]
