"""Throughput of the OpenAI-compatible server with the embedded SmolLM2, batched vs one at a time.

    python bench/bench_server.py [--clients 1,4,16] [--requests 2] [--max-tokens 48]

For each concurrency c, c client threads (the official openai client) each send ``--requests``
chat requests with a JSON Schema response_format (a new seed each), against a server that
decodes up to 32 rows together (continuous batching) and against one limited to a single row
(requests served one at a time). Reported: requests per second, generated tokens per second,
median and p90 latency, and how many outputs validate with jsonschema. Both servers run in
child processes on 127.0.0.1, one after the other.
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SCHEMA = {"type": "object", "properties": {
    "name": {"type": "string", "maxLength": 24},
    "age": {"type": "integer", "minimum": 0, "maximum": 120},
    "city": {"type": "string", "maxLength": 24},
    "skills": {"type": "array", "items": {"type": "string", "maxLength": 16}, "maxItems": 3}},
    "required": ["name", "age", "city"], "additionalProperties": False}
MESSAGES = [{"role": "user", "content": "Invent a person; answer as JSON."}]


def _round(client, clients: int, requests: int, max_tokens: int, seed0: int) -> dict:
    import jsonschema
    latencies, tokens, valid, errors = [], [], [], []
    lock = threading.Lock()

    def one(c: int) -> None:
        for r in range(requests):
            start = time.perf_counter()
            try:
                out = client.chat.completions.create(
                    model="smollm2", messages=MESSAGES, max_tokens=max_tokens,
                    seed=seed0 + c * requests + r, temperature=0.8,
                    response_format={"type": "json_schema",
                                     "json_schema": {"name": "person", "schema": SCHEMA}},
                    extra_body={"complete_within_budget": True})
            except Exception as exc:  # noqa: BLE001 - counted and reported
                with lock:
                    errors.append(repr(exc))
                continue
            took = time.perf_counter() - start
            try:
                jsonschema.validate(json.loads(out.choices[0].message.content), SCHEMA)
                ok = True
            except Exception:  # noqa: BLE001 - counted
                ok = False
            with lock:
                latencies.append(took)
                tokens.append(out.usage.completion_tokens)
                valid.append(ok)

    threads = [threading.Thread(target=one, args=(c,)) for c in range(clients)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    lat = sorted(latencies)
    return {"clients": clients, "requests": len(lat), "errors": len(errors),
            "valid": sum(valid), "rps": len(lat) / wall, "tok_s": sum(tokens) / wall,
            "p50": statistics.median(lat) if lat else float("nan"),
            "p90": lat[min(len(lat) - 1, int(0.9 * len(lat)))] if lat else float("nan")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", default="1,4,16")
    parser.add_argument("--requests", type=int, default=2, help="requests per client")
    parser.add_argument("--max-tokens", type=int, default=48)
    args = parser.parse_args()
    import openai

    from constrained.server.process import ServerProcess
    levels = [int(c) for c in args.clients.split(",")]
    print(f"machine: {platform.processor() or platform.machine()}, python "
          f"{platform.python_version()}; SmolLM2-135M (transformers, float32), JSON Schema "
          f"chat requests, max_tokens {args.max_tokens}, {args.requests} per client")
    print(f"{'server':<14} {'clients':>7} {'requests':>8} {'valid':>5} {'err':>3} "
          f"{'req/s':>7} {'tok/s':>7} {'p50 s':>7} {'p90 s':>7}")
    rows = {}
    for label, extra in (("batched", ["--max-rows", "32"]),
                         ("one-at-a-time", ["--max-rows", "1", "--max-waiting", "256"])):
        with ServerProcess(extra, cwd=str(ROOT)) as url:
            client = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0,
                                   timeout=600)
            _round(client, 1, 1, args.max_tokens, 10_000)   # warm: compile and first masks
            for c in levels:
                r = _round(client, c, args.requests, args.max_tokens, 1000 * c)
                rows[label, c] = r
                print(f"{label:<14} {c:>7} {r['requests']:>8} {r['valid']:>5} "
                      f"{r['errors']:>3} {r['rps']:>7.2f} {r['tok_s']:>7.1f} "
                      f"{r['p50']:>7.2f} {r['p90']:>7.2f}", flush=True)
    for c in levels:
        b, s = rows["batched", c], rows["one-at-a-time", c]
        print(f"{c:>2} clients: batched/one-at-a-time tokens per second = "
              f"{b['tok_s'] / s['tok_s']:.2f}x")


if __name__ == "__main__":
    main()
