"""Load a grammar from a file, choosing the front-end by the file's extension."""
from __future__ import annotations

import os

from ..errors import GrammarError, GrammarFileError, LimitExceededError

_EXTENSIONS = (".lark", ".gbnf", ".json")


def grammar_from_file(cls, path, *, max_file_bytes: int = 16 << 20, **kwargs):
    """See ``Grammar.from_file``: .lark (Lark), .gbnf (GBNF), .json (JSON Schema, or a
    structural tag when its top-level ``type`` is ``"structural_tag"``; ``vocab=`` then maps
    special token texts to tokens); files larger than ``max_file_bytes`` are refused before
    they are read."""
    max_bytes = max_file_bytes
    path = os.fspath(path)
    ext = os.path.splitext(path)[1].lower()
    if ext not in _EXTENSIONS:
        raise GrammarFileError(f"cannot tell the grammar format of {path!r}: expected one of "
                               f"{', '.join(_EXTENSIONS)}")
    if not os.path.isfile(path):
        raise GrammarFileError(f"grammar file {path!r} does not exist")
    with open(path, "rb") as f:
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise LimitExceededError(f"grammar file {path!r} is larger than max_file_bytes="
                                 f"{max_bytes}")
    try:
        text = data.decode("utf-8-sig")  # tolerate a byte order mark
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise GrammarError(f"grammar file {path!r} is not UTF-8 ({e.reason})", line=line,
                           column=column) from None
    if ext == ".lark":
        kwargs.setdefault("path", path)
        return cls.from_lark(text, **kwargs)
    if ext == ".gbnf":
        return cls.from_gbnf(text, **kwargs)
    import json
    try:
        schema = json.loads(text)
    except json.JSONDecodeError as e:
        raise GrammarFileError(f"{path!r} is not valid JSON: {e.msg} "
                               f"(line {e.lineno}, column {e.colno})") from None
    if isinstance(schema, dict) and schema.get("type") == "structural_tag":
        return cls.from_structural_tag(schema, **kwargs)
    from_schema = getattr(cls, "from_json_schema", None)
    if from_schema is None:
        raise GrammarFileError("JSON Schema files need Grammar.from_json_schema, which is not "
                               "available in this build")
    return from_schema(schema, **kwargs)
