"""`JudgeConfig`: how candidates are judged and measured (written into every result file)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class JudgeConfig(BaseModel):
    """Settings of the staged judge."""

    model_config = ConfigDict(extra="forbid")

    sandbox: Literal["warm", "bwrap"] = Field("warm", description="Sandbox backend.")
    repeats: int = Field(3, ge=1, le=1000, description="Measured runs per workload and variant.")
    warmup: int = Field(0, ge=0, le=100, description="Unmeasured runs before the measured ones.")
    estimator: Literal["median", "hodges_lehmann", "minimum", "mean"] = Field(
        "median", description="How a variant's samples become its duration."
    )
    clock: Literal["wall", "cpu"] = Field(
        "wall", description="Which external clock is the duration (harness tasks: see below)."
    )
    use_harness_time: bool = Field(
        True,
        description="Harness tasks: use the harness's own elapsed_ns (PerfCodeBench's metric) when "
        "it agrees with the external measurement; a disagreement degrades the timing.",
    )
    time_limit_s: float = Field(
        10.0, gt=0, description="Per-run wall limit unless the task sets one."
    )
    memory_limit_mb: float = Field(
        1024.0, gt=0, description="Per-run memory unless the task sets one."
    )
    max_processes: int = Field(
        256, ge=1, description="Per-run process/thread cap (JVMs need many)."
    )
    measure_baseline: bool = Field(True, description="Measure the baseline beside the candidates.")
    measure_reference: bool = Field(
        True, description="Measure the reference beside the candidates."
    )
    check_workload_outputs: bool = Field(
        True, description="A candidate's workload outputs must match the reference's."
    )
    concurrency: int | None = Field(
        None, ge=1, description="Parallel correctness runs (default: number of cores)."
    )
    timing_mode: bool = Field(
        True, description="Measured runs are pinned, one per core, never sharing a core."
    )
    harness_saving_ratio: float = Field(
        0.5,
        ge=0,
        le=1,
        description="A harness-claimed saving vs the baseline must show at least this fraction "
        "in the external wall time, or the timing is flagged (a patched timer).",
    )
    build_cache: str | None = Field(None, description="Build cache root (default: toolchains').")
