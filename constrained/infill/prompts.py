"""Fill-in-the-middle prompts: the FIM tokens of common model families and the prompt layouts.

Layouts (``PRE``/``SUF``/``MID`` are the family's three FIM tokens):

- ``"psm"`` (prefix-suffix-middle): ``PRE prefix SUF suffix MID`` -> the model writes the middle;
- ``"spm"`` (suffix-first): ``PRE SUF suffix MID prefix`` -> the model continues the prefix.

Families are found from the vocabulary's token bytes (special tokens first) or named explicitly.
Budgets are in tokens: the prefix keeps its end (next to the hole), the suffix its start.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..errors import ConstrainedError
from ..vocabulary import Vocabulary


class FimError(ConstrainedError, ValueError):
    """A vocabulary has no fill-in-the-middle tokens, or a FIM request is malformed."""


@dataclass(frozen=True)
class FimFamily:
    """Names of one family's FIM tokens; ``end_tokens`` also end a middle (pad, EOT, separators)."""

    name: str
    prefix: bytes
    suffix: bytes
    middle: bytes
    end_tokens: tuple[bytes, ...] = ()


FAMILIES: tuple[FimFamily, ...] = (
    FimFamily("qwen", b"<|fim_prefix|>", b"<|fim_suffix|>", b"<|fim_middle|>",
              (b"<|fim_pad|>", b"<|file_sep|>", b"<|repo_name|>", b"<|endoftext|>")),
    FimFamily("starcoder", b"<fim_prefix>", b"<fim_suffix>", b"<fim_middle>",
              (b"<fim_pad>", b"<file_sep>", b"<|endoftext|>")),
    FimFamily("codellama", b" <PRE>", b" <SUF>", b" <MID>", (b" <EOT>",)),
    FimFamily("codellama", b"<PRE>", b"<SUF>", b"<MID>", (b"<EOT>",)),
    FimFamily("codellama", "\u2581<PRE>".encode(), "\u2581<SUF>".encode(),
              "\u2581<MID>".encode(), ("\u2581<EOT>".encode(),)),
    FimFamily("deepseek", "<｜fim▁begin｜>".encode(), "<｜fim▁hole｜>".encode(),
              "<｜fim▁end｜>".encode(), ("<｜end▁of▁sentence｜>".encode(),)),
    FimFamily("codestral", b"[PREFIX]", b"[SUFFIX]", b"[MIDDLE]", ()),
)


@dataclass(frozen=True)
class FimTokens:
    """The FIM token ids of one vocabulary, and the ids that end a middle (EOS included)."""

    family: str
    prefix_id: int
    suffix_id: int
    middle_id: int
    end_ids: frozenset[int] = field(default_factory=frozenset)


def detect_fim_tokens(vocab: Vocabulary) -> FimTokens | None:
    """The FIM tokens of ``vocab`` (special tokens preferred), or None when it has none."""
    for family in FAMILIES:
        found = _find_family(vocab, family)
        if found is not None:
            return found
    return None


def fim_tokens(vocab: Vocabulary, family: str | None = None) -> FimTokens:
    """FIM tokens of a named family (or detected when ``family`` is None); FimError if absent."""
    if family is None:
        found = detect_fim_tokens(vocab)
        if found is None:
            raise FimError(f"vocabulary {vocab.name or '(unnamed)'} has no fill-in-the-middle "
                           f"tokens of a known family ({', '.join(_family_names())}); pass "
                           "the token ids explicitly with FimTokens(...)")
        return found
    candidates = [f for f in FAMILIES if f.name == family]
    if not candidates:
        raise FimError(f"unknown FIM family {family!r} (known: {', '.join(_family_names())})")
    for fam in candidates:
        found = _find_family(vocab, fam)
        if found is not None:
            return found
    raise FimError(f"vocabulary {vocab.name or '(unnamed)'} lacks the {family} FIM tokens "
                   f"{candidates[0].prefix!r}, {candidates[0].suffix!r}, {candidates[0].middle!r}")


@dataclass(frozen=True)
class FimPrompt:
    """A FIM prompt: ``ids`` to feed the model, and what was kept of the prefix and suffix."""

    ids: list[int]
    prefix_ids: list[int]
    suffix_ids: list[int]
    layout: str
    tokens: FimTokens
    prefix_dropped: int = 0
    suffix_dropped: int = 0


