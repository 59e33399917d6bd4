"""Milliseconds per token on llama.cpp: unconstrained, with llama.cpp's own grammar, and with this
project's masks and sampler chain on the llama.cpp runtime; same GGUF file, prompt and thread
count, greedy, one process.

    python bench/bench_llamacpp.py [--runs 5] [--max-tokens 120] [--threads 2]

The prompt asks for a person as JSON under grammars/person.schema.json. llama.cpp's own runs go
through llama-cpp-python's Llama (its JSON-schema grammar from LlamaGrammar.from_json_schema);
this project's run goes through generate(model, ...) with the llama.cpp runtime. Reported: ms per
generated token (prefill excluded where the API lets it be), tokens, and whether the output
validates against the schema.
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SCHEMA_FILE = ROOT / "grammars" / "person.schema.json"
ASK = [{"role": "user", "content": "Invent a person; answer as JSON with name, age, role, "
        "address and skills."}]


def _valid(text: str, schema) -> bool:
    import jsonschema
    try:
        jsonschema.validate(json.loads(text), schema)
        return True
    except Exception:  # noqa: BLE001 - counted
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=120)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    import llama_cpp

    from constrained import Grammar, generate
    from constrained.compiler import compile_grammar
    from constrained.model import load_model
    from constrained.model.loading import default_gguf_path
    from constrained.vocabulary import Vocabulary
    schema = json.loads(SCHEMA_FILE.read_text())
    gguf = str(default_gguf_path())
    model, tokenizer = load_model("smollm2", runtime="llama.cpp", n_threads=args.threads,
                                  n_ctx=2048, max_rows=1)
    prompt_ids = tokenizer.apply_chat_template(ASK, tokenize=True, add_generation_prompt=True)
    if hasattr(prompt_ids, "keys"):
        prompt_ids = prompt_ids["input_ids"]
    prompt_ids = [int(t) for t in prompt_ids]
    llm = llama_cpp.Llama(gguf, n_ctx=2048, n_threads=args.threads, n_threads_batch=args.threads,
                          verbose=False, seed=0)
    own_grammar = llama_cpp.LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)

    def llama_run(grammar):
        llm.reset()
        llm.eval(prompt_ids)              # prefill, not timed per token
        tokens, start = [], time.perf_counter()
        for token in llm.generate(prompt_ids, temp=0.0, top_k=1, grammar=grammar, reset=False):
            if token == llm.token_eos() or len(tokens) >= args.max_tokens:
                break
            tokens.append(token)
        took = time.perf_counter() - start
        text = llm.detokenize(tokens).decode("utf-8", errors="replace")
        return took * 1e3 / max(1, len(tokens)), len(tokens), text

    vocab = Vocabulary.from_hf(tokenizer, vocab_size=model.n_vocab)
    compiled = compile_grammar(Grammar.from_json_schema(schema), vocab)

    def ours():
        r = generate(model, tokenizer, prompt_ids, grammar=compiled, max_new_tokens=args.max_tokens,
                     sampling={"temperature": 0.0})
        s = r.timings.summary()
        return s["ms_per_token"], r.n_tokens, r.text

    print(f"machine: {platform.processor() or platform.machine()}, {args.threads} threads, "
          f"llama-cpp-python {llama_cpp.__version__}, {Path(gguf).name}, greedy, "
          f"max {args.max_tokens} tokens, {args.runs} runs (median)")
    rows = [("llama.cpp unconstrained", lambda: llama_run(None)),
            ("llama.cpp own JSON-schema grammar", lambda: llama_run(own_grammar)),
            ("llama.cpp runtime + this project's masks", ours)]
    results = {}
    print(f"{'run':<42} {'ms/token':>9} {'tokens':>7} {'valid':>6}")
    for name, fn in rows:
        fn()   # warm: first masks, caches
        runs = [fn() for _ in range(args.runs)]
        ms = statistics.median(r[0] for r in runs)
        results[name] = ms
        valid = sum(_valid(r[2], schema) for r in runs)
        print(f"{name:<42} {ms:>9.2f} {runs[0][1]:>7} {valid:>4}/{args.runs}", flush=True)
    base = results["llama.cpp unconstrained"]
    for name in list(results)[1:]:
        print(f"{name}: {results[name] / base:.2f}x unconstrained")


if __name__ == "__main__":
    main()
