"""Tool calls parsed back out of generated text."""
from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from .formats import ToolFormat


@dataclass
class ToolCall:
    """One call: the tool's name and its arguments (already parsed JSON)."""

    name: str
    arguments: Any
    id: str = field(default_factory=lambda: f"call_{uuid.uuid4().hex[:24]}")

    def to_openai(self) -> dict:
        """The call as an OpenAI chat message's ``tool_calls`` entry."""
        return {"id": self.id, "type": "function",
                "function": {"name": self.name,
                             "arguments": json.dumps(self.arguments, ensure_ascii=False)}}


def parse_tool_calls(text: str, fmt: ToolFormat) -> tuple[str, list[ToolCall]]:
    """(the text outside the calls, stripped; the calls in order). A call is ``fmt.begin``,
    a JSON object with the name and arguments, then ``fmt.end``; text that only looks like
    the start of a call (no complete JSON object and end after it) stays content. A call
    whose end is missing at the very end of the text counts (an end-of-sequence end token is
    not part of the text)."""
    decoder = json.JSONDecoder()
    calls, content, pos = [], [], 0
    while True:
        start = text.find(fmt.begin, pos)
        if start < 0:
            break
        body = start + len(fmt.begin)
        try:
            obj, stop = decoder.raw_decode(text, body)
        except ValueError:
            obj, stop = None, body
        # the end may be missing at the very end: an end-of-sequence token (Llama 3's
        # <|eom_id|>) that closed the call also ended the output, which does not show it
        closed = text.startswith(fmt.end, stop) or not text[stop:].strip()
        if isinstance(obj, dict) and isinstance(obj.get(fmt.name_key), str) and closed:
            content.append(text[pos:start])
            calls.append(ToolCall(obj[fmt.name_key], obj.get(fmt.arguments_key, {})))
            pos = min(len(text), stop + len(fmt.end)) if text.startswith(fmt.end, stop) \
                else len(text)
        else:
            content.append(text[pos:body])
            pos = body
    content.append(text[pos:])
    return "".join(content).strip(), calls
