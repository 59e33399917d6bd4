"""A small on-disk store of named numpy arrays, safe against crashes and corruption.

Files live in ``$CONSTRAINED_CACHE_DIR`` (default ``~/.cache/constrained``). A file is written to
a temporary name and moved into place with ``os.replace``, and carries a SHA-256 of its payload: a
truncated or corrupt file is detected on load, deleted and reported as missing, never trusted.
Arrays are stored raw after a small JSON header and loaded as read-only views (no copies).

``save_arrays(name, arrays)`` and ``load_arrays(name) -> dict | None``; ``name`` is a file name
made by the caller from content hashes (see ``cache_name``).
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

import numpy as np

_MAGIC = b"CSTRARR2"


def cache_dir() -> Path:
    """The cache directory (not created until something is saved)."""
    env = os.environ.get("CONSTRAINED_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "constrained"


def cache_name(kind: str, *parts: str) -> str:
    """A file name for ``kind`` keyed by a digest of ``parts``."""
    h = hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()
    return f"{kind}-{h[:40]}.bin"


def save_arrays(name: str, arrays: dict[str, np.ndarray]) -> bool:
    """Write ``arrays`` atomically under ``name``; False (no error) when the disk refuses."""
    header, blobs, offset = {}, [], 0
    for key, arr in arrays.items():
        arr = np.ascontiguousarray(arr)
        header[key] = [arr.dtype.str, list(arr.shape), offset, arr.nbytes]
        blobs.append(arr.tobytes())
        offset += arr.nbytes
    head = json.dumps(header).encode()
    payload = len(head).to_bytes(8, "little") + head + b"".join(blobs)
    directory = cache_dir()
    tmp = None
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=directory)
        with os.fdopen(fd, "wb") as f:
            f.write(_MAGIC)
            f.write(hashlib.sha256(payload).digest())
            f.write(payload)
        os.replace(tmp, directory / name)
        return True
    except OSError:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return False


def load_arrays(name: str) -> dict[str, np.ndarray] | None:
    """The arrays saved under ``name``, or None when missing, truncated or corrupt."""
    path = cache_dir() / name
    try:
        data = path.read_bytes()
    except OSError:
        return None
    head = len(_MAGIC) + 32
    ok = (len(data) > head and data[:len(_MAGIC)] == _MAGIC
          and hashlib.sha256(memoryview(data)[head:]).digest() == data[len(_MAGIC):head])
    if ok:
        try:
            return _parse(memoryview(data)[head:])
        except (ValueError, TypeError, KeyError):  # passes the digest but does not parse
            ok = False
    try:
        path.unlink()
    except OSError:
        pass
    return None


def _parse(payload: memoryview) -> dict[str, np.ndarray]:
    n = int.from_bytes(payload[:8], "little")
    header = json.loads(bytes(payload[8:8 + n]))
    body = payload[8 + n:]
    out = {}
    for key, (dtype, shape, offset, nbytes) in header.items():
        if offset < 0 or offset + nbytes > len(body):
            raise ValueError("array outside the payload")
        arr = np.frombuffer(body, dtype=np.dtype(dtype), count=int(np.prod(shape, dtype=np.int64)),
                            offset=offset)
        if arr.nbytes != nbytes:
            raise ValueError("array size mismatch")
        out[key] = arr.reshape(tuple(shape))
    return out
