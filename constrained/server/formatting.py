"""OpenAI response objects: completions, chat completions, their stream chunks and logprobs."""
from __future__ import annotations

import time
from typing import Any, Sequence

from ..decoding.result import FINISH_LENGTH
from ..tools import parse_tool_calls
from ..tools.formats import HERMES


def finish_reason(reason: str | None) -> str | None:
    """OpenAI's finish reasons: "length" when the budget ran out, else "stop"."""
    if reason is None:
        return None
    return "length" if reason == FINISH_LENGTH else "stop"


class Formatter:
    """Builds the JSON bodies of one response (one id, one creation time)."""

    def __init__(self, chat: bool, model: str, token_bytes: Sequence[bytes], n_tokens: int,
                 tokens_as_ids: bool, tools: list | None = None) -> None:
        self.chat = chat
        self.tools = tools
        self.model = model
        self.created = int(time.time())
        self.id = f"{'chatcmpl' if chat else 'cmpl'}-{time.time_ns():x}"
        self._bytes = token_bytes
        self._n = n_tokens
        self._as_ids = tokens_as_ids

    # tokens --------------------------------------------------------------------------------------
    def token_text(self, token: int) -> str:
        """A token as the response names it: its text, or "token_id:N" when asked."""
        return f"token_id:{token}" if self._as_ids else self._decoded(token)

    def _decoded(self, token: int) -> str:
        data = self._bytes[token] if 0 <= token < self._n else b""
        return data.decode("utf-8", errors="replace")

    def _token_bytes(self, token: int) -> list[int]:
        return list(self._bytes[token]) if 0 <= token < self._n else []

    def logprobs(self, tokens: Sequence[int], logprobs: Sequence[float],
                 tops: Sequence[dict[int, float]], offset: int = 0) -> dict[str, Any]:
        """The logprobs object of a run of tokens (text offsets start at ``offset``)."""
        if self.chat:
            return {"content": [
                {"token": self.token_text(t), "logprob": lp, "bytes": self._token_bytes(t),
                 "top_logprobs": [{"token": self.token_text(a), "logprob": v,
                                   "bytes": self._token_bytes(a)} for a, v in top.items()]}
                for t, lp, top in zip(tokens, logprobs, tops)], "refusal": None}
        offsets, at = [], offset
        for t in tokens:
            offsets.append(at)
            at += len(self._decoded(t))
        return {"tokens": [self.token_text(t) for t in tokens], "token_logprobs": list(logprobs),
                "top_logprobs": [{self.token_text(a): v for a, v in top.items()} for top in tops],
                "text_offset": offsets}

    # tool calls ----------------------------------------------------------------------------------
    def tool_calls(self, result) -> tuple[str | None, list[dict] | None]:
        """(content, tool_calls) of a chat answer: with tools, the calls parsed out of the
        text (content None when only calls were written), else (text, None)."""
        if not self.tools:
            return result.text, None
        content, calls = parse_tool_calls(result.text, HERMES)
        return (content or None) if calls else result.text, \
            [c.to_openai() for c in calls] or None

    def tool_call_chunk(self, index: int, result) -> tuple[dict[str, Any], str | None]:
        """The one chunk that carries a streamed answer with tools (content and calls come
        out whole: the text is only known to be a call once it is complete)."""
        content, calls = self.tool_calls(result)
        delta: dict[str, Any] = {}
        if content:
            delta["content"] = content
        if calls:
            delta["tool_calls"] = [dict(c, index=i) for i, c in enumerate(calls)]
        body = {"id": self.id, "object": "chat.completion.chunk", "created": self.created,
                "model": self.model, "choices": [{"index": index, "delta": delta,
                                                  "logprobs": None, "finish_reason": None}]}
        reason = finish_reason(result.finish_reason)
        return body, ("tool_calls" if calls and reason == "stop" else reason)

    # whole responses -----------------------------------------------------------------------------
    def response(self, choices: list[dict[str, Any]], usage: dict[str, int]) -> dict[str, Any]:
        return {"id": self.id, "object": "chat.completion" if self.chat else "text_completion",
                "created": self.created, "model": self.model, "choices": choices,
                "usage": usage, "system_fingerprint": None}

    def choice(self, index: int, result, logprobs: dict[str, Any] | None) -> dict[str, Any]:
        reason = finish_reason(result.finish_reason)
        if self.chat:
            content, calls = self.tool_calls(result)
            if calls:
                reason = "tool_calls" if reason == "stop" else reason
            return {"index": index, "message": {"role": "assistant", "content": content,
                                                "refusal": None, "tool_calls": calls},
                    "logprobs": logprobs, "finish_reason": reason}
        return {"index": index, "text": result.text, "logprobs": logprobs,
                "finish_reason": reason}

    # stream chunks -------------------------------------------------------------------------------
    def chunk(self, index: int, text: str | None, *, logprobs: dict[str, Any] | None = None,
              finish: str | None = None, role: bool = False,
              usage: bool = False) -> dict[str, Any]:
        if self.chat:
            delta: dict[str, Any] = {}
            if role:
                delta["role"] = "assistant"
            if text is not None:
                delta["content"] = text
            choice = {"index": index, "delta": delta, "logprobs": logprobs,
                      "finish_reason": finish}
        else:
            choice = {"index": index, "text": text or "", "logprobs": logprobs,
                      "finish_reason": finish}
        body = {"id": self.id, "object": "chat.completion.chunk" if self.chat
                else "text_completion", "created": self.created, "model": self.model,
                "choices": [choice]}
        if usage:
            body["usage"] = None
        return body

    def usage_chunk(self, usage: dict[str, int]) -> dict[str, Any]:
        return {"id": self.id, "object": "chat.completion.chunk" if self.chat
                else "text_completion", "created": self.created, "model": self.model,
                "choices": [], "usage": usage}


def usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens}
