"""The staged judge: extract → build → run → check → measure, returning a `Verdict`."""

from perfgym.judge.config import JudgeConfig
from perfgym.judge.extract import Extraction, extract
from perfgym.judge.judge import Candidate, Judge
from perfgym.judge.verdict import Stage, TestResult, Timing, TimingStatus, Verdict

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
