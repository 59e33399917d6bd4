"""Log-probabilities: recovery of full distributions from top-k APIs, and completion outputs."""
from .openai_oracle import openai_argmax_oracle, openai_top_logprobs_oracle
from .oracles import LogitsOracle
from .recovery import (ArgmaxOracle, CallCounter, MedianOracle, Recovery, TopLogprobsOracle,
                       recover_by_bisection, recover_k_per_call, recover_one_per_call,
                       recover_top_n)
from .steps import step_logprobs

__all__ = ["ArgmaxOracle", "CallCounter", "LogitsOracle", "MedianOracle", "Recovery",
           "TopLogprobsOracle", "openai_argmax_oracle", "openai_top_logprobs_oracle",
           "recover_by_bisection", "recover_k_per_call",
           "recover_one_per_call", "recover_top_n", "step_logprobs"]
