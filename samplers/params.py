"""Sampling parameters (llama.cpp and KoboldAI names) and sampler-order resolution."""
from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any, Iterable, Mapping, Sequence

from .errors import InvalidParameterError, UnknownSamplerError

# Canonical sampler names. The selection step ("dist", "race", "greedy") always ends a chain.
SAMPLER_NAMES = (
    "logit_bias", "penalties", "rep_pen", "rep_pen_kcpp", "dry", "top_n_sigma", "top_k",
    "typical", "top_p", "min_p", "xtc", "temperature", "top_a", "tfs", "tfs_kai", "infill",
)
SELECTION_NAMES = ("dist", "race", "greedy")

_ALIASES = {
    "bias": "logit_bias",
    "penalty": "penalties", "repeat_penalty": "penalties", "repetition_penalty": "penalties",
    "rep_pen_koboldai": "rep_pen", "rep_pen_kai": "rep_pen",
    "rep_pen_koboldcpp": "rep_pen_kcpp",
    "nsigma": "top_n_sigma", "top_nsigma": "top_n_sigma",
    "typical_p": "typical", "typ_p": "typical", "typ": "typical", "locally_typical": "typical",
    "nucleus": "top_p",
    "temp": "temperature", "dynatemp": "temperature", "temp_ext": "temperature",
    "tail_free": "tfs", "tfs_z": "tfs", "tail_free_koboldcpp": "tfs", "tail_free_llama": "tfs",
    "tail_free_koboldai": "tfs_kai", "tail_free_kai": "tfs_kai",
    "multinomial": "dist", "exponential_race": "race", "gumbel": "race", "argmax": "greedy",
}

# llama.cpp's one-letter codes (common/sampling.cpp); 'f' is the tail-free letter of older versions.
LLAMA_LETTERS = {
    "e": "penalties", "d": "dry", "s": "top_n_sigma", "k": "top_k", "y": "typical",
    "p": "top_p", "m": "min_p", "x": "xtc", "t": "temperature", "f": "tfs", "i": "infill",
}
LLAMA_DEFAULT_ORDER = ("penalties", "dry", "top_n_sigma", "top_k", "typical", "top_p", "min_p",
                       "xtc", "temperature")

# KoboldAI numeric sampler ids: 0 top-k, 1 top-a, 2 top-p, 3 tail-free, 4 typical, 5 temperature,
# 6 repetition penalty. The variant decides which tail-free / repetition penalty is meant.
_KOBOLD_IDS = {
    "koboldai": {0: ("top_k",), 1: ("top_a",), 2: ("top_p",), 3: ("tfs_kai",), 4: ("typical",),
                 5: ("temperature",), 6: ("rep_pen",)},
    "koboldcpp": {0: ("top_k",), 1: ("top_a",), 2: ("top_p", "min_p"), 3: ("tfs",), 4: ("typical",),
                  5: ("temperature",), 6: ("rep_pen_kcpp",)},
}
KOBOLDAI_DEFAULT_ORDER = (6, 0, 1, 2, 3, 4, 5)
KOBOLDCPP_DEFAULT_ORDER = (6, 0, 1, 3, 4, 2, 5)

# other spellings of parameter names (llama.cpp server, KoboldAI / koboldcpp API, HF)
_PARAM_ALIASES = {
    "temp": "temperature", "typ_p": "typical_p", "typical": "typical_p", "tfs": "tfs_z",
    "nsigma": "top_n_sigma", "top_nsigma": "top_n_sigma",
    "rep_pen": "repeat_penalty", "repetition_penalty": "repeat_penalty", "penalty_repeat": "repeat_penalty",
    "penalty_last_n": "repeat_last_n", "repeat_last_n": "repeat_last_n",
    "penalty_freq": "frequency_penalty", "penalty_present": "presence_penalty",
    "dynatemp_exp": "dynatemp_exponent", "sampler_order": "samplers", "sampler_seed": "seed",
    "mirostat_mode": "mirostat", "dry_sequence_breaker": "dry_sequence_breakers",
    "dry_penalty_range": "dry_penalty_last_n",
}

DEFAULT_DRY_BREAKERS = ("\n", ":", "\"", "*")


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) or (
        hasattr(x, "__index__") and not isinstance(x, (bool, float)) and not hasattr(x, "is_integer"))


