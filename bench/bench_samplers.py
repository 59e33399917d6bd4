"""Sampler-chain speed against the equivalent Hugging Face logits-processor chain, in one run.

    python -m bench.bench_samplers            (or: python bench/bench_samplers.py)

CPU, V = 128,256 (llama3's vocabulary size), B = 1 and B = 32, random logits and 256-token
random histories. Per step: our SamplerChain.sample vs transformers' LogitsProcessorList with the
same warpers followed by softmax + torch.multinomial. Chains:
  default: top-k 40, top-p 0.95, min-p 0.05, temperature 0.8, dist (llama.cpp's default chain)
  heavy:   penalties (repeat 1.1, frequency 0.1, presence 0.1), DRY, top-k 40, typical 0.95,
           top-p 0.95, min-p 0.05, XTC (p 0.5, t 0.1), dynamic temperature (0.8 +- 0.3);
           HF has no DRY, XTC, frequency/presence or dynamic temperature, so its chain is
           repetition penalty, top-k, typical, top-p, min-p, temperature.
Fresh logits are copied outside the timed region for both. The two are timed in alternating
blocks of 5 steps; wall-clock and process CPU time are both reported (on a loaded machine the
CPU time is the steadier measure; with 2 threads it adds up both threads, spin-waits included).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))

import torch

from samplers import SamplerChain, SamplingParams

V = 128_256


def hf_chain(kind: str):
    from transformers.generation.logits_process import (LogitsProcessorList, MinPLogitsWarper,
                                                        RepetitionPenaltyLogitsProcessor, TemperatureLogitsWarper,
                                                        TopKLogitsWarper, TopPLogitsWarper, TypicalLogitsWarper)
    if kind == "default":
        procs = [TopKLogitsWarper(40), TopPLogitsWarper(0.95), MinPLogitsWarper(0.05), TemperatureLogitsWarper(0.8)]
    else:
        procs = [RepetitionPenaltyLogitsProcessor(1.1), TopKLogitsWarper(40), TypicalLogitsWarper(0.95),
                 TopPLogitsWarper(0.95), MinPLogitsWarper(0.05), TemperatureLogitsWarper(0.8)]
    lp = LogitsProcessorList(procs)
    gen = torch.Generator().manual_seed(0)

    def step(logits, input_ids):
        scores = lp(input_ids, logits)
        return torch.multinomial(torch.softmax(scores, dim=-1), 1, generator=gen).squeeze(1)

    return step


def our_chain(kind: str, texts):
    if kind == "default":
        p = SamplingParams(seed=0)
        ch = SamplerChain(p, vocab_size=V)
    else:
        p = SamplingParams(seed=0, repeat_penalty=1.1, frequency_penalty=0.1, presence_penalty=0.1,
                           dry_multiplier=0.8, top_k=40, typical_p=0.95, top_p=0.95, min_p=0.05,
                           xtc_probability=0.5, xtc_threshold=0.1, temperature=0.8, dynatemp_range=0.3,
                           samplers=["penalties", "dry", "top_k", "typical", "top_p", "min_p", "xtc", "temperature"])
        ch = SamplerChain(p, vocab_size=V, token_texts=texts)

    def step(logits, histories):
        return ch.sample(logits, histories)

    return step


def timeit_pair(fa, args_a, fb, args_b, iters: int, warmup: int = 3, block: int = 5):
    """Time two step functions in alternating blocks of ``block`` steps, so slow load changes on
    a shared machine hit both alike, while each block runs in its own steady state (alternating
    every single step makes the shorter one pay for the scheduler debt of the longer one).
    Returns per-step (wall, cpu) seconds for each function."""
    for _ in range(warmup):
        fa(*args_a())
        fb(*args_b())
    res = {0: ([], []), 1: ([], [])}
    done = 0
    while done < iters:
        n = min(block, iters - done)
        for which, (fn, make) in enumerate(((fa, args_a), (fb, args_b))):
            for _ in range(n):
                a = make()
                w0, c0 = time.perf_counter(), time.process_time()
                fn(*a)
                res[which][0].append(time.perf_counter() - w0)
                res[which][1].append(time.process_time() - c0)
        done += n
    return res[0], res[1]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--batches", type=int, nargs="*", default=[1, 32])
    ap.add_argument("--threads", type=int, nargs="*", default=[0, 1],
                    help="torch intra-op threads for both chains (0: torch's default); one table each")
    args = ap.parse_args(argv)
    default_threads = torch.get_num_threads()
    for th in args.threads:
        torch.set_num_threads(th or default_threads)
        run(args)


def run(args) -> None:
    torch.manual_seed(0)
    texts = ["\n" if i % 997 == 0 else f"w{i}" for i in range(V)]
    rows = []
    for B in args.batches:
        base = torch.randn(B, V) * 3
        hist = torch.randint(0, V, (B, 256))
        hist_list = hist.tolist()
        iters = args.iters if B == 1 else max(5, args.iters // 3)
        for kind in ("default", "heavy"):
            ours = our_chain(kind, texts)
            hf = hf_chain(kind)
            t_o, t_h = timeit_pair(ours, lambda: (base.clone(), hist_list), hf, lambda: (base.clone(), hist), iters)
            rows.append((kind, B, t_o, t_h))
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, V = {V}")
    print("| chain | B | ours mean / median ms | HF mean / median ms | HF/ours (median) "
          "| ours CPU median ms | HF CPU median ms | HF/ours (CPU) |")
    print("|---|---|---|---|---|---|---|---|")
    for kind, B, (wo, co), (wh, ch) in rows:
        mo, do = statistics.mean(wo) * 1e3, statistics.median(wo) * 1e3
        mh, dh = statistics.mean(wh) * 1e3, statistics.median(wh) * 1e3
        cpo, cph = statistics.median(co) * 1e3, statistics.median(ch) * 1e3
        print(f"| {kind} | {B} | {mo:.2f} / {do:.2f} | {mh:.2f} / {dh:.2f} | {dh / do:.1f}x "
              f"| {cpo:.2f} | {cph:.2f} | {cph / max(cpo, 1e-9):.1f}x |")


if __name__ == "__main__":
    main()
