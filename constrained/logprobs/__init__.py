"""Log-probabilities: recovery of full distributions from top-k APIs, and completion outputs."""
from .oracles import LogitsOracle
from .recovery import (ArgmaxOracle, CallCounter, MedianOracle, Recovery, TopLogprobsOracle,
                       recover_by_bisection, recover_k_per_call, recover_one_per_call,
                       recover_top_n)
from .steps import step_logprobs

__all__ = ["ArgmaxOracle", "CallCounter", "LogitsOracle", "MedianOracle", "Recovery",
           "TopLogprobsOracle", "recover_by_bisection", "recover_k_per_call",
           "recover_one_per_call", "recover_top_n", "step_logprobs"]
