"""A small on-disk store of named numpy arrays, safe against crashes and corruption.

Files live in ``$CONSTRAINED_CACHE_DIR`` (default ``~/.cache/constrained``). A file is written to
a temporary name and moved into place with ``os.replace``, and carries a CRC-32 of its payload
and its length: a truncated or corrupt file is detected on load, deleted and reported as
missing, never trusted. (The check guards against damage, not against someone who may write to
the folder, which no digest stored beside the data could; CRC-32 reads the several megabytes of
a vocabulary's tables about four times faster than SHA-256, and every new process reads them.)
Arrays are stored raw after a small JSON header and loaded as read-only views (no copies).

``save_arrays(name, arrays)`` and ``load_arrays(name) -> dict | None``; ``name`` is a file name
made by the caller from content hashes (see ``cache_name``).

The folder is bounded: after each save, the least recently used files (a load touches its
file) are deleted until the folder holds at most ``$CONSTRAINED_CACHE_MAX_BYTES`` (default
512 MiB). ``prune_cache(max_bytes)`` does the same on demand (``python -m constrained cache``).
"""
from __future__ import annotations

import hashlib
import json
import mmap
import os
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np

_MAGIC = b"CSTRARR3"
DEFAULT_MAX_BYTES = 512 << 20


_CHECK_BYTES = 16


def _check_bytes(payload) -> bytes:
    """The payload's check field: its length and its CRC-32 (8 bytes each, little-endian)."""
    return len(payload).to_bytes(8, "little") + zlib.crc32(payload).to_bytes(8, "little")


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
            f.write(_check_bytes(payload))
            f.write(payload)
        os.replace(tmp, directory / name)
        prune_cache()
        return True
    except OSError:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return False


def load_arrays(name: str) -> dict[str, np.ndarray] | None:
    """The arrays saved under ``name``, or None when missing, truncated or corrupt. The file
    is mapped, not read: the arrays are views of the page cache (a writer replaces files and
    the pruning deletes them, never changes one in place, so a mapping stays valid)."""
    path = cache_dir() / name
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
    except (OSError, ValueError):
        return None
    head = len(_MAGIC) + _CHECK_BYTES
    ok = (len(data) > head and data[:len(_MAGIC)] == _MAGIC
          and _check_bytes(memoryview(data)[head:]) == data[len(_MAGIC):head])
    if ok:
        try:
            arrays = _parse(memoryview(data)[head:])
            _touch(path)
            return arrays
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


def max_cache_bytes() -> int:
    """The folder's size bound: ``$CONSTRAINED_CACHE_MAX_BYTES`` or 512 MiB."""
    env = os.environ.get("CONSTRAINED_CACHE_MAX_BYTES", "")
    try:
        return max(0, int(env)) if env.strip() else DEFAULT_MAX_BYTES
    except ValueError:
        return DEFAULT_MAX_BYTES


def cache_usage() -> tuple[int, int]:
    """(files, bytes) the cache folder holds."""
    entries = _entries()
    return len(entries), sum(size for _, size, _ in entries)


def prune_cache(max_bytes: int | None = None) -> tuple[int, int]:
    """Delete the least recently used cache files until at most ``max_bytes`` remain
    (default ``max_cache_bytes()``); returns (files deleted, bytes freed)."""
    limit = max_cache_bytes() if max_bytes is None else max(0, int(max_bytes))
    entries = _entries()
    total = sum(size for _, size, _ in entries)
    removed = freed = 0
    for _, size, path in sorted(entries):
        if total <= limit:
            break
        try:
            path.unlink()
        except OSError:
            continue
        total -= size
        removed += 1
        freed += size
    return removed, freed


def _entries() -> list[tuple[float, int, Path]]:
    """(last use, size, path) of every cache file (temporary files of writers included once
    they are an hour old: a crashed writer's leftovers)."""
    out = []
    try:
        names = os.listdir(cache_dir())
    except OSError:
        return out
    for name in names:
        path = cache_dir() / name
        try:
            st = path.stat()
        except OSError:
            continue
        if name.startswith(".tmp-") and st.st_mtime > time.time() - 3600:
            continue
        out.append((st.st_mtime, st.st_size, path))
    return out


def _touch(path: Path) -> None:
    try:
        os.utime(path)
    except OSError:
        pass
