"""OpenAI-style ``tools`` and ``tool_choice`` -> a structural tag of free text and calls."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import GrammarError
from .formats import TOOL_FORMATS, ToolFormat


@dataclass(frozen=True)
class Tool:
    """One function a model may call: its name and the JSON Schema of its arguments."""

    name: str
    parameters: Any
    description: str = ""


def check_tools(tools: Any) -> list[Tool]:
    """The tools of an OpenAI ``tools`` list (``{"type": "function", "function": {"name",
    "parameters", "description"}}``, or the bare function objects); GrammarError with the
    JSON pointer of a bad entry."""
    if not isinstance(tools, (list, tuple)) or not tools:
        raise GrammarError("tools must be a non-empty list", pointer="/tools")
    out, seen = [], set()
    for i, entry in enumerate(tools):
        where = f"/tools/{i}"
        if not isinstance(entry, dict):
            raise GrammarError("a tool must be an object", pointer=where)
        fn = entry
        if "function" in entry or entry.get("type") is not None:
            if entry.get("type", "function") != "function":
                raise GrammarError(f"tool type {entry.get('type')!r} is not supported (only "
                                   "'function')", pointer=f"{where}/type")
            fn, where = entry.get("function"), f"{where}/function"
            if not isinstance(fn, dict):
                raise GrammarError("'function' must be an object", pointer=where)
        name = fn.get("name")
        if not isinstance(name, str) or not name:
            raise GrammarError("a tool needs a non-empty 'name'", pointer=f"{where}/name")
        if name in seen:
            raise GrammarError(f"tool {name!r} is defined twice", pointer=f"{where}/name")
        seen.add(name)
        if "parameters" not in fn:
            raise GrammarError(f"tool {name!r} has no 'parameters' schema (use "
                               '{"type": "object", "properties": {}} for none)',
                               pointer=f"{where}/parameters")
        params = fn["parameters"]
        if not isinstance(params, (dict, bool)):
            raise GrammarError("'parameters' must be a JSON Schema", pointer=f"{where}/parameters")
        _check_schema(params, f"{where}/parameters")
        out.append(Tool(name, params, str(fn.get("description", ""))))
    return out


def _check_schema(schema: Any, pointer: str) -> None:
    """GrammarError at the schema's own pointer when the arguments schema cannot be compiled
    (converted as the structural tag will convert it, so the conversion is cached for it)."""
    from ..grammar import Grammar
    try:
        Grammar.from_json_schema(schema, strict_properties=True)
    except GrammarError as e:
        inner = e.pointer if e.pointer and e.pointer.startswith("/") else ""
        raise GrammarError(str(e), pointer=f"{pointer}{inner}") from None


def tool_format(name: str | ToolFormat) -> ToolFormat:
    if isinstance(name, ToolFormat):
        return name
    fmt = TOOL_FORMATS.get(name)
    if fmt is None:
        raise GrammarError(f"unknown tool format {name!r}; expected one of "
                           f"{', '.join(sorted(TOOL_FORMATS))}")
    return fmt


def tools_structural_tag(tools: Any, tool_choice: Any = "auto", *,
                         tool_format_name: str | ToolFormat = "hermes",
                         parallel_tool_calls: bool = True) -> dict:
    """The structural tag of an answer that may (``"auto"``: free text and calls), must
    (``"required"``, a named tool: calls only, separated by newlines) or must not (``"none"``:
    free text without the call trigger) call the tools, each call's arguments valid under its
    tool's schema. ``parallel_tool_calls=False`` (and a named tool) stops after one call."""
    fmt = tool_format(tool_format_name)
    checked = check_tools(tools)
    chosen = checked
    at_least_one = False
    if tool_choice == "none":
        return {"type": "structural_tag",
                "format": {"type": "any_text", "excludes": [fmt.trigger]}}
    if tool_choice == "required":
        at_least_one = True
    elif isinstance(tool_choice, dict):
        fn = tool_choice.get("function") if tool_choice.get("type") == "function" else None
        name = fn.get("name") if isinstance(fn, dict) else None
        chosen = [t for t in checked if t.name == name]
        if not chosen:
            raise GrammarError(f"tool_choice names {name!r}, which is not among the tools",
                               pointer="/tool_choice")
        at_least_one = True
    elif tool_choice != "auto":
        raise GrammarError(f"tool_choice must be 'auto', 'required', 'none' or "
                           f"{{'type': 'function', 'function': {{'name': ...}}}}, not "
                           f"{tool_choice!r}", pointer="/tool_choice")
    tags = [{"type": "tag", "begin": fmt.begin + fmt.call_prefix(t.name),
             "content": {"type": "json_schema", "json_schema": t.parameters},
             "end": "}" + fmt.end} for t in chosen]
    stop_after_first = not parallel_tool_calls or isinstance(tool_choice, dict)
    if at_least_one:      # calls only, from the first token on (as hosted APIs answer)
        return {"type": "structural_tag",
                "format": {"type": "tags_with_separator", "tags": tags, "separator": "\n",
                           "at_least_one": True, "stop_after_first": stop_after_first}}
    return {"type": "structural_tag",
            "format": {"type": "triggered_tags", "triggers": [fmt.trigger], "tags": tags,
                       "at_least_one": False, "stop_after_first": stop_after_first}}
