"""Regex constraints on llama3: compile time and per-token mask time, this project vs peers.

Runs this project, outlines-core, llguidance and xgrammar on the same patterns, texts and
tokenization in one process and prints one table. Peers that are not installed are skipped.

    python bench/bench_regex.py [--runs 5]

Setup: building the engine's view of the vocabulary (once per vocabulary and process; for this
project the token trie, which is also kept in the disk cache, so this is a cold-cache figure).
Compile cold: first compile (for this project: empty disk cache and in-process caches cleared;
the vocabulary's own preprocessing, done once per vocabulary, is excluded for every engine).
Compile cached: this project with in-process caches cleared but the disk cache filled (a new
process); for peers, a second compile in the same process (their own caches, if any).
Mask: fill the bitmask for every token of the greedy tokenization of a matching text (EOS step
included), over several fresh matchers; mean, median, p90, p99 in microseconds.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PATTERNS = {
    "email": (r"[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,6}",
              "john.smith-42@example.org"),
    "iso-datetime": (r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})",
                     "2024-03-15T12:34:56.789+02:00"),
    "json-ish": (r'\{"id": \d{1,10}, "name": "[A-Za-z ]{1,40}", "email": "[a-z0-9._]+@'
                 r'[a-z0-9]+\.[a-z]{2,4}", "active": (true|false), "score": -?\d+(\.\d+)?, '
                 r'"tags": \[("[a-z]+"(, "[a-z]+")*)?\], "zip": "\d{5}(-\d{4})?"\}',
                 '{"id": 12345, "name": "Ada Lovelace", "email": "ada@example.com", '
                 '"active": true, "score": 98.5, "tags": ["math", "poetry"], "zip": "02139"}'),
}
EOS = [128001, 128009]


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000


class Engine:
    name = ""

    def compile(self, pattern):  # -> compiled object
        raise NotImplementedError

    def compile_cached(self, pattern):
        return self.compile(pattern)

    def run(self, compiled, ids: list[int]) -> list[float]:
        """Per-step mask times (us) for one fresh matcher; asserts every token is accepted."""
        raise NotImplementedError


class ThisProject(Engine):
    name = "this project"

    def __init__(self, vocab):
        from constrained import Grammar, compile_grammar
        self.vocab, self.Grammar, self.compile_grammar = vocab, Grammar, compile_grammar
        self.tmp = tempfile.mkdtemp(prefix="bench-regex-cache-")
        os.environ["CONSTRAINED_CACHE_DIR"] = self.tmp
        self.compile_grammar(self.Grammar.from_regex("x"), vocab)   # vocabulary preprocessing
        self.bitmask = torch.zeros((vocab.size + 31) // 32, dtype=torch.int32)

    def _clear_memory(self):
        from constrained.automata.byte_dfa import _build
        from constrained.automata.token_table import TokenTable
        _build.cache_clear()
        TokenTable._registry.clear()

    def compile(self, pattern):
        self._clear_memory()
        for f in Path(self.tmp).iterdir():
            f.unlink()
        t0 = time.perf_counter()
        cg = self.compile_grammar(self.Grammar.from_regex(pattern), self.vocab)
        return cg, _ms(t0)

    def compile_cached(self, pattern):
        self._clear_memory()
        t0 = time.perf_counter()
        cg = self.compile_grammar(self.Grammar.from_regex(pattern), self.vocab)
        return cg, _ms(t0)

    def run(self, cg, ids):
        m, bm, out = cg.matcher(), self.bitmask, []
        for tid in ids:
            t0 = time.perf_counter()
            m.fill_next_token_bitmask(bm)
            out.append((time.perf_counter() - t0) * 1e6)
            assert m.accept_token(tid), tid
        return out


class OutlinesCore(Engine):
    name = "outlines-core"

    def __init__(self, vocab):
        import outlines_core as oc
        self.oc = oc
        mapping: dict[bytes, list[int]] = {}
        for tid, tok in enumerate(vocab.token_bytes):
            if tok and tid not in vocab.special_token_ids:
                mapping.setdefault(tok, []).append(tid)
        self.ocvocab = oc.Vocabulary(EOS[1], mapping)
        self.bitmask = torch.zeros((vocab.size + 31) // 32, dtype=torch.int32)

    def compile(self, pattern):
        t0 = time.perf_counter()
        index = self.oc.Index(pattern, self.ocvocab)
        return index, _ms(t0)

    def run(self, index, ids):
        g, bm, out = self.oc.Guide(index), self.bitmask, []
        for tid in ids:
            t0 = time.perf_counter()
            g.write_mask_into(bm.data_ptr(), bm.numel(), 4)
            out.append((time.perf_counter() - t0) * 1e6)
            if tid in EOS:
                assert g.is_finished()
            else:
                g.advance(tid, return_tokens=False)
        return out


class LLGuidance(Engine):
    name = "llguidance"

    def __init__(self, vocab, enc):
        import llguidance
        import llguidance.torch as lt
        self.ll, self.lt = llguidance, lt

        class _Tok:
            eos_token_id = EOS[1]
            bos_token_id = None
            tokens = [t if i not in vocab.special_token_ids else b"" for i, t in
                      enumerate(vocab.token_bytes)]
            special_token_ids = sorted(vocab.special_token_ids)

            def __call__(self, s):
                if isinstance(s, bytes):
                    s = s.decode("utf-8", errors="replace")
                return enc.encode_ordinary(s)

        self.tok = llguidance.LLTokenizer(llguidance.TokenizerWrapper(_Tok()), eos_token=EOS)
        self.bitmask = lt.allocate_token_bitmask(1, vocab.size)

    def compile(self, pattern):
        t0 = time.perf_counter()
        grammar = self.ll.LLMatcher.grammar_from_regex(pattern)
        m = self.ll.LLMatcher(self.tok, grammar)
        assert not m.is_error(), m.get_error()
        return grammar, _ms(t0)

    def run(self, grammar, ids):
        m, bm, out = self.ll.LLMatcher(self.tok, grammar), self.bitmask, []
        for tid in ids:
            t0 = time.perf_counter()
            self.lt.fill_next_token_bitmask(m, bm, 0)
            out.append((time.perf_counter() - t0) * 1e6)
            assert m.consume_token(tid), m.get_error()
        return out


class XGrammar(Engine):
    name = "xgrammar"

    def __init__(self, vocab):
        import xgrammar as xgr
        self.xgr = xgr
        encoded = [t if i not in vocab.special_token_ids else b"" for i, t in
                   enumerate(vocab.token_bytes)]
        info = xgr.TokenizerInfo(encoded, vocab_type=xgr.VocabType.RAW, vocab_size=vocab.size,
                                 stop_token_ids=EOS)
        self.compiler = xgr.GrammarCompiler(info, max_threads=1, cache_enabled=True)
        self.bitmask = xgr.allocate_token_bitmask(1, vocab.size)

    def compile(self, pattern):
        self.compiler.clear_cache()
        t0 = time.perf_counter()
        cg = self.compiler.compile_regex(pattern)
        return cg, _ms(t0)

    def compile_cached(self, pattern):
        t0 = time.perf_counter()
        cg = self.compiler.compile_regex(pattern)
        return cg, _ms(t0)

    def run(self, cg, ids):
        m, bm, out = self.xgr.GrammarMatcher(cg), self.bitmask, []
        for tid in ids:
            t0 = time.perf_counter()
            m.fill_next_token_bitmask(bm)
            out.append((time.perf_counter() - t0) * 1e6)
            assert m.accept_token(tid), tid
        return out


def _llama3():
    import quicktok
    from constrained import Vocabulary
    enc = quicktok.get_encoding("llama3")
    vocab = Vocabulary.from_token_bytes(
        [enc.decode_single_token_bytes(i) for i in range(enc.n_vocab)], eos_token_ids=EOS,
        special_token_ids=[i for i in range(enc.n_vocab) if enc.is_special_token(i)],
        name="llama3")
    vocab.hash  # computed once per vocabulary, outside every timing
    return enc, vocab


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="fresh matchers per pattern")
    args = ap.parse_args()
    torch.set_num_threads(1)
    enc, vocab = _llama3()
    engines: list[Engine] = []
    setup: dict[str, float] = {}
    for make in (lambda: ThisProject(vocab), lambda: OutlinesCore(vocab),
                 lambda: LLGuidance(vocab, enc), lambda: XGrammar(vocab)):
        t0 = time.perf_counter()
        try:
            engine = make()
        except Exception as exc:  # a peer that is missing or fails to load is reported
            print(f"skipping a peer: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        setup[engine.name] = _ms(t0)
        engines.append(engine)

    rows, per_pattern = [], []
    for engine in engines:
        cold, cached, masks = [], [], []
        for label, (pattern, text) in PATTERNS.items():
            ids = enc.encode_ordinary(text) + [EOS[1]]
            try:
                compiled, ms = engine.compile(pattern)
                cold.append(ms)
                compiled, ms2 = engine.compile_cached(pattern)
                cached.append(ms2)
                per_pattern.append((engine.name, label, ms, ms2))
                for _ in range(args.runs):
                    masks.extend(engine.run(compiled, ids))
            except Exception as exc:
                print(f"{engine.name} failed on {label}: {type(exc).__name__}: {exc}",
                      file=sys.stderr)
        if masks:
            a = np.array(masks)
            rows.append((engine.name, setup[engine.name], max(cold), max(cached), a.mean(),
                         np.median(a), np.percentile(a, 90), np.percentile(a, 99)))
    base = rows[0]
    print(f"llama3 ({vocab.size} tokens); patterns: {', '.join(PATTERNS)}; "
          f"{args.runs} runs; compile = worst pattern; mask over all steps")
    head = (f"{'engine':<14} {'setup ms':>9} {'compile cold ms':>15} {'compile cached ms':>17}"
            f" {'mask mean us':>12} {'median':>8} {'p90':>8} {'p99':>8}   ratio to this project "
            f"(cold/cached/mean/median/p99)")
    print(head)
    print("-" * len(head))
    for r in rows:
        ratio = "/".join(f"{r[i] / base[i]:.2g}" for i in (2, 3, 4, 5, 7))
        print(f"{r[0]:<14} {r[1]:>9.0f} {r[2]:>15.1f} {r[3]:>17.2f} {r[4]:>12.1f} {r[5]:>8.1f}"
              f" {r[6]:>8.1f} {r[7]:>8.1f}   {ratio}")
    print()
    print("compile per pattern (cold ms / cached ms):")
    for label, (pattern, _) in PATTERNS.items():
        cells = [f"{name} {cold:.1f}/{cached:.2f}" for name, lab, cold, cached in per_pattern
                 if lab == label]
        print(f"  {label} ({len(pattern)} chars): " + "; ".join(cells))


if __name__ == "__main__":
    main()
