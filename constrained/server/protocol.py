"""Reading OpenAI-style request bodies: every field checked, each error naming its field.

A request becomes a :class:`RequestPlan`: the constraint to compile, one sampling parameter set
per choice, the decode options, and how to format the answer. Field names and meanings follow
OpenAI's completions and chat completions APIs; the fields only this engine understands
(``grammar``, ``regex``, the llama.cpp and KoboldAI samplers, ``token_healing``,
``complete_within_budget``, vLLM's ``return_tokens_as_token_ids``) sit beside them. An unknown
field is an error, never silently ignored.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from samplers import SamplingParams
from samplers.errors import InvalidParameterError

_MAX_STOP = 16
_MAX_LOGPROBS = 20

# request field -> SamplingParams field (the engine's extra samplers, llama.cpp/KoboldAI names)
_SAMPLER_FIELDS = {
    "top_k": "top_k", "min_p": "min_p", "typical_p": "typical_p", "tfs": "tfs_z",
    "tfs_z": "tfs_z", "top_a": "top_a", "top_n_sigma": "top_n_sigma",
    "xtc_probability": "xtc_probability", "xtc_threshold": "xtc_threshold",
    "dynatemp_range": "dynatemp_range", "dynatemp_exponent": "dynatemp_exponent",
    "repeat_penalty": "repeat_penalty", "repeat_last_n": "repeat_last_n",
    "rep_pen_range": "rep_pen_range", "rep_pen_slope": "rep_pen_slope",
    "dry_multiplier": "dry_multiplier", "dry_base": "dry_base",
    "dry_allowed_length": "dry_allowed_length", "dry_penalty_last_n": "dry_penalty_last_n",
    "dry_sequence_breakers": "dry_sequence_breakers", "mirostat": "mirostat",
    "mirostat_tau": "mirostat_tau", "mirostat_eta": "mirostat_eta", "min_keep": "min_keep",
    "sampler_order": "samplers", "samplers": "samplers", "kobold_variant": "kobold_variant",
    "ignore_eos": "ignore_eos",
    # OpenAI's own
    "temperature": "temperature", "top_p": "top_p", "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
}
_COMMON_FIELDS = set(_SAMPLER_FIELDS) | {
    "model", "max_tokens", "n", "seed", "stop", "logit_bias", "stream", "stream_options",
    "response_format", "user", "grammar", "grammar_syntax", "regex", "token_healing",
    "complete_within_budget", "return_tokens_as_token_ids", "tools", "tool_choice",
    "parallel_tool_calls", "functions", "function_call", "reasoning_budget",
}
COMPLETION_FIELDS = _COMMON_FIELDS | {"prompt", "suffix", "logprobs", "echo", "best_of"}
CHAT_FIELDS = _COMMON_FIELDS | {"messages", "max_completion_tokens", "logprobs", "top_logprobs"}
# OpenAI's defaults (not llama.cpp's): plain softmax sampling at temperature 1
OPENAI_SAMPLING = SamplingParams(temperature=1.0, top_k=0, top_p=1.0, min_p=0.0)


class RequestError(Exception):
    """A request the server refuses: HTTP ``status``, the offending field as ``param``."""

    def __init__(self, message: str, param: str | None = None, status: int = 400,
                 kind: str = "invalid_request_error", code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.status = status
        self.kind = kind
        self.code = code

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.kind, "param": self.param,
                          "code": self.code}}


@dataclass(frozen=True)
class Constraint:
    """What the output must match: ``kind`` is "json_schema", "json_object", "lark", "gbnf",
    "regex", "structural_tag" (tool calls) or "text" (only a reasoning block); ``text`` the
    schema (canonical JSON), grammar, pattern or spec; ``param`` the field it came from (named
    in errors); ``reasoning``: a reasoning block of at most that many tokens opens the output."""

    kind: str
    text: str
    param: str
    reasoning: int | None = None


@dataclass
class RequestPlan:
    """A checked request: what to generate and how to answer."""

    chat: bool
    prompts: list[Any]                     # text, token ids or chat messages, one per prompt
    n: int
    constraint: Constraint | None
    sampling: SamplingParams
    seed: int | None
    max_tokens: int | None                 # None: the server's default
    stop: tuple[str, ...]
    stream: bool
    include_usage: bool
    logprobs: int | None                   # top alternatives per token (None: no logprobs)
    suffix: str | None = None
    token_healing: bool = False
    complete_within_budget: bool = False
    tokens_as_ids: bool = False
    max_tokens_param: str = "max_tokens"   # the field that set max_tokens (named in errors)
    tools: list | None = None              # the request's tools (answers carry tool_calls)
    extra: dict[str, Any] = field(default_factory=dict)


def _bool(body: dict, name: str, default: bool = False) -> bool:
    value = body.get(name, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise RequestError(f"'{name}' must be a boolean", name)
    return value


def _int(body: dict, name: str, lo: int | None = None, hi: int | None = None) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestError(f"'{name}' must be an integer", name)
    if lo is not None and value < lo or hi is not None and value > hi:
        bounds = f"at least {lo}" if hi is None else f"between {lo} and {hi}"
        raise RequestError(f"'{name}' must be {bounds}, got {value}", name)
    return value


def _check_fields(body: Any, allowed: set[str]) -> None:
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object")
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise RequestError(f"unrecognized request field '{unknown[0]}'", unknown[0])


def _sampling(body: dict) -> SamplingParams:
    values: dict[str, Any] = {}
    for name, target in _SAMPLER_FIELDS.items():
        if body.get(name) is not None:
            if target in values:
                raise RequestError(f"'{name}' repeats another field for the same sampler", name)
            values[target] = body[name]
    temperature = values.get("temperature")
    if isinstance(temperature, (int, float)) and not isinstance(temperature, bool) \
            and temperature < 0:
        raise RequestError(f"'temperature' must be at least 0, got {temperature}",
                           "temperature")
    bias = body.get("logit_bias")
    if bias is not None:
        values["logit_bias"] = _logit_bias(bias)
    try:
        return OPENAI_SAMPLING.replace(**values)
    except InvalidParameterError as exc:
        param = next((k for k, v in _SAMPLER_FIELDS.items() if v == exc.param and k in body),
                     exc.param)
        raise RequestError(str(exc), param) from None
    except (TypeError, ValueError) as exc:
        raise RequestError(str(exc), "sampling") from None


def _logit_bias(bias: Any) -> list[tuple[int, float]]:
    if not isinstance(bias, dict):
        raise RequestError("'logit_bias' must map token ids to numbers", "logit_bias")
    out = []
    for key, value in bias.items():
        try:
            token = int(key)
        except (TypeError, ValueError):
            raise RequestError(f"logit_bias key {key!r} is not a token id", "logit_bias") \
                from None
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not -100 <= value <= 100:
            raise RequestError(f"logit_bias[{key}] must be a number from -100 to 100",
                               "logit_bias")
        out.append((token, float(value)))
    return out


def _stop(body: dict) -> tuple[str, ...]:
    stop = body.get("stop")
    if stop is None:
        return ()
    if isinstance(stop, str):
        stop = [stop]
    if not isinstance(stop, list) or not all(isinstance(s, str) and s for s in stop):
        raise RequestError("'stop' must be a non-empty string or a list of them", "stop")
    if len(stop) > _MAX_STOP:
        raise RequestError(f"'stop' holds at most {_MAX_STOP} strings", "stop")
    return tuple(stop)


def _constraint(body: dict) -> Constraint | None:
    import json
    found: list[Constraint] = []
    fmt = body.get("response_format")
    if fmt is not None:
        if not isinstance(fmt, dict) or not isinstance(fmt.get("type"), str):
            raise RequestError("'response_format' must be an object with a 'type'",
                               "response_format")
        kind = fmt["type"]
        if kind == "json_schema":
            spec = fmt.get("json_schema")
            if not isinstance(spec, dict) or "schema" not in spec:
                raise RequestError("response_format.json_schema must be an object with a "
                                   "'schema'", "response_format.json_schema")
            strict = spec.get("strict")
            if strict is not None and not isinstance(strict, bool):
                raise RequestError("'strict' must be a boolean",
                                   "response_format.json_schema.strict")
            schema = spec["schema"]
            if not isinstance(schema, (dict, bool)):
                raise RequestError("the schema must be a JSON object or boolean",
                                   "response_format.json_schema.schema")
            # key order kept: the schema's property order is the generated order
            found.append(Constraint("json_schema", json.dumps(schema),
                                    "response_format.json_schema.schema"))
        elif kind == "json_object":
            found.append(Constraint("json_object", "", "response_format"))
        elif kind != "text":
            raise RequestError(f"unknown response_format type {kind!r}: use 'json_schema', "
                               "'json_object' or 'text'", "response_format.type")
    grammar = body.get("grammar")
    if grammar is not None:
        if not isinstance(grammar, str) or not grammar.strip():
            raise RequestError("'grammar' must be Lark or GBNF grammar text", "grammar")
        syntax = body.get("grammar_syntax")
        if syntax is None:
            syntax = "gbnf" if "::=" in grammar else "lark"
        if syntax not in ("lark", "gbnf"):
            raise RequestError("'grammar_syntax' must be 'lark' or 'gbnf'", "grammar_syntax")
        found.append(Constraint(syntax, grammar, "grammar"))
    elif body.get("grammar_syntax") is not None:
        raise RequestError("'grammar_syntax' needs a 'grammar'", "grammar_syntax")
    regex = body.get("regex")
    if regex is not None:
        if not isinstance(regex, str):
            raise RequestError("'regex' must be a string", "regex")
        found.append(Constraint("regex", regex, "regex"))
    if len(found) > 1:
        raise RequestError(f"give one constraint: '{found[0].param}' and '{found[1].param}' "
                           "were both given", found[1].param)
    return found[0] if found else None


def _field_of(pointer: str | None, default: str) -> str:
    """A JSON pointer (``/tools/0/function/name``) as a request field (``tools[0].function.
    name``)."""
    if not pointer or pointer == "/":
        return default
    out = ""
    for part in pointer.strip("/").split("/"):
        out += f"[{part}]" if part.isdigit() else (f".{part}" if out else part)
    return out


def _tools(body: dict, chat: bool, constraint: Constraint | None) -> tuple[list | None,
                                                                           Constraint | None]:
    """(the tools, the constraint of an answer with tool calls) of a request with ``tools``."""
    import json
    for name in ("functions", "function_call"):
        if body.get(name) is not None:
            raise RequestError(f"'{name}' is the deprecated form: use 'tools' and "
                               "'tool_choice'", name)
    tools = body.get("tools")
    choice = body.get("tool_choice")
    parallel = body.get("parallel_tool_calls", True)
    if not isinstance(parallel, bool):
        raise RequestError("'parallel_tool_calls' must be a boolean", "parallel_tool_calls")
    if not tools:
        if choice not in (None, "none", "auto"):
            raise RequestError("'tool_choice' needs 'tools'", "tool_choice")
        return None, constraint
    if not chat:
        raise RequestError("'tools' are for /v1/chat/completions", "tools")
    if constraint is not None:
        raise RequestError(f"give 'tools' or '{constraint.param}', not both", "tools")
    from ..errors import GrammarError
    from ..tools import tools_structural_tag
    try:
        spec = tools_structural_tag(tools, "auto" if choice is None else choice,
                                    parallel_tool_calls=parallel)
    except GrammarError as exc:
        where = _field_of(exc.pointer, "tools")
        raise RequestError(f"invalid {where}: {exc}", where) from None
    return list(tools), Constraint("structural_tag", json.dumps(spec), "tools")


def _with_reasoning(body: dict, constraint: Constraint | None) -> Constraint | None:
    budget = _int(body, "reasoning_budget", 1)
    if budget is None:
        return constraint
    if constraint is None:
        return Constraint("text", "", "reasoning_budget", budget)
    return Constraint(constraint.kind, constraint.text, constraint.param, budget)


def _common(body: dict, chat: bool, max_n: int) -> dict[str, Any]:
    tools, constraint = _tools(body, chat, _constraint(body))
    constraint = _with_reasoning(body, constraint)
    if body.get("model") is not None and not isinstance(body["model"], str):
        raise RequestError("'model' must be a string", "model")
    stream = _bool(body, "stream")
    options = body.get("stream_options")
    include_usage = False
    if options is not None:
        if not isinstance(options, dict) or set(options) - {"include_usage"}:
            raise RequestError("'stream_options' may only hold 'include_usage'",
                               "stream_options")
        if not stream:
            raise RequestError("'stream_options' needs 'stream': true", "stream_options")
        include_usage = _bool(options, "include_usage")
    return dict(chat=chat, n=_int(body, "n", 1, max_n) or 1, constraint=constraint, tools=tools,
                sampling=_sampling(body), seed=_int(body, "seed"), stop=_stop(body),
                stream=stream, include_usage=include_usage,
                token_healing=_bool(body, "token_healing"),
                complete_within_budget=_bool(body, "complete_within_budget"),
                tokens_as_ids=_bool(body, "return_tokens_as_token_ids"))


def completion_plan(body: Any, *, max_n: int) -> RequestPlan:
    """A checked /v1/completions request."""
    _check_fields(body, COMPLETION_FIELDS)
    common = _common(body, False, max_n)
    if _bool(body, "echo"):
        raise RequestError("'echo' is not supported", "echo")
    if body.get("best_of") not in (None, 1):
        raise RequestError("'best_of' is not supported (use 'n')", "best_of")
    prompt = body.get("prompt")
    if isinstance(prompt, str) or _token_ids(prompt):
        prompts = [prompt]
    elif isinstance(prompt, list) and prompt and all(
            isinstance(p, str) or _token_ids(p) for p in prompt):
        prompts = list(prompt)
    else:
        raise RequestError("'prompt' must be a string, a list of token ids, or a list of "
                           "those", "prompt")
    suffix = body.get("suffix")
    if suffix is not None and not isinstance(suffix, str):
        raise RequestError("'suffix' must be a string", "suffix")
    if suffix and common["token_healing"]:
        raise RequestError("'token_healing' and 'suffix' cannot be combined", "token_healing")
    return RequestPlan(prompts=prompts, max_tokens=_int(body, "max_tokens", 1),
                       logprobs=_int(body, "logprobs", 0, _MAX_LOGPROBS), suffix=suffix or None,
                       **common)


def chat_plan(body: Any, *, max_n: int) -> RequestPlan:
    """A checked /v1/chat/completions request."""
    _check_fields(body, CHAT_FIELDS)
    common = _common(body, True, max_n)
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError("'messages' must be a non-empty list", "messages")
    clean = []
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise RequestError(f"{where} must be an object with a 'role'", where)
        if message["role"] not in ("system", "developer", "user", "assistant", "tool"):
            raise RequestError(f"{where}.role {message['role']!r} is not a known role",
                               f"{where}.role")
        role = "system" if message["role"] == "developer" else message["role"]
        entry = {"role": role, "content": _content(message.get("content"), where)}
        calls = message.get("tool_calls")
        if calls is not None:
            entry["tool_calls"] = _history_calls(calls, f"{where}.tool_calls")
        for key in ("tool_call_id", "name"):
            if message.get(key) is not None:
                if not isinstance(message[key], str):
                    raise RequestError(f"{where}.{key} must be a string", f"{where}.{key}")
                entry[key] = message[key]
        clean.append(entry)
    max_tokens = _int(body, "max_completion_tokens", 1)
    legacy = _int(body, "max_tokens", 1)
    if max_tokens is not None and legacy is not None:
        raise RequestError("give 'max_completion_tokens' or 'max_tokens', not both",
                           "max_tokens")
    top = _int(body, "top_logprobs", 0, _MAX_LOGPROBS)
    wants = _bool(body, "logprobs")
    if top is not None and not wants:
        raise RequestError("'top_logprobs' needs 'logprobs': true", "top_logprobs")
    return RequestPlan(prompts=[clean], max_tokens=max_tokens if max_tokens is not None
                       else legacy, logprobs=(top or 0) if wants else None,
                       max_tokens_param="max_tokens" if legacy is not None
                       else "max_completion_tokens", **common)


def _history_calls(calls: Any, where: str) -> list[dict]:
    """An assistant message's earlier tool calls, for the chat template (arguments parsed
    from their JSON text, as templates expect)."""
    import json
    if not isinstance(calls, list):
        raise RequestError(f"{where} must be a list", where)
    out = []
    for i, call in enumerate(calls):
        fn = call.get("function") if isinstance(call, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise RequestError(f"{where}[{i}] must be {{'type': 'function', 'function': "
                               "{'name', 'arguments'}}", f"{where}[{i}]")
        args = fn.get("arguments", "{}")
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except ValueError:
                raise RequestError(f"{where}[{i}].function.arguments is not JSON",
                                   f"{where}[{i}].function.arguments") from None
        out.append({"id": call.get("id"), "type": "function",
                    "function": {"name": fn["name"], "arguments": args}})
    return out


def _content(content: Any, where: str) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for j, part in enumerate(content):
            if not isinstance(part, dict) or part.get("type") != "text" \
                    or not isinstance(part.get("text"), str):
                raise RequestError(f"{where}.content[{j}]: only text parts are supported",
                                   f"{where}.content[{j}]")
            parts.append(part["text"])
        return "".join(parts)
    raise RequestError(f"{where}.content must be a string or a list of text parts",
                       f"{where}.content")


def _token_ids(x: Any) -> bool:
    return isinstance(x, list) and bool(x) and all(
        isinstance(t, int) and not isinstance(t, bool) for t in x)
