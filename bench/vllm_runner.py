"""Runs inside vLLM's environment for bench/bench_vllm.py: the same requests with this project's
logits processor and with vLLM's own structured outputs (xgrammar backend). Prints JSON lines."""
import json
import os
import sys
import time


def main() -> None:
    folder, schema_json, n, max_tokens = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
        int(sys.argv[4])
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    from vllm import LLM, SamplingParams
    from vllm.sampling_params import StructuredOutputsParams

    from constrained.hosts.vllm_processor import ConstrainedLogitsProcessor
    schema = json.loads(schema_json)
    llm = LLM(model=folder, logits_processors=[ConstrainedLogitsProcessor],
              gpu_memory_utilization=0.1, max_model_len=2048, seed=0,
              structured_outputs_config={"backend": "xgrammar"})
    prompts = [[{"role": "user", "content": f"Invent person number {i} as JSON."}]
               for i in range(n)]
    modes = {
        "constrained": lambda i: SamplingParams(
            max_tokens=max_tokens, temperature=0.0,
            extra_args={"constrained_json_schema": schema_json}),
        "xgrammar": lambda i: SamplingParams(
            max_tokens=max_tokens, temperature=0.0,
            structured_outputs=StructuredOutputsParams(json=schema)),
        "unconstrained": lambda i: SamplingParams(max_tokens=max_tokens, temperature=0.0),
    }
    for name, make in modes.items():
        for attempt in range(2):      # the first round warms caches and compiles
            params = [make(i) for i in range(n)]
            start = time.perf_counter()
            outputs = llm.chat(prompts, params, use_tqdm=False)
            took = time.perf_counter() - start
        print(json.dumps({"mode": name, "seconds": took,
                          "tokens": [len(o.outputs[0].token_ids) for o in outputs],
                          "texts": [o.outputs[0].text for o in outputs]}), flush=True)


if __name__ == "__main__":
    main()
