"""Typed errors raised by the engine.

Every error names the place it is about (a line and column, a JSON pointer, a parameter or a
path) so a user can fix the input without reading the engine's code.
"""
from __future__ import annotations


def clip(text: str, limit: int) -> str:
    """``text`` cut in the middle to at most about ``limit`` characters: errors quote what
    they are about, never a whole (possibly huge) input."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 5
    return f"{text[:head]} ... {text[len(text) - (limit - head - 5):]}"


class ConstrainedError(Exception):
    """Base class of every error the engine raises on bad input or exceeded limits."""

    def __init__(self, *args) -> None:
        if len(args) == 1 and isinstance(args[0], str):
            args = (clip(args[0], 600),)
        super().__init__(*args)


class VocabularyError(ConstrainedError, ValueError):
    """A vocabulary cannot be built or does not fit the model (e.g. no EOS token, corrupt GGUF)."""


class ModelNotFoundError(ConstrainedError, FileNotFoundError):
    """A model path or the embedded default model is missing; the message says how to install it."""


class GrammarError(ConstrainedError, ValueError):
    """A grammar, regex or schema is invalid or uses something the engine cannot enforce."""

    def __init__(self, message: str, *, line: int | None = None, column: int | None = None,
                 position: int | None = None, pointer: str | None = None) -> None:
        self.line = line
        self.column = column
        self.position = position
        self.pointer = pointer
        where = []
        if line is not None:
            where.append(f"line {line}")
        if column is not None:
            where.append(f"column {column}")
        if position is not None:
            where.append(f"position {position}")
        if pointer is not None:
            where.append(f"at {clip(pointer, 120) or '#'}")
        message = clip(message, 400)
        super().__init__(f"{message} ({', '.join(where)})" if where else message)


class EmptyLanguageError(GrammarError):
    """A grammar or schema admits no text at all (e.g. ``{"not": {}}``): nothing can be
    generated from it."""


class RegexError(GrammarError):
    """A regex is invalid or uses an unsupported construct (backreference, lookaround)."""


class LimitExceededError(ConstrainedError, RuntimeError):
    """A configured limit (automaton states, grammar size, compile time, memory) was exceeded."""


class MatcherError(ConstrainedError, ValueError, TypeError):
    """A matcher was misused: a rollback beyond its history, a bitmask of the wrong size, shape
    or dtype, an argument of the wrong type. (A TypeError too, for the wrong-type cases.)"""


class DeadEndError(ConstrainedError, RuntimeError):
    """A matcher has no allowed token: the grammar cannot continue from the current state."""


class UnsupportedSchemaError(GrammarError):
    """A JSON Schema uses a keyword or value the converter cannot enforce exactly.

    ``pointer`` is the JSON pointer of the keyword; ``keyword`` names it.
    """

    def __init__(self, message: str, *, pointer: str | None = None,
                 keyword: str | None = None) -> None:
        self.keyword = keyword
        super().__init__(message, pointer=pointer)


class GrammarFileError(GrammarError, FileNotFoundError):
    """A grammar file is missing or has an extension no front-end reads."""


class DecodingError(ConstrainedError, ValueError):
    """Bad input to the decode loop: an empty batch, mismatched per-prompt lists, bad options."""


class BudgetError(DecodingError):
    """``complete_within_budget``: no completion of the grammar fits in the token budget."""
