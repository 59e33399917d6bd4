"""How a model family writes a tool call: the text around the call's JSON."""
from __future__ import annotations

import json
from dataclasses import dataclass


@dataclass(frozen=True)
class ToolFormat:
    """A call is ``begin + {"<name_key>": "<name>", "<arguments_key>": <arguments>} + end``;
    free text may come before and between calls; ``trigger`` (a prefix of ``begin``) is where
    the call starts. With a vocabulary whose special tokens include ``begin``'s tag (Qwen3's
    ``<tool_call>``), the tag is that token."""

    name: str
    trigger: str
    begin: str
    end: str
    name_key: str = "name"
    arguments_key: str = "arguments"

    def call_prefix(self, tool: str) -> str:
        """The text of a call up to its arguments (``{"name": "f", "arguments": ``)."""
        return f'{{"{self.name_key}": {json.dumps(tool)}, "{self.arguments_key}": '

    def instructions(self, tools: list[dict]) -> str:
        """A system prompt showing the tools and the call format (for chat templates that do
        not render tools themselves)."""
        listed = "\n".join(json.dumps(t, ensure_ascii=False) for t in tools)
        example = (f'{self.begin}{{"{self.name_key}": <function-name>, "{self.arguments_key}": '
                   f'<arguments-json-object>}}{self.end}')
        return ("You may call one or more functions to assist with the user query.\n"
                f"Function signatures:\n{listed}\n"
                f"To call a function, write:\n{example}")


# Hermes / Qwen (2.5, 3) / SmolLM3 chat templates
HERMES = ToolFormat("hermes", "<tool_call>", "<tool_call>\n", "\n</tool_call>")
# Llama 3.1+ JSON tool calls
LLAMA3_JSON = ToolFormat("llama3_json", "<|python_tag|>", "<|python_tag|>", "<|eom_id|>",
                         arguments_key="parameters")

TOOL_FORMATS = {f.name: f for f in (HERMES, LLAMA3_JSON)}
