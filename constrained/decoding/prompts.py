"""Turn prompts (text, chat messages or token ids) into token id lists."""
from __future__ import annotations

from typing import Any, Sequence

from ..errors import DecodingError


def _is_token_ids(x: Any) -> bool:
    return isinstance(x, (list, tuple)) and len(x) > 0 and all(
        isinstance(t, int) and not isinstance(t, bool) for t in x)


def _is_messages(x: Any) -> bool:
    return isinstance(x, (list, tuple)) and len(x) > 0 and all(isinstance(m, dict) for m in x)


def split_prompts(prompts: Any) -> tuple[list, bool]:
    """(list of single prompts, whether a single prompt was given)."""
    if isinstance(prompts, str) or _is_token_ids(prompts) or _is_messages(prompts):
        return [prompts], True
    if hasattr(prompts, "tolist") and not isinstance(prompts, (list, tuple)):
        return split_prompts(prompts.tolist())
    if isinstance(prompts, (list, tuple)):
        if not prompts:
            raise DecodingError("empty batch: give at least one prompt")
        return list(prompts), False
    raise DecodingError(f"a prompt must be text, chat messages or token ids, not "
                        f"{type(prompts).__name__}")


def _with_system(messages: list, text: str) -> list:
    """``text`` added to (or as) the first, system message."""
    if messages and messages[0].get("role") == "system":
        first = dict(messages[0])
        first["content"] = f"{first.get('content') or ''}\n\n{text}".strip()
        return [first, *messages[1:]]
    return [{"role": "system", "content": text}, *messages]


def _render_with_tools(tokenizer, messages: list, tools: Sequence[dict],
                       instructions: str) -> list[int]:
    """The chat template given the tools; templates that do not show them get
    ``instructions`` in the system message instead."""
    def render(msgs, with_tools):
        kwargs = {"tools": list(tools)} if with_tools else {}
        return tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True,
                                             **kwargs)
    try:
        text = render(messages, True)
    except Exception:      # templates that reject a tools argument
        text = None
    names = [t.get("function", t).get("name", "") for t in tools]
    if text is None or not all(n in text for n in names):
        text = render(_with_system(messages, instructions), False)
    return [int(t) for t in tokenizer(text, add_special_tokens=False)["input_ids"]]


def encode_prompt(prompt: Any, tokenizer, *, chat: bool, system: str | None = None,
                  tools: Sequence[dict] | None = None, tool_instructions: str = ""
                  ) -> list[int]:
    """Token ids of one prompt; ``chat`` applies the tokenizer's chat template (given
    ``tools``, which it shows, or else ``tool_instructions`` as a system message)."""
    if _is_token_ids(prompt):
        return [int(t) for t in prompt]
    if isinstance(prompt, str) or _is_messages(prompt):
        if tokenizer is None:
            raise DecodingError("text prompts need a tokenizer; with a Vocabulary give token ids")
        if _is_messages(prompt) or chat:
            messages = list(prompt) if _is_messages(prompt) else [{"role": "user",
                                                                   "content": prompt}]
            if system is not None and messages[0].get("role") != "system":
                messages.insert(0, {"role": "system", "content": system})
            if getattr(tokenizer, "chat_template", None) is None:
                raise DecodingError("the tokenizer has no chat template: use chat=False")
            if tools:
                return _render_with_tools(tokenizer, messages, tools, tool_instructions)
            ids = tokenizer.apply_chat_template(messages, tokenize=True,
                                                add_generation_prompt=True)
            if hasattr(ids, "keys"):  # BatchEncoding in newer transformers
                ids = ids["input_ids"]
            ids = list(ids)
            if ids and isinstance(ids[0], list):
                ids = ids[0]
            return [int(t) for t in ids]
        ids = tokenizer(prompt, add_special_tokens=True)["input_ids"]
        if not ids:
            raise DecodingError("the prompt encodes to no tokens")
        return [int(t) for t in ids]
    if isinstance(prompt, (list, tuple)) and not prompt:
        raise DecodingError("empty prompt")
    raise DecodingError(f"a prompt must be text, chat messages or token ids, not "
                        f"{type(prompt).__name__}")


def check_prompt_ids(ids: Sequence[int], vocab_size: int) -> None:
    """DecodingError when a prompt token id is outside the vocabulary."""
    bad = [t for t in ids if not 0 <= t < vocab_size]
    if bad:
        raise DecodingError(f"prompt token id {bad[0]} is outside the vocabulary")


def encode_prompts(prompts: Sequence[Any], tokenizer, *, chat: bool,
                   system: str | None = None, tools: Sequence[dict] | None = None,
                   tool_instructions: str = "") -> list[list[int]]:
    return [encode_prompt(p, tokenizer, chat=chat, system=system, tools=tools,
                          tool_instructions=tool_instructions) for p in prompts]
