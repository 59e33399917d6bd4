"""One compiled grammar shared by 8 threads gives the masks one thread gives; the disk cache
survives concurrent writers and readers and never serves a partial or foreign file."""
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from constrained import Grammar, compile_grammar
from constrained.automata import disk_cache

ROOT = Path(__file__).resolve().parents[2]
THREADS = 8
DOCS = ['{"name": "Ada", "age": 36, "tags": ["x", "y"]}', '[1, 2.5, {"k": null}, "é中"]',
        '{"name": "Bo", "age": 7, "tags": []}', '  {"a": [true, false, "\\u00e9"]}  ']
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"},
                                           "age": {"type": "integer", "minimum": 0},
                                           "tags": {"type": "array", "items": {"type": "string"}}},
          "required": ["name", "age"]}


def _grammars():
    return {"json.lark": Grammar.from_file(ROOT / "grammars" / "json.lark"),
            "schema": Grammar.from_json_schema(SCHEMA),
            "regex": Grammar.from_regex(r'\{"name": "[A-Za-z]+", "age": [0-9]+.*')}


def _masks(cg, encode, doc: str) -> list[bytes]:
    """Every mask along ``doc``'s tokens (stopping where the grammar refuses it)."""
    m = cg.matcher()
    out = np.zeros((cg.vocab.size + 31) // 32, dtype=np.int32)
    got = []
    for tok in encode(doc):
        m.fill_next_token_bitmask(out)
        got.append(out.tobytes())
        if not m.accept_token(tok):
            break
    return got


@pytest.mark.slow
@pytest.mark.parametrize("name", ["json.lark", "schema", "regex"])
def test_eight_threads_share_one_compiled_grammar(name, llama3_vocab):
    import quicktok
    vocab, encode = llama3_vocab, quicktok.get_encoding("llama3").encode_ordinary
    grammar = _grammars()[name]
    reference = compile_grammar(grammar, vocab, cache=False)
    want = {doc: _masks(reference, encode, doc) for doc in DOCS}
    shared = compile_grammar(grammar, vocab, cache=False)   # cold: the threads race to fill it
    results, errors = {}, []
    start = threading.Barrier(THREADS)

    def work(k: int) -> None:
        try:
            start.wait()
            order = DOCS[k % len(DOCS):] + DOCS[:k % len(DOCS)]
            results[k] = {doc: _masks(shared, encode, doc) for doc in order * 2}
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert all(results[k] == want for k in range(THREADS))


_WRITER = r"""
import os, sys
import numpy as np
from constrained.automata import disk_cache
k = int(sys.argv[1])
for i in range(60):
    n = 1000 + 997 * ((k + i) % 5)        # payloads of several sizes, one file name
    disk_cache.save_arrays("race.bin", {"a": np.full(n, k, dtype=np.int64),
                                        "n": np.array([n], dtype=np.int64)})
    got = disk_cache.load_arrays("race.bin")
    if got is not None:
        a, n2 = got["a"], int(got["n"][0])
        assert len(a) == n2 and (a == a[0]).all(), "a torn or mixed file was served"
print("ok")
"""


def test_disk_cache_survives_concurrent_writers(tmp_path):
    env = {**os.environ, "CONSTRAINED_CACHE_DIR": str(tmp_path)}
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(k)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for k in range(4)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 and o.strip() == "ok" for p, (o, _e) in zip(procs, outs)), outs
    assert not list(tmp_path.glob(".tmp-*"))      # no temporary file left behind
    os.environ["CONSTRAINED_CACHE_DIR"], old = str(tmp_path), os.environ.get(
        "CONSTRAINED_CACHE_DIR")
    try:
        got = disk_cache.load_arrays("race.bin")
        assert got is not None and len(got["a"]) == int(got["n"][0])
    finally:
        if old is None:
            del os.environ["CONSTRAINED_CACHE_DIR"]
        else:
            os.environ["CONSTRAINED_CACHE_DIR"] = old


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty", "header"])
def test_damaged_cache_file_is_rebuilt_never_trusted(tmp_path, monkeypatch, damage):
    monkeypatch.setenv("CONSTRAINED_CACHE_DIR", str(tmp_path))
    arrays = {"x": np.arange(5000, dtype=np.int32)}
    assert disk_cache.save_arrays("d.bin", arrays)
    path = tmp_path / "d.bin"
    data = bytearray(path.read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "flip":
        data[-100] ^= 0xFF
    elif damage == "garbage":
        data = bytearray(os.urandom(len(data)))
    elif damage == "empty":
        data = bytearray()
    else:
        data[10] ^= 0x01
    path.write_bytes(bytes(data))
    assert disk_cache.load_arrays("d.bin") is None and not path.exists()
    assert disk_cache.save_arrays("d.bin", arrays)
    assert np.array_equal(disk_cache.load_arrays("d.bin")["x"], arrays["x"])
