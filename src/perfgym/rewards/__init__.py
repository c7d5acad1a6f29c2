"""Rewards: pure batch functions of verdicts, built by name (`get_reward("rlpf", alpha_f=0.16)`).

Registered: rlpf, rlpf_no_fbr, rlpf_no_rbr, rlpf_no_shaping (paper 000); rlvr, runtime_only
(paper 000 baselines); linear, log (paper 003 raw-duration maps); percentile, percentile_qar,
percentile_qp (paper 003 gated percentile rewards); afterburner (paper 004). See docs/rewards.md.
"""

from perfgym.rewards._afterburner import afterburner, afterburner_format_ok
from perfgym.rewards._base import RUNGS, Reward, RewardOutput
from perfgym.rewards._baselines import linear, log, rlvr, runtime_only
from perfgym.rewards._check import (
    RewardCheckError,
    canonical_batch,
    canonical_columns,
    check_reward,
)
from perfgym.rewards._percentile import percentile, percentile_qar, percentile_qp
from perfgym.rewards._registry import get_reward, list_rewards, register_reward, reward_factory
from perfgym.rewards._rlpf import rlpf, rlpf_no_fbr, rlpf_no_rbr, rlpf_no_shaping

__all__ = [
    "RUNGS",
    "Reward",
    "RewardCheckError",
    "RewardOutput",
    "afterburner",
    "afterburner_format_ok",
    "canonical_batch",
    "canonical_columns",
    "check_reward",
    "get_reward",
    "linear",
    "list_rewards",
    "log",
    "percentile",
    "percentile_qar",
    "percentile_qp",
    "register_reward",
    "reward_factory",
    "rlpf",
    "rlpf_no_fbr",
    "rlpf_no_rbr",
    "rlpf_no_shaping",
    "rlvr",
    "runtime_only",
]
