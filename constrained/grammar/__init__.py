"""Grammar front-ends and the one representation they produce."""
from ._grammar import Grammar, Terminal

__all__ = ["Grammar", "Terminal"]
