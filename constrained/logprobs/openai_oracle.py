"""Oracles over any OpenAI-compatible completions endpoint, through the official client.

The recovery functions ask "with this logit_bias, what are the top-k logprobs of the next
token?"; here one completions call with ``max_tokens=1`` answers it. Tokens come back as
"token_id:N" where the server supports vLLM's ``return_tokens_as_token_ids`` (this project's
server and vLLM do); for other servers pass ``token_id`` to map a token's text to its id.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from .recovery import ArgmaxOracle, TopLogprobsOracle


def _id_of(token: str, token_id: Callable[[str], int] | None) -> int:
    if token.startswith("token_id:"):
        return int(token[len("token_id:"):])
    if token_id is None:
        raise ValueError(f"the server returned the token {token!r} as text: pass token_id= "
                         "to map texts to ids, or use a server with return_tokens_as_token_ids")
    return int(token_id(token))


def _ask(client, model: str, prompt: str | Sequence[int], logit_bias: Mapping[int, float],
         k: int, extra: Mapping[str, Any] | None):
    body = {"return_tokens_as_token_ids": True, **(extra or {})}
    return client.completions.create(
        model=model, prompt=prompt if isinstance(prompt, str) else list(prompt), max_tokens=1,
        temperature=0, logprobs=k, logit_bias={str(int(t)): float(b) for t, b in
                                               logit_bias.items()},
        extra_body=body)


def openai_top_logprobs_oracle(client, model: str, prompt: str | Sequence[int], k: int = 5, *,
                               token_id: Callable[[str], int] | None = None,
                               extra_body: Mapping[str, Any] | None = None
                               ) -> TopLogprobsOracle:
    """logit_bias -> {token id: logprob} of the k most likely next tokens, from the server."""

    def oracle(logit_bias: Mapping[int, float]) -> dict[int, float]:
        response = _ask(client, model, prompt, logit_bias, k, extra_body)
        top = response.choices[0].logprobs.top_logprobs[0]
        return {_id_of(t, token_id): float(lp) for t, lp in top.items()}

    return oracle


def openai_argmax_oracle(client, model: str, prompt: str | Sequence[int], *,
                         token_id: Callable[[str], int] | None = None,
                         extra_body: Mapping[str, Any] | None = None) -> ArgmaxOracle:
    """logit_bias -> the greedy next token's id (servers that show no logprobs at all)."""

    def oracle(logit_bias: Mapping[int, float]) -> int:
        response = _ask(client, model, prompt, logit_bias, 0, extra_body)
        return _id_of(response.choices[0].logprobs.tokens[0], token_id)

    return oracle