def _check_float(name: str, value: Any, lo: float | None = None, hi: float | None = None,
                 lo_open: bool = False, allow_inf: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
        raise InvalidParameterError(name, f"must be a number, got {value!r}")
    v = float(value)
    if math.isnan(v):
        raise InvalidParameterError(name, "must not be NaN")
    if math.isinf(v) and not allow_inf:
        raise InvalidParameterError(name, f"must be finite, got {v}")
    if lo is not None and (v < lo or (lo_open and v <= lo)):
        rel = ">" if lo_open else ">="
        raise InvalidParameterError(name, f"must be {rel} {lo}, got {v}")
    if hi is not None and v > hi:
        raise InvalidParameterError(name, f"must be <= {hi}, got {v}")
    return v


def _check_int(name: str, value: Any, lo: int | None = None) -> int:
    if isinstance(value, bool) or isinstance(value, float) or not _is_int(value):
        raise InvalidParameterError(name, f"must be an integer, got {value!r}")
    v = int(value)
    if lo is not None and v < lo:
        raise InvalidParameterError(name, f"must be >= {lo}, got {v}")
    return v


def canonical_name(item: str) -> str:
    """Map a sampler name or alias (case and '-' insensitive) to its canonical name."""
    if not isinstance(item, str):
        raise UnknownSamplerError(item)
    key = item.strip().lower().replace("-", "_").replace(" ", "_")
    key = _ALIASES.get(key, key)
    if key in SAMPLER_NAMES or key in SELECTION_NAMES:
        return key
    if key in ("mirostat", "mirostat_v2"):
        raise UnknownSamplerError(item, "mirostat is selected with the 'mirostat' parameter (1 or 2), "
                                        "not in the sampler order")
    raise UnknownSamplerError(item)


def parse_order(spec: str | Sequence[str | int], kobold_variant: str = "koboldcpp") -> tuple[str, ...]:
    """Resolve a sampler order given as llama.cpp letters ("edskypmxt"), names, or KoboldAI ids."""
    out: list[str] = []
    if isinstance(spec, str):
        s = spec.strip()
        if any(sep in s for sep in ";, ") or (len(s) > 1 and s.lower().replace("-", "_") in
                                             set(SAMPLER_NAMES) | set(SELECTION_NAMES) | set(_ALIASES)):
            items: list[str | int] = [p for p in s.replace(",", ";").replace(" ", ";").split(";") if p]
            return parse_order(items, kobold_variant)
        for ch in s:
            if ch not in LLAMA_LETTERS:
                raise UnknownSamplerError(ch, f"unknown sampler letter {ch!r} in {spec!r} "
                                              f"(known: {''.join(LLAMA_LETTERS)})")
            out.append(LLAMA_LETTERS[ch])
        return tuple(out)
    if kobold_variant not in _KOBOLD_IDS:
        raise InvalidParameterError("kobold_variant", f"must be 'koboldai' or 'koboldcpp', got {kobold_variant!r}")
    for item in spec:
        if isinstance(item, bool):
            raise UnknownSamplerError(item)
        if _is_int(item):
            ids = _KOBOLD_IDS[kobold_variant]
            if int(item) not in ids:
                raise UnknownSamplerError(item, f"unknown KoboldAI sampler id {item!r} (known: 0..6)")
            out.extend(ids[int(item)])
        else:
            out.append(canonical_name(item))
    return tuple(out)


def _norm_logit_bias(value: Any) -> tuple[tuple[int, float], ...]:
    if value is None:
        return ()
    items: Iterable[Any] = value.items() if isinstance(value, Mapping) else value
    acc: dict[int, float] = {}
    for pair in items:
        try:
            tok, bias = pair
        except (TypeError, ValueError):
            raise InvalidParameterError("logit_bias", f"entries must be (token, bias) pairs, got {pair!r}")
        tok = _check_int("logit_bias", tok, lo=0)
        b = _check_float("logit_bias", bias, allow_inf=True)
        if b == math.inf:
            raise InvalidParameterError("logit_bias", f"bias of token {tok} must not be +inf")
        acc[tok] = acc.get(tok, 0.0) + b
    return tuple(sorted(acc.items()))


def _norm_breakers(value: Any) -> tuple[str | tuple[int, ...], ...]:
    if value is None:
        return ()
    if isinstance(value, (str, bytes)):
        value = [value]
    out: list[str | tuple[int, ...]] = []
    for b in value:
        if isinstance(b, bytes):
            b = b.decode("utf-8", errors="replace")
        if isinstance(b, str):
            if b:
                out.append(b)
        elif isinstance(b, Iterable):
            seq = tuple(_check_int("dry_sequence_breakers", t, lo=0) for t in b)
            if seq:
                out.append(seq)
        else:
            raise InvalidParameterError("dry_sequence_breakers",
                                        f"entries must be strings or token-id sequences, got {b!r}")
    return tuple(out)


@dataclass(frozen=True)
class SamplingParams:
    """Sampling parameters of one sequence, with llama.cpp's defaults.

    Disabled values follow the references: top_k<=0, top_p>=1, min_p<=0, typical_p>=1, tfs_z>=1,
    top_a<=0, top_n_sigma<=0, xtc_probability<=0 or xtc_threshold>0.5, temperature==1 with
    dynatemp_range<=0, repeat_penalty==1 with zero frequency/presence or repeat_last_n==0,
    dry_multiplier==0 or dry_base<1 or dry_penalty_last_n==0.

    ``samplers`` is the order: None (llama.cpp's default), a letter string ("edskypmxt"), a list of
    names, or KoboldAI numeric ids ([6,0,1,3,4,2,5]) read according to ``kobold_variant``.
    ``seed`` -1 (or None) draws a random seed. ``selection`` is "dist" (seeded inverse-CDF draw),
    "race" (argmax p/E with E ~ Exp(1)) or "greedy".
    """

    temperature: float = 0.8
    top_k: int = 40
    top_p: float = 0.95
    min_p: float = 0.05
    typical_p: float = 1.0
    tfs_z: float = 1.0
    top_a: float = 0.0
    top_n_sigma: float = -1.0
    xtc_probability: float = 0.0
    xtc_threshold: float = 0.1
    dynatemp_range: float = 0.0
    dynatemp_exponent: float = 1.0
    repeat_penalty: float = 1.0
    repeat_last_n: int = 64
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0
    rep_pen_range: int = 1024
    rep_pen_slope: float = 0.7
    dry_multiplier: float = 0.0
    dry_base: float = 1.75
    dry_allowed_length: int = 2
    dry_penalty_last_n: int = 64
    dry_sequence_breakers: Any = DEFAULT_DRY_BREAKERS
    mirostat: int = 0
    mirostat_tau: float = 5.0
    mirostat_eta: float = 0.1
    logit_bias: Any = ()
    seed: int | None = -1
    samplers: Any = None
    min_keep: int = 0
    selection: str = "dist"
    ignore_eos: bool = False
    penalize_nl: bool = True
    kobold_variant: str = "koboldcpp"

    def __post_init__(self) -> None:
        s = object.__setattr__
        s(self, "temperature", _check_float("temperature", self.temperature))
        s(self, "top_k", _check_int("top_k", self.top_k, lo=-1))
        s(self, "top_p", _check_float("top_p", self.top_p, 0.0, 1.0))
        s(self, "min_p", _check_float("min_p", self.min_p, 0.0))
        s(self, "typical_p", _check_float("typical_p", self.typical_p, 0.0, 1.0))
        s(self, "tfs_z", _check_float("tfs_z", self.tfs_z, 0.0, 1.0))
        s(self, "top_a", _check_float("top_a", self.top_a, 0.0))
        s(self, "top_n_sigma", _check_float("top_n_sigma", self.top_n_sigma))
        s(self, "xtc_probability", _check_float("xtc_probability", self.xtc_probability, 0.0, 1.0))
        s(self, "xtc_threshold", _check_float("xtc_threshold", self.xtc_threshold, 0.0, 1.0))
        s(self, "dynatemp_range", _check_float("dynatemp_range", self.dynatemp_range, 0.0))
        s(self, "dynatemp_exponent", _check_float("dynatemp_exponent", self.dynatemp_exponent, 0.0))
        s(self, "repeat_penalty", _check_float("repeat_penalty", self.repeat_penalty, 0.0, lo_open=True))
        s(self, "repeat_last_n", _check_int("repeat_last_n", self.repeat_last_n, lo=-1))
        s(self, "frequency_penalty", _check_float("frequency_penalty", self.frequency_penalty))
        s(self, "presence_penalty", _check_float("presence_penalty", self.presence_penalty))
        s(self, "rep_pen_range", _check_int("rep_pen_range", self.rep_pen_range, lo=0))
        s(self, "rep_pen_slope", _check_float("rep_pen_slope", self.rep_pen_slope, 0.0))
        s(self, "dry_multiplier", _check_float("dry_multiplier", self.dry_multiplier, 0.0))
        s(self, "dry_base", _check_float("dry_base", self.dry_base, 0.0))
        s(self, "dry_allowed_length", _check_int("dry_allowed_length", self.dry_allowed_length, lo=0))
        s(self, "dry_penalty_last_n", _check_int("dry_penalty_last_n", self.dry_penalty_last_n, lo=-1))
        s(self, "dry_sequence_breakers", _norm_breakers(self.dry_sequence_breakers))
        m = _check_int("mirostat", self.mirostat, lo=0)
        if m not in (0, 1, 2):
            raise InvalidParameterError("mirostat", f"must be 0, 1 or 2, got {m}")
        s(self, "mirostat", m)
        s(self, "mirostat_tau", _check_float("mirostat_tau", self.mirostat_tau, 0.0))
        s(self, "mirostat_eta", _check_float("mirostat_eta", self.mirostat_eta, 0.0))
        s(self, "logit_bias", _norm_logit_bias(self.logit_bias))
        if self.seed is not None:
            seed = _check_int("seed", self.seed, lo=-1)
            s(self, "seed", None if seed == -1 else seed)
        s(self, "min_keep", _check_int("min_keep", self.min_keep, lo=0))
        if self.kobold_variant not in _KOBOLD_IDS:
            raise InvalidParameterError("kobold_variant",
                                        f"must be 'koboldai' or 'koboldcpp', got {self.kobold_variant!r}")
        try:
            sel = canonical_name(self.selection) if isinstance(self.selection, str) else None
        except UnknownSamplerError:
            sel = None
        if sel not in SELECTION_NAMES:
            raise InvalidParameterError("selection", f"must be one of {SELECTION_NAMES}, got {self.selection!r}")
        s(self, "selection", sel)
        if self.samplers is not None:
            if isinstance(self.samplers, str):
                order = parse_order(self.samplers, self.kobold_variant)
            else:
                order = parse_order(list(self.samplers), self.kobold_variant)
            s(self, "samplers", order)

    # ------------------------------------------------------------------ order
    def resolved_order(self) -> tuple[str, ...]:
        """The full chain: logit_bias first, the (possibly mirostat) samplers, selection last."""
        if self.mirostat:
            return ("logit_bias", "temperature", "mirostat", self.selection)
        body = LLAMA_DEFAULT_ORDER if self.samplers is None else self.samplers
        sel = self.selection
        if body and body[-1] in SELECTION_NAMES:
            sel = body[-1]
        body = tuple(n for n in body if n not in SELECTION_NAMES)
        if "logit_bias" not in body:
            body = ("logit_bias",) + body
        return body + (sel,)

    def replace(self, **changes: Any) -> "SamplingParams":
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)

    # ------------------------------------------------------------------ HF adapter
    @classmethod
    def from_generation_config(cls, cfg: Any, strict: bool = True, **overrides: Any) -> "SamplingParams":
        """Build parameters from a Hugging Face ``GenerationConfig`` (or a dict of its fields).

        Mapped: do_sample, temperature, top_k, top_p, min_p, typical_p, repetition_penalty
        (over the whole history, as HF does). The order is HF's: repetition penalty, temperature,
        top-k, top-p, min-p, typical, with min_keep 1. Fields this chain cannot reproduce
        (no_repeat_ngram_size, epsilon/eta cutoff, ...) raise unless ``strict=False``.
        """
        get = (lambda k, d=None: cfg.get(k, d)) if isinstance(cfg, Mapping) else \
            (lambda k, d=None: getattr(cfg, k, d))
        unsupported = {
            "no_repeat_ngram_size": 0, "epsilon_cutoff": 0.0, "eta_cutoff": 0.0, "top_h": None,
            "encoder_repetition_penalty": 1.0, "encoder_no_repeat_ngram_size": 0,
            "bad_words_ids": None, "sequence_bias": None, "penalty_alpha": None,
        }
        bad = [k for k, d in unsupported.items() if get(k, d) not in (d, None)]
        if bad and strict:
            raise InvalidParameterError(bad[0], f"GenerationConfig field(s) {bad} have no equivalent in "
                                                "this sampler chain (pass strict=False to ignore them)")
        do_sample = bool(get("do_sample", False))
        rp = get("repetition_penalty", 1.0)
        kw: dict[str, Any] = dict(
            temperature=1.0 if get("temperature") is None else get("temperature"),
            top_k=0 if get("top_k") is None else get("top_k"),
            top_p=1.0 if get("top_p") is None else get("top_p"),
            min_p=0.0 if get("min_p") is None else get("min_p"),
            typical_p=1.0 if get("typical_p") is None else get("typical_p"),
            repeat_penalty=1.0 if rp is None else rp,
            repeat_last_n=-1,
            min_keep=1,
            samplers=("penalties", "temperature", "top_k", "top_p", "min_p", "typical"),
            selection="dist" if do_sample else "greedy",
        )
        if not do_sample:
            kw["samplers"] = ("penalties",)
        kw.update(overrides)
        return cls(**kw)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any], strict: bool = True) -> "SamplingParams":
        """Build parameters from a mapping that may use llama.cpp-server or KoboldAI API names
        (``rep_pen``, ``tfs``, ``typical``, ``sampler_order``, ``penalty_last_n``, ``typ_p``,
        ``sampler_seed``, ...). Unknown keys raise (naming the key) unless ``strict=False``."""
        names = set(cls.field_names())
        kw: dict[str, Any] = {}
        for key, value in values.items():
            name = key if key in names else _PARAM_ALIASES.get(key)
            if name is None:
                if strict:
                    raise InvalidParameterError(key, "is not a sampling parameter")
                continue
            if name == "samplers" and key == "sampler_order":
                kw.setdefault("kobold_variant", values.get("kobold_variant", "koboldcpp"))
            kw[name] = value
        return cls(**kw)

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))
