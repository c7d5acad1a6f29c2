"""`EvalConfig`: everything one evaluation needs, as `perfgym eval`'s options say it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from perfgym.errors import PerfgymError

#: The result store an evaluation records its verdicts in unless told otherwise.
DEFAULT_STORE = "results/perfgym.sqlite"


class EvalFailed(PerfgymError):
    """An evaluation could not start or could not keep its results (the message says which)."""


class EvalConfig(BaseModel):
    """What to judge, how, and where the results go; one field per `perfgym eval` option.

    Candidates come from one source: `candidates` (a JSONL file), `candidates_from` (a
    PerfCodeBench model's published sources), `models` (generated, `perfgym eval --model`) or
    else the suite's own `solutions` (baseline and reference when empty).
    """

    model_config = ConfigDict(extra="forbid")

    suite: str = Field(description="A built-in suite name or a path.")
    task_ids: list[str] = Field(default_factory=list, description="Only these tasks.")
    split: str | None = Field(default=None, description="Only the tasks of this split.")
    limit: int | None = Field(default=None, description="Only the first N selected tasks.")
    external: Path | None = Field(default=None, description="PerfCodeBench's external/ folder.")
    # candidates
    candidates: Path | None = Field(default=None, description="A candidates JSONL file.")
    candidates_format: str = Field(default="auto", description="The candidates file's format.")
    skip_bad_lines: bool = False
    allow_missing: bool = Field(
        default=False, description="Score only answered tasks (else a missing one is NX)."
    )
    solutions: list[str] = Field(default_factory=list, description="The suite's solution labels.")
    candidates_from: str | None = Field(
        default=None, description="PerfCodeBench: judge this model's published sources."
    )
    # generation (`--model`) and the published results (`--published`)
    models: list[str] = Field(default_factory=list)
    samples: int | None = None
    model_file: Path | None = Field(default=None, description="A model config file (TOML/YAML).")
    base_url: str | None = None
    api_key_env: str | None = None
    published: bool = False
    rules: str | None = None
    # judging
    repeats: int | None = Field(default=None, description="None: the protocol's own.")
    time_limit_s: float | None = None
    fail_fast: bool = True
    isolate_tests: bool = False
    hidden: bool = False
    enamel_timing: str | None = Field(
        default=None, description="ENAMEL: 'paired' (None: the default) or 'sequential'."
    )
    time_largest: int | None = None
    perf_inputs: Path | None = None
    backend: str = "local"
    url: str | None = None
    token: str | None = None
    address: str | None = None
    # results
    out: Path | None = Field(default=None, description="Results JSONL (None: under results/).")
    store: str | None = Field(default=DEFAULT_STORE, description="None records nothing.")
    replay: bool = False
    replay_machine: str | None = None
    resume: bool = True
    report: bool = Field(default=True, description="Write the HTML report beside the results.")
    seed: int = Field(
        default=0, description="Seed of the metrics' bootstrap CIs and of `sample`'s draw."
    )
    sample: int | None = Field(default=None, description="A seeded sample of N of the selected "
                               "tasks, stratified by language.")  # fmt: skip
    languages: list[str] = Field(default_factory=list, description="Only tasks in these "
                                 "languages ('-L' leaves one out).")  # fmt: skip

    def judging(self) -> dict[str, Any]:
        """The judge settings these options set, for `JudgeConfig` (repeats aside)."""
        limit = {"time_limit_s": self.time_limit_s} if self.time_limit_s is not None else {}
        hidden = {"hidden_workloads": True} if self.hidden else {}
        return {**limit, "fail_fast": self.fail_fast, "isolate_tests": self.isolate_tests,
                **hidden}  # fmt: skip
