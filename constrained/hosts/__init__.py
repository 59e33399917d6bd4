"""Hosts: serving engines that call this engine for masks (vLLM's logits-processor interface).

Modules here import their host (``vllm``) and are only imported where it is installed."""
