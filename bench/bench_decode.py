"""Decode speed on the embedded SmolLM2 (CPU): constrained vs unconstrained, per token.

    python bench/bench_decode.py [--tokens 64] [--repeats 2] [--no-peers]

Rows: this project's loop unconstrained and with the person JSON schema (with and without
forced tokens), then Hugging Face ``model.generate`` unconstrained, with this project's
GrammarLogitsProcessor and with xgrammar's HF processor (when installed); the same record as a
GBNF grammar (grammars/person.gbnf) through this project and transformers-cfg. Greedy decoding, the
best of ``--repeats`` runs (the machine may be shared). "outside fwd" is decode time not spent in
the model's forward pass: what constraining and sampling cost.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from constrained import Grammar, Vocabulary, generate  # noqa: E402
from constrained.compiler import compile_grammar  # noqa: E402
from constrained.decoding import GrammarLogitsProcessor  # noqa: E402
from constrained.model import load_model  # noqa: E402

PROMPT = "Invent a person and describe them as a JSON object."
SCHEMA = json.loads((ROOT / "grammars" / "person.schema.json").read_text())
GBNF = (ROOT / "grammars" / "person.gbnf").read_text()  # the same record for grammar-only peers


def _loop_row(name, model, tokenizer, grammar, tokens, repeats, **kw):
    best = None
    for _ in range(repeats):
        r = generate(model, tokenizer, PROMPT, chat=True, grammar=grammar,
                     sampling={"temperature": 0.0, "ignore_eos": grammar is None},
                     max_new_tokens=tokens, **kw)
        t = r.timings
        decode = sum(s.total for s in t.steps)
        row = dict(name=name, tokens=r.n_tokens, forwards=len(t.steps),
                   ms_tok=decode * 1e3 / max(1, r.n_tokens),
                   fwd_tok=t.forward * 1e3 / max(1, r.n_tokens),
                   out_tok=t.outside_forward * 1e3 / max(1, r.n_tokens),
                   mask_step=t.mask * 1e3 / max(1, len(t.steps)),
                   forced=r.forced_tokens, finish=r.finish_reason)
        if best is None or row["ms_tok"] < best["ms_tok"]:
            best = row
    return best


def _hf_row(name, model, tokenizer, processor_factory, tokens, repeats):
    ids = tokenizer.apply_chat_template([{"role": "user", "content": PROMPT}], tokenize=True,
                                        add_generation_prompt=True, return_tensors="pt")
    if hasattr(ids, "keys"):
        ids = ids["input_ids"]
    best = None
    for _ in range(repeats):
        procs = [processor_factory()] if processor_factory else []
        start = time.perf_counter()
        out = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False,
                             max_new_tokens=tokens, logits_processor=procs,
                             pad_token_id=tokenizer.pad_token_id,
                             **({} if procs else {"min_new_tokens": tokens}))
        elapsed = time.perf_counter() - start
        n = out.shape[1] - ids.shape[1]
        row = dict(name=name, tokens=n, forwards=n, ms_tok=elapsed * 1e3 / max(1, n),
                   fwd_tok=float("nan"), out_tok=float("nan"), mask_step=float("nan"),
                   forced=0, finish="-")
        if best is None or row["ms_tok"] < best["ms_tok"]:
            best = row
    return best


def _xgrammar_factory(tokenizer, vocab_size):
    try:
        import xgrammar as xgr
        from xgrammar.contrib.hf import LogitsProcessor
    except ImportError:
        return None
    info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size)
    compiled = xgr.GrammarCompiler(info).compile_json_schema(json.dumps(SCHEMA))
    return lambda: LogitsProcessor(compiled)


def _transformers_cfg_factory(tokenizer, grammar_text: str):
    """transformers-cfg's HF processor on the person GBNF grammar (None when not installed).

    transformers-cfg picks its byte mapping by tokenizer class; the GGUF-loaded SmolLM2
    tokenizer is a byte-level BPE of a class it does not list, so its GPT-2 mapping is chosen
    here explicitly (the same byte alphabet)."""
    try:
        from transformers_cfg.generation.logits_process import GrammarConstrainedLogitsProcessor
        from transformers_cfg.grammar_utils import IncrementalGrammarConstraint
        from transformers_cfg.tokenization import tokenizer as tcfg_tokenizer
        from transformers_cfg.tokenization.middle import TokenizerMiddleMapping as tcfg_middle
    except ImportError:
        return None
    tcfg_tokenizer.TCFG_Tokenizer.from_hf_tokenizer = classmethod(
        lambda cls, hf: tcfg_tokenizer.TCFG_GPT2Tokenizer(hf))
    tcfg_middle.TokenizerMiddleMapping.from_hf_tokenizer = classmethod(
        lambda cls, hf: tcfg_middle.GPT2TokenizerMiddleMapping(hf))
    # its byte mapping would load the "gpt2" tokenizer from the hub: use the same table offline
    from transformers_cfg.tokenization.middle import ByteProxyMapping as tcfg_proxy

    from constrained.vocabulary.byte_mappings import gpt2_unicode_to_byte

    def offline_proxy_init(self, tok):
        self.tokenizer = tok
        self.proxychar2byte = gpt2_unicode_to_byte()
        self.byte2proxychar = {b: c for c, b in self.proxychar2byte.items()}
        self.cdp2byte = {ord(c): b for c, b in self.proxychar2byte.items()}
        self.byte2cdp = {b: c for c, b in self.cdp2byte.items()}
        self.PROXY_CDP_SET = set(self.cdp2byte)

    tcfg_proxy.ByteProxyMapping.__init__ = offline_proxy_init
    return lambda: GrammarConstrainedLogitsProcessor(
        IncrementalGrammarConstraint(grammar_text, "root", tokenizer))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--no-peers", action="store_true", help="skip the model.generate rows")
    args = ap.parse_args()
    model, tokenizer = load_model("smollm2")
    width = model.get_output_embeddings().weight.shape[0]
    vocab = Vocabulary.from_hf(tokenizer, vocab_size=width)
    start = time.perf_counter()
    cg = compile_grammar(Grammar.from_json_schema(SCHEMA), vocab)
    compile_s = time.perf_counter() - start
    # warm up: first visits of grammar states and the model's kernels
    generate(model, tokenizer, PROMPT, chat=True, grammar=cg, max_new_tokens=args.tokens,
             sampling={"temperature": 0.0})
    cg_gbnf = compile_grammar(Grammar.from_gbnf(GBNF), vocab)
    generate(model, tokenizer, PROMPT, chat=True, grammar=cg_gbnf, max_new_tokens=args.tokens,
             sampling={"temperature": 0.0})
    rows = [
        _loop_row("loop, unconstrained", model, tokenizer, None, args.tokens, args.repeats),
        _loop_row("loop, person GBNF", model, tokenizer, cg_gbnf, args.tokens, args.repeats),
        _loop_row("loop, person schema", model, tokenizer, cg, args.tokens, args.repeats),
        _loop_row("loop, schema, no forcing", model, tokenizer, cg, args.tokens, args.repeats,
                  force_tokens=False),
    ]
    if not args.no_peers:
        rows.append(_hf_row("HF generate, unconstrained", model, tokenizer, None, args.tokens,
                            args.repeats))
        rows.append(_hf_row("HF generate + GrammarLogitsProcessor", model, tokenizer,
                            lambda: GrammarLogitsProcessor(cg), args.tokens, args.repeats))
        xgr = _xgrammar_factory(tokenizer, width)
        if xgr is not None:
            rows.append(_hf_row("HF generate + xgrammar processor", model, tokenizer, xgr,
                                args.tokens, args.repeats))
        rows.append(_hf_row("HF generate + GrammarLogitsProcessor, GBNF", model, tokenizer,
                            lambda: GrammarLogitsProcessor(cg_gbnf), args.tokens,
                            args.repeats))
        tcfg = _transformers_cfg_factory(tokenizer, GBNF)
        if tcfg is not None:
            rows.append(_hf_row("HF generate + transformers-cfg, GBNF", model, tokenizer, tcfg,
                                args.tokens, args.repeats))
    print(f"SmolLM2-135M (CPU, {torch.get_num_threads()} threads), greedy, up to {args.tokens} "
          f"tokens; schema compile {compile_s * 1e3:.0f} ms (cached across runs)")
    head = (f"{'run':38} {'tokens':>6} {'fwds':>5} {'ms/tok':>8} {'fwd/tok':>8} "
            f"{'out fwd/tok':>11} {'share':>6} {'mask/step':>9} {'forced':>6} finish")
    print(head)
    print("-" * len(head))
    for r in rows:
        share = r["out_tok"] / r["ms_tok"] * 100 if r["ms_tok"] else float("nan")
        print(f"{r['name']:38} {r['tokens']:6d} {r['forwards']:5d} {r['ms_tok']:8.1f} "
              f"{r['fwd_tok']:8.1f} {r['out_tok']:11.2f} {share:5.1f}% {r['mask_step']:9.3f} "
              f"{r['forced']:6d} {r['finish']}")


if __name__ == "__main__":
    main()
