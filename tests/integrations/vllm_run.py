"""Runs inside vLLM's own environment (see tests/integrations/test_vllm.py): SmolLM2 on vLLM's
CPU build with ConstrainedLogitsProcessor, one request per schema given, all in one batch.
Prints one JSON line: {"texts": [...], "finish": [...], "seconds": ...}."""
import json
import os
import sys
import time


def main() -> None:
    folder, schemas_json, max_tokens = sys.argv[1], sys.argv[2], int(sys.argv[3])
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    from vllm import LLM, SamplingParams

    from constrained.hosts.vllm_processor import ConstrainedLogitsProcessor
    schemas = json.loads(schemas_json)
    llm = LLM(model=folder, logits_processors=[ConstrainedLogitsProcessor],
              gpu_memory_utilization=0.1, max_model_len=2048, seed=0)
    params = [SamplingParams(max_tokens=max_tokens, temperature=0.7, seed=i,
                             extra_args={"constrained_json_schema": json.dumps(schema)})
              for i, schema in enumerate(schemas)]
    prompts = [[{"role": "user", "content": f"Answer with JSON for: {json.dumps(schema)}"}]
               for schema in schemas]
    start = time.perf_counter()
    outputs = llm.chat(prompts, params, use_tqdm=False)
    took = time.perf_counter() - start
    print(json.dumps({"texts": [o.outputs[0].text for o in outputs],
                      "finish": [o.outputs[0].finish_reason for o in outputs],
                      "tokens": [len(o.outputs[0].token_ids) for o in outputs],
                      "seconds": took}))


if __name__ == "__main__":
    main()