def build_fim_prompt(prefix_ids: Sequence[int], suffix_ids: Sequence[int], tokens: FimTokens, *,
                     layout: str = "psm", max_prefix_tokens: int | None = None,
                     max_suffix_tokens: int | None = None, max_prompt_tokens: int | None = None,
                     leading_ids: Sequence[int] = ()) -> FimPrompt:
    """Lay out a FIM prompt from tokenized prefix and suffix, trimmed to the budgets.

    ``max_prompt_tokens`` bounds the whole prompt (the three FIM tokens and ``leading_ids``, such
    as BOS, included): the prefix gets three quarters of what is left and the suffix the rest,
    either side lending what it does not use to the other.
    """
    if layout not in ("psm", "spm"):
        raise FimError(f"unknown FIM layout {layout!r}: use 'psm' (prefix-suffix-middle) or "
                       "'spm' (suffix first)")
    pre, suf = list(prefix_ids), list(suffix_ids)
    if max_prefix_tokens is not None:
        pre = pre[len(pre) - max(0, max_prefix_tokens):] if max_prefix_tokens < len(pre) else pre
    if max_suffix_tokens is not None:
        suf = suf[:max(0, max_suffix_tokens)]
    if max_prompt_tokens is not None:
        room = max_prompt_tokens - 3 - len(leading_ids)
        if room < 0:
            raise FimError(f"max_prompt_tokens={max_prompt_tokens} leaves no room for the FIM "
                           f"tokens and {len(leading_ids)} leading tokens")
        n_pre, n_suf = _split_budget(len(pre), len(suf), room)
        pre, suf = pre[len(pre) - n_pre:] if n_pre else [], suf[:n_suf]
    head = list(leading_ids)
    if layout == "psm":
        ids = head + [tokens.prefix_id] + pre + [tokens.suffix_id] + suf + [tokens.middle_id]
    else:
        ids = head + [tokens.prefix_id, tokens.suffix_id] + suf + [tokens.middle_id] + pre
    return FimPrompt(ids, pre, suf, layout, tokens, len(prefix_ids) - len(pre),
                     len(suffix_ids) - len(suf))


def build_fim_prompt_text(prefix: str | bytes, suffix: str | bytes,
                          encode: Callable[[str], Sequence[int]], tokens: FimTokens,
                          **options) -> FimPrompt:
    """:func:`build_fim_prompt` from text, with ``encode`` (text -> ids, no special tokens)."""
    as_text = [t.decode("utf-8") if isinstance(t, bytes) else t for t in (prefix, suffix)]
    return build_fim_prompt(list(encode(as_text[0])) if as_text[0] else [],
                            list(encode(as_text[1])) if as_text[1] else [], tokens, **options)


# internals ------------------------------------------------------------------------------------
def _family_names() -> list[str]:
    return list(dict.fromkeys(f.name for f in FAMILIES))


def _token_index(vocab: Vocabulary) -> dict[bytes, int]:
    """bytes -> id, special tokens taking precedence over text tokens with the same bytes."""
    index: dict[bytes, int] = {}
    for tid, data in enumerate(vocab.token_bytes):
        if data.startswith((b"<", b" <", b"[", "\u2581<".encode())) and data not in index:
            index[data] = tid
    for tid in sorted(vocab.special_token_ids):
        index[vocab.token_bytes[tid]] = tid
    return index


_INDEX_CACHE: "weakref.WeakKeyDictionary[Vocabulary, dict[bytes, int]]" = \
    weakref.WeakKeyDictionary()


def _find_family(vocab: Vocabulary, family: FimFamily) -> FimTokens | None:
    index = _INDEX_CACHE.get(vocab)
    if index is None:
        index = _INDEX_CACHE[vocab] = _token_index(vocab)
    ids = [index.get(name) for name in (family.prefix, family.suffix, family.middle)]
    if any(i is None for i in ids):
        return None
    ends = {index[name] for name in family.end_tokens if name in index}
    return FimTokens(family.name, ids[0], ids[1], ids[2],
                     frozenset(ends) | frozenset(vocab.eos_token_ids))


def _split_budget(n_pre: int, n_suf: int, room: int) -> tuple[int, int]:
    """Prefix gets 3/4 of the room and the suffix 1/4; each lends its unused share."""
    want_pre = (3 * room) // 4
    want_suf = room - want_pre
    take_pre = min(n_pre, want_pre)
    take_suf = min(n_suf, want_suf)
    spare = room - take_pre - take_suf
    extra_pre = min(n_pre - take_pre, spare)
    take_pre += extra_pre
    take_suf += min(n_suf - take_suf, spare - extra_pre)
    return take_pre, take_suf
