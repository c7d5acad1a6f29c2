"""perfgym: the performance-feedback environment for code LLMs.

The names a user starts with, loaded on first use (so `import perfgym.rewards` in a trainer's
worker does not pay for the judge, the sandbox or the task loaders):

    suite = perfgym.load_suite("perfgym-core")
    verdicts = perfgym.Judge().judge_many([perfgym.Candidate(task, source=...), ...])
    rewards = perfgym.get_reward("rlpf")(verdicts)
    table = perfgym.evaluate(verdicts)          # model -> metric -> MetricResult
"""

from typing import TYPE_CHECKING

from perfgym._lazy import exports_of, lazy_exports

__version__ = "0.1.0"

if TYPE_CHECKING:
    from perfgym.errors import PerfgymError
    from perfgym.judge.candidate import Candidate
    from perfgym.judge.config import JudgeConfig
    from perfgym.judge.judge import Judge
    from perfgym.judge.verdict import Stage, Verdict
    from perfgym.metrics.by_model import evaluate
    from perfgym.rewards._registry import get_reward, list_rewards
    from perfgym.tasks.suite import load_suite
    from perfgym.tasks.suite_model import Suite
    from perfgym.tasks.task import Task

_EXPORTS = exports_of(
    {
        "perfgym.errors": ("PerfgymError",),
        "perfgym.judge.candidate": ("Candidate",),
        "perfgym.judge.config": ("JudgeConfig",),
        "perfgym.judge.judge": ("Judge",),
        "perfgym.judge.verdict": ("Stage", "Verdict"),
        "perfgym.metrics.by_model": ("evaluate",),
        "perfgym.rewards._registry": ("get_reward", "list_rewards"),
        "perfgym.tasks.suite": ("load_suite",),
        "perfgym.tasks.suite_model": ("Suite",),
        "perfgym.tasks.task": ("Task",),
    }
)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "Candidate",
    "Judge",
    "JudgeConfig",
    "PerfgymError",
    "Stage",
    "Suite",
    "Task",
    "Verdict",
    "evaluate",
    "get_reward",
    "list_rewards",
    "load_suite",
]
