"""Tool calling: OpenAI-style tools -> a structural tag whose tags are the tools' calls, the
calls parsed back out of the generated text, and the prompt that shows the tools to a model."""
from .calls import ToolCall, parse_tool_calls
from .formats import TOOL_FORMATS, ToolFormat
from .spec import Tool, check_tools, tools_structural_tag

__all__ = ["ToolCall", "parse_tool_calls", "TOOL_FORMATS", "ToolFormat", "Tool", "check_tools",
           "tools_structural_tag"]
