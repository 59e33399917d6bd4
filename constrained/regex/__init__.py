"""Regex constraints: exact token masks from one regex over a vocabulary."""
from .compiled import CompiledRegex, compile_regex
from .matcher import RegexMatcher

__all__ = ["CompiledRegex", "RegexMatcher", "compile_regex"]
