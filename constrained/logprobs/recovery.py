"""Recover a full next-token distribution from an API that only shows the top-k logprobs.

An *oracle* answers one question about a fixed prompt: given a logit bias ``{token_id: bias}``,
which are the k most likely tokens of the biased distribution and their logprobs
(:data:`TopLogprobsOracle`); weaker APIs only return the most likely token
(:data:`ArgmaxOracle`). The methods below follow Finlayson et al. ("Logits of API-protected LLMs
leak proprietary information"):

- :func:`recover_one_per_call`: bias one token at a time, invert the biased logprob exactly;
- :func:`recover_k_per_call`: bias up to k-1 tokens per call and read them against a reference
  token whose logprob is known (or bias k tokens and use the biased-mass formula);
- :func:`recover_top_n`: surface the next batch by penalising every token already known;
- :func:`recover_by_bisection`: argmax only; bisect the smallest bias that makes a token win.

Every function wraps the oracle in a :class:`CallCounter` and returns a :class:`Recovery` with the
number of calls made. All arithmetic is in float64 log space (log1p/expm1/logsumexp).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

TopLogprobsOracle = Callable[[Mapping[int, float]], Mapping[int, float]]
"""logit_bias -> {token_id: logprob} of the k most likely tokens of the biased distribution."""

ArgmaxOracle = Callable[[Mapping[int, float]], int]
"""logit_bias -> id of the most likely token of the biased distribution."""


@dataclass
class Recovery:
    """A recovered distribution: ``logprobs[i]`` (float64, ``nan`` where not recovered).

    ``calls`` counts oracle calls; ``unresolved`` lists tokens that never surfaced even at the
    largest allowed bias (their logprob is below ``upper_bounds[i]``).
    """

    logprobs: np.ndarray
    calls: int
    unresolved: list[int] = field(default_factory=list)
    upper_bounds: dict[int, float] = field(default_factory=dict)

    def known_ids(self) -> np.ndarray:
        """Ids whose logprob was recovered."""
        return np.nonzero(~np.isnan(self.logprobs))[0]


class CallCounter:
    """Wraps an oracle and counts its calls."""

    def __init__(self, oracle: Callable) -> None:
        self.oracle = oracle
        self.calls = 0

    def __call__(self, logit_bias: Mapping[int, float]):
        self.calls += 1
        return self.oracle(dict(logit_bias))


class MedianOracle:
    """Asks a noisy top-logprobs oracle ``repeats`` times and returns per-token medians.

    A token is reported when it surfaced in more than half of the answers, so a token near the
    top-k boundary that flickers in and out is not reported from a minority of readings.
    """

    def __init__(self, oracle: TopLogprobsOracle, repeats: int = 5) -> None:
        if repeats < 1:
            raise ValueError("repeats must be >= 1")
        self.oracle = oracle
        self.repeats = repeats

    def __call__(self, logit_bias: Mapping[int, float]) -> dict[int, float]:
        readings: dict[int, list[float]] = {}
        for _ in range(self.repeats):
            for tid, lp in self.oracle(logit_bias).items():
                readings.setdefault(int(tid), []).append(float(lp))
        quorum = self.repeats // 2 + 1
        return {tid: float(np.median(v)) for tid, v in readings.items() if len(v) >= quorum}


# numerics -------------------------------------------------------------------------------------
def log1mexp(x: float) -> float:
    """log(1 - exp(x)) for x <= 0, accurate near 0 and far below it."""
    if x > 0:
        raise ValueError(f"log1mexp needs x <= 0, got {x}")
    if x == 0:
        return -math.inf
    return math.log(-math.expm1(x)) if x > -math.log(2) else math.log1p(-math.exp(x))


def logsumexp(values: Iterable[float]) -> float:
    """log(sum(exp(v))) without overflow; -inf for an empty input."""
    arr = np.fromiter(values, dtype=np.float64)
    if arr.size == 0:
        return -math.inf
    top = float(arr.max())
    if top == -math.inf:
        return -math.inf
    return top + math.log(float(np.exp(arr - top).sum()))


def unbias_one(biased_logprob: float, bias: float) -> float:
    """Exact log p of a single token biased by ``bias`` whose biased logprob is given.

    p' = p e^b / (1 - p + p e^b)  =>  log p = lp' - log(e^b (1 - p') + p').
    """
    if biased_logprob >= 0:
        return -math.inf if bias > 0 else 0.0  # saturated: unrecoverable precision
    rest = log1mexp(biased_logprob)
    return biased_logprob - float(np.logaddexp(bias + rest, biased_logprob))


def unbias_set(biased_logprobs: Mapping[int, float], bias: float) -> dict[int, float]:
    """Exact log p of every token of a set S biased together by ``bias`` (all of S visible).

    log p_i = lp'_i - log((1 - sum_S p') e^b + sum_S p').
    """
    mass = logsumexp(biased_logprobs.values())
    mass = min(mass, 0.0)
    denom = float(np.logaddexp(bias + log1mexp(mass), mass)) if mass < 0 else mass
    return {tid: lp - denom for tid, lp in biased_logprobs.items()}


def unpenalise(logprob: float, penalty: float, known_mass_log: float) -> float:
    """log p of a token seen while the known tokens (total log mass given) had bias -penalty.

    p_i = p'_i (1 + (e^-b - 1) P_known), computed as logaddexp(log(1 - P), -b + log P).
    """
    if known_mass_log >= 0:
        return logprob - penalty
    scale = float(np.logaddexp(log1mexp(known_mass_log), -penalty + known_mass_log))
    return logprob + scale


# methods --------------------------------------------------------------------------------------
def _new_result(vocab_size: int) -> np.ndarray:
    return np.full(vocab_size, np.nan, dtype=np.float64)


def _targets(vocab_size: int, token_ids: Sequence[int] | None) -> list[int]:
    if token_ids is None:
        return list(range(vocab_size))
    ids = [int(t) for t in token_ids]
    bad = [t for t in ids if not 0 <= t < vocab_size]
    if bad:
        raise ValueError(f"token ids {bad[:5]} are outside the vocabulary (0..{vocab_size - 1})")
    return list(dict.fromkeys(ids))


def recover_one_per_call(oracle: TopLogprobsOracle, vocab_size: int, *,
                         token_ids: Sequence[int] | None = None, bias: float = 20.0,
                         max_bias: float = 100.0, saturation: float = -1e-3,
                         max_tries: int = 8) -> Recovery:
    """Recover log p of each token by biasing it alone and inverting its biased logprob.

    The bias adapts per token: a token that does not surface is asked again with twice the bias;
    one whose biased logprob is saturated (above ``saturation``, where rounding destroys the
    inversion) is asked again with the bias that brings it near one half. About one call per
    token once the bias suits the distribution.
    """
    counter = CallCounter(oracle)
    result = Recovery(_new_result(vocab_size), 0)
    for tid in _targets(vocab_size, token_ids):
        b = float(bias)
        for attempt in range(max_tries):
            answer = counter({tid: b})
            if tid not in answer:
                if b >= max_bias or attempt == max_tries - 1:
                    result.unresolved.append(tid)
                    if answer:  # p'_i < the lowest visible p' bounds p_i through the inverse
                        result.upper_bounds[tid] = unbias_one(min(answer.values()), b)
                    break
                b = min(max_bias, 2 * b if b > 0 else 10.0)
                continue
            lp = float(answer[tid])
            est = unbias_one(lp, b)
            if lp > saturation and b > 0 and attempt < max_tries - 1:
                wanted = max(0.0, log1mexp(est) - est) if np.isfinite(est) else b / 2
                if wanted < b - 1.0:
                    b = wanted
                    continue
            if np.isfinite(est):
                result.logprobs[tid] = est
            else:  # saturated on the last try: p is unknown (but not 0)
                result.unresolved.append(tid)
            break
    result.calls = counter.calls
    return result


def _give_up(result: Recovery, tid: int, answer: Mapping[int, float], b: float,
             offset: float = 0.0) -> None:
    """Record a token that stayed hidden: its biased logprob is below the lowest visible one."""
    result.unresolved.append(tid)
    if answer:
        result.upper_bounds[tid] = min(answer.values()) - b + offset


def recover_k_per_call(oracle: TopLogprobsOracle, vocab_size: int, k: int, *,
                       token_ids: Sequence[int] | None = None, bias: float = 30.0,
                       max_bias: float = 100.0, method: str = "reference") -> Recovery:
    """Recover log p of many tokens, k-1 (``method="reference"``) or k (``"mass"``) per call.

    The first, unbiased call gives the top-k exactly. ``"reference"``: bias k-1 unknown tokens by
    ``bias``; the unbiased argmax still surfaces (every other unbiased token is below it), so
    log p_i = lp'_i - lp'_ref - b + log p_ref, free of cancellation. ``"mass"``: bias k tokens
    and invert the biased-mass formula (loses precision as the biased mass nears 1). Tokens that
    stay hidden are asked again with twice the bias, up to ``max_bias``.
    """
    if method not in ("reference", "mass"):
        raise ValueError(f"unknown method {method!r}: use 'reference' or 'mass'")
    if k < 1 or (method == "reference" and k < 2):
        raise ValueError("the reference method needs k >= 2 (use method='mass' or one per call)")
    counter = CallCounter(oracle)
    result = Recovery(_new_result(vocab_size), 0)
    out = result.logprobs
    first = counter({})
    for tid, lp in first.items():
        out[int(tid)] = float(lp)
    ref = max(first, key=first.get)
    todo = [t for t in _targets(vocab_size, token_ids) if np.isnan(out[t])]
    per_call = k - 1 if method == "reference" else k
    for start in range(0, len(todo), per_call):
        pending = todo[start:start + per_call]
        b, refined = float(bias), False
        while pending:
            answer = counter({t: b for t in pending})
            if method == "reference":
                ref = _visible_reference(answer, pending, out, k)
                for t in pending:
                    if t in answer:
                        out[t] = float(answer[t]) - float(answer[ref]) - b + out[ref]
            elif all(t in answer for t in pending):
                est = unbias_set({t: float(answer[t]) for t in pending}, b)
                # the smallest bias that still lifts the whole set above the reference keeps
                # the unbiased mass (1 - sum p') large enough to read precisely
                needed = out[ref] - min(est.values()) + 1.0
                if logsumexp(answer[t] for t in pending) > -1e-3 and needed < b - 1.0 \
                        and not refined:
                    b, refined = max(needed, 0.0), True
                    continue
                for t, lp in est.items():
                    out[t] = lp
            pending = [t for t in pending if np.isnan(out[t])]
            if pending and b >= max_bias:
                offset = out[ref] - float(answer[ref]) if method == "reference" else 0.0
                for t in pending:
                    _give_up(result, t, answer, b, offset)
                break
            b = min(max_bias, 2 * b)
    result.calls = counter.calls
    return result


def _visible_reference(answer: Mapping[int, float], biased: Sequence[int], known: np.ndarray,
                       k: int) -> int:
    """An unbiased token of the answer whose logprob is known (the most likely such)."""
    biased_set = set(biased)
    refs = [t for t in answer if t not in biased_set and not np.isnan(known[t])]
    if not refs:
        raise RuntimeError("no token with a known logprob surfaced next to the biased ones: "
                           f"does the oracle really return the top {k}?")
    return max(refs, key=lambda t: answer[t])


def recover_top_n(oracle: TopLogprobsOracle, vocab_size: int, n: int, *,
                  penalty: float = 100.0, reference: bool = True) -> Recovery:
    """Recover the n most likely tokens by penalising the tokens found so far by -``penalty``.

    Each call surfaces the next batch. With ``reference`` (the default) the least likely known
    token stays unpenalised and anchors the batch: log p_i = lp'_i - lp'_ref + log p_ref, which
    stays exact when the known mass is within 1e-12 of 1 (k-1 new tokens per call). Without it
    every known token is penalised and p_i = p'_i (1 + (e^-b - 1) P_known) (k per call; loses
    precision as P_known nears 1).
    """
    counter = CallCounter(oracle)
    result = Recovery(_new_result(vocab_size), 0)
    known: dict[int, float] = {}
    while len(known) < min(n, vocab_size):
        anchor = min(known, key=known.get) if (reference and known) else None
        penalised = {t: -penalty for t in known if t != anchor}
        answer = counter(penalised)
        fresh = {int(t): float(lp) for t, lp in answer.items() if int(t) not in known}
        if not fresh:
            break
        if not known:
            known.update(fresh)
        elif anchor is not None:
            if anchor not in answer:
                raise RuntimeError("the unpenalised reference token did not surface: is the "
                                   "penalty large enough for this oracle?")
            shift = known[anchor] - float(answer[anchor])
            known.update({t: lp + shift for t, lp in fresh.items()})
        else:
            mass = logsumexp(known.values())
            known.update({t: unpenalise(lp, penalty, mass) for t, lp in fresh.items()})
    for t, lp in sorted(known.items(), key=lambda kv: -kv[1])[:n]:
        result.logprobs[t] = lp
    result.calls = counter.calls
    return result


def recover_by_bisection(oracle: ArgmaxOracle, vocab_size: int, *,
                         token_ids: Sequence[int] | None = None, max_bias: float = 100.0,
                         tol: float = 1e-6) -> Recovery:
    """Recover logprobs with an argmax-only oracle.

    For each token, bisect the smallest bias b* that makes it the argmax; its log-odds against
    the unbiased top token are -b*. With the whole vocabulary recovered the log-odds are normalised
    into logprobs; with a subset (``token_ids``) they stay log-odds against the top token.
    """
    counter = CallCounter(oracle)
    top = int(counter({}))
    rel = _new_result(vocab_size)
    rel[top] = 0.0
    result = Recovery(rel, 0)
    for tid in _targets(vocab_size, token_ids):
        if tid == top:
            continue
        if int(counter({tid: max_bias})) != tid:
            result.unresolved.append(tid)
            result.upper_bounds[tid] = -max_bias
            continue
        lo, hi = 0.0, float(max_bias)
        while hi - lo > tol:
            mid = 0.5 * (lo + hi)
            if int(counter({tid: mid})) == tid:
                hi = mid
            else:
                lo = mid
        rel[tid] = -0.5 * (lo + hi)
    if token_ids is None and not result.unresolved:
        known = ~np.isnan(rel)
        rel[known] -= logsumexp(rel[known])
    result.calls = counter.calls
    return result
