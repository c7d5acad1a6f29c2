"""The staged judge: extract → build → run → check → measure, returning a `Verdict`.

Names load on first use, so `import perfgym.judge.verdict` (rewards, metrics) does not load
the pipeline and its sandbox.
"""

from typing import TYPE_CHECKING

from perfgym._lazy import exports_of, lazy_exports

# `extract` is also a submodule's name: imported here so the function, not the module, wins.
from perfgym.judge.extract import Extraction, extract

if TYPE_CHECKING:
    from perfgym.judge.candidate import Candidate
    from perfgym.judge.config import JudgeConfig
    from perfgym.judge.judge import Judge
    from perfgym.judge.verdict import Stage, TestResult, Timing, TimingStatus, Verdict

_EXPORTS = exports_of(
    {
        "perfgym.judge.candidate": ("Candidate",),
        "perfgym.judge.config": ("JudgeConfig",),
        "perfgym.judge.judge": ("Judge",),
        "perfgym.judge.verdict": ("Stage", "TestResult", "Timing", "TimingStatus", "Verdict"),
    }
)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "Candidate",
    "Extraction",
    "Judge",
    "JudgeConfig",
    "Stage",
    "TestResult",
    "Timing",
    "TimingStatus",
    "Verdict",
    "extract",
]
