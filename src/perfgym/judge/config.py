"""`JudgeConfig`: how candidates are judged and measured (written into every result file).

The measurement protocol lives here (repeats, warm-ups, interleaving, cores, estimator, clock,
early stopping, drift probes, the first-call check); `docs/timing.md` explains each choice.
Named presets: `JudgeConfig.protocol("evaluation" | "training" | "naive", **overrides)`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from perfgym.ceilings import WALL_BACKSTOP
from perfgym.errors import ConfigError
from perfgym.timing.check_configs import DriftConfig, FirstCallConfig

Clock = Literal["wall", "cpu", "instructions"]
#: Where the reference's runs are kept by default: outside every run's view (runs see no
#: /var), beside the build cache.
REFERENCE_CACHE_ROOT = "/var/tmp/perfgym/reference-runs"


class JudgeConfig(BaseModel):
    """Settings of the staged judge."""

    model_config = ConfigDict(extra="forbid")

    sandbox: Literal["warm", "bwrap"] = Field("warm", description="Sandbox backend.")
    repeats: int = Field(
        5,
        ge=1,
        le=1000,
        description="Measured runs per workload and variant (the minimum when early stopping). "
        "5 is the fewest with which the rank test in `compare` can reach p < 0.05.",
    )
    max_repeats: int | None = Field(
        None,
        ge=1,
        le=1000,
        description="Early stopping: keep adding interleaved rounds after `repeats` until every "
        "variant's CI half-width is within `target_rel_ci` of its estimate, up to this many "
        "rounds. None: exactly `repeats` rounds.",
    )
    noise_rounds: int = Field(
        5,
        ge=0,
        le=100,
        description="With repeats < 3 (too few rounds for a test): interleaved rounds of the "
        "A/A measurement (the baseline and the reference each against its own copy) that sets "
        "their noise bands, once per task per judge; speed decisions then need a ratio "
        "outside the band of the role compared with. "
        "0: no band, and such differences are never decided.",
    )
    target_rel_ci: float = Field(
        0.03, gt=0, le=1, description="Early stopping: wanted CI half-width / estimate."
    )
    ci_level: float = Field(0.95, gt=0.5, lt=1, description="Level of every timing CI.")
    warmup: int = Field(0, ge=0, le=100, description="Unmeasured runs before the measured ones.")
    interleave: bool = Field(
        True,
        description="Interleave the variants: every round holds each once, in a fresh seeded "
        "random order, so drift hits all alike; False runs each variant's repeats back to back "
        "(A A A B B B), for contrast only.",
    )
    estimator: Literal["median", "hodges_lehmann", "minimum", "mean"] = Field(
        "median", description="How a variant's samples become its duration."
    )
    clock: Clock = Field(
        "cpu",
        description="The duration: 'cpu' (user+system CPU of the run's whole process tree; "
        "with runs pinned one per core it equals wall time on a quiet core and ignores time "
        "stolen by other processes), 'wall', or 'instructions' (hardware counters where the "
        "kernel allows, else Valgrind; deterministic, ~10-100x slower). Harness tasks: see "
        "use_harness_time.",
    )
    use_harness_time: bool = Field(
        True,
        description="Harness tasks: use the harness's own elapsed_ns (PerfCodeBench's metric) when "
        "it agrees with the external measurement; a disagreement degrades the timing. Ignored "
        "with clock='instructions'.",
    )
    time_limit_s: float = Field(
        10.0,
        gt=0,
        description="Per-run time limit unless the task sets one: CPU time of every process "
        "the run had (times the task's cores), so a busy or slower machine does not cut a "
        "correct program; the wall limit is wall_backstop times it.",
    )
    wall_backstop: float = Field(
        WALL_BACKSTOP,
        ge=1.0,
        le=100.0,
        description="A run's wall limit as a multiple of its time limit (the task's, a test's "
        "relative one): a backstop that stops a program that sleeps or waits without using "
        "CPU, with room for a machine loaded this many runnable processes per core.",
    )
    machine_scale_cap: float | None = Field(
        4.0,
        ge=1.0,
        le=100.0,
        description="Tasks whose limit was set beside published times (PerfCodeBench): the "
        "limit times the largest ratio here / published of the baseline's and reference's "
        "times, at least 1, at most this, from the judge's own runs of them "
        "(perfgym.judge.machine_scale); None: the published limit as it is.",
    )
    test_time_factor: float | None = Field(
        4.0,
        gt=0,
        description="Correctness tests: a run's CPU limit is max(test_time_floor_s, this x the "
        "slower of the reference's and the baseline's measured CPU time on that test), its "
        "wall limit wall_backstop times that, both at most the task's (evalplus's rule, "
        "max(min_time_limit, gt_time_limit_factor x ground truth time), factor 4, on CPU time "
        "so that a loaded "
        "machine does not cut correct programs). Workloads keep the task's limit. None: tests "
        "get the task's limit.",
    )
    test_time_floor_s: float = Field(
        1.0,
        gt=0,
        description="Smallest CPU limit of a correctness test under test_time_factor: it "
        "absorbs start-up on tests that take milliseconds.",
    )
    fail_fast: bool = Field(
        True,
        description="Correctness tests: stop at a candidate's first failed test (its verdict); "
        "False: run every test, each with its own result (the verdict is still the first "
        "failure).",
    )
    isolate_tests: bool = Field(
        False,
        description="Function tasks' correctness tests: one sandboxed process per test instead "
        "of one per candidate (tests then share no state).",
    )
    same_program_once: bool = Field(
        True,
        description="Candidates of a task that are one program (the same extracted source, "
        "byte for byte: a comment or a trailing space makes another program) are judged once "
        "and share the verdict (flag 'same_program_judged_once'); a passing candidate whose "
        "source is the measured baseline's or reference's exactly takes that role's timing "
        "instead of being timed again (flag 'timing_of_same_program'; its correctness tests "
        "still run). See docs/judge.md.",
    )
    reuse_references: bool = Field(
        False,
        description="Reuse the baseline's timing of a task across calls of one Judge while the "
        "drift probes show the machine unchanged since it was measured (needs `drift`) and the "
        "reference, measured afresh with the candidates, agrees with its kept timing within "
        "reuse_tolerance. Its rounds are not paired with the candidate's (the reused timing "
        "carries the flag 'reused_timing'). See docs/timing.md.",
    )
    reuse_tolerance: float = Field(
        0.03,
        gt=0,
        description="reuse_references: the reference is measured afresh with the candidates in "
        "every call, a canary for the reused baseline: when its estimate moved by more than this "
        "(relative) from the kept one, nothing is reused and all are measured together again. "
        "0.03: compare's equivalence margin.",
    )
    reuse_max_age_s: float = Field(
        600.0,
        gt=0,
        description="reuse_references: timings older than this are measured again.",
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
    cores: list[int] | None = Field(
        None, description="Cores measured runs may use (timing mode); None: every usable core."
    )
    harness_saving_ratio: float = Field(
        0.5,
        ge=0,
        le=1,
        description="A harness-claimed saving vs the baseline must show at least this fraction "
        "in the wall time per round or (one-core tasks) the CPU time, or the timing is flagged "
        "(a patched timer).",
    )
    instructions_tool: Literal["cachegrind", "callgrind"] = Field(
        "cachegrind",
        description="Valgrind tool counting instructions when hardware counters are absent "
        "(cachegrind with --cache-sim=no is the cheaper; both follow child processes).",
    )
    instructions_slowdown: float = Field(
        100.0,
        ge=1,
        description="Valgrind runs get this many times the wall limit (and 2x + 256 MiB memory).",
    )
    drift: DriftConfig | None = Field(
        None,
        description="Drift probes measured at the start and around every task's measurement; "
        "timings taken while a probe is outside its noise band are degraded. None: off.",
    )
    first_call: FirstCallConfig | None = Field(
        None,
        description="Function tasks: time the first call apart from repeated calls in one "
        "process and flag a large gap (a caching signature). None: off.",
    )
    build_cache: str | None = Field(None, description="Build cache root (default: toolchains').")
    reference_cache: str | None = Field(
        REFERENCE_CACHE_ROOT,
        description="Where the runs of each task's own solutions on its tests (the expected "
        "outputs and the CPU times the tests' limits come from) are kept between judges, "
        "keyed by content, perfgym's and Python's versions and the machine "
        "(`perfgym.judge.reference_disk`); None: nothing kept. The environment variable "
        "PERFGYM_REFERENCE_CACHE (a directory, or 'off') overrides it.",
    )
    build_work_s: float = Field(
        2.0,
        gt=0,
        description="CPU seconds a correct candidate's build may take beyond its task's own "
        "builds (and beyond 4 times theirs) before it is flagged `build_work`: work done at "
        "compile time runs outside every clock (perfgym.judge.build_work). A C++ program "
        "including <bits/stdc++.h> builds in about 1 s of g++ CPU here; helper-84's two "
        "constexpr tables took 4.5 s against the reference's 0.3 s.",
    )
    hidden_workloads: bool = Field(
        False,
        description="Check and time on hidden workloads: for a task with a generator, one "
        "fresh input per declared generated workload (same size, a seed derived from the "
        "secret hidden_seed), expected outputs from the reference; baseline, reference and "
        "candidates of one call all run on them. The declared workloads and the tests stay the "
        "visible inputs. Each verdict says which inputs it was decided on (`decided_on`); a "
        "task without a generator is judged on its visible ones and says so. "
        "See docs/task-format.md.",
    )
    hidden_per_workload: int = Field(
        1,
        ge=1,
        le=64,
        description="hidden_workloads: fresh inputs drawn per declared generated workload "
        "(each its own seed). More inputs catch a program wrong on part of the generator's "
        "inputs more often; `perfgym optimize`'s correctness checks draw 4.",
    )
    hidden_seed: int | None = Field(
        None,
        ge=0,
        exclude=True,
        repr=False,
        description="hidden_workloads: the secret the hidden inputs are derived from. Never "
        "written with the config (results, run names, verdicts) nor shown to a program. None: "
        "a fresh one for every judge_many call (a training batch).",
    )

    @model_validator(mode="after")
    def _cap(self) -> JudgeConfig:
        if self.max_repeats is not None and self.max_repeats < self.repeats:
            raise ValueError(f"max_repeats ({self.max_repeats}) < repeats ({self.repeats})")
        if self.reuse_references and self.drift is None:
            raise ValueError(
                "reuse_references needs drift probes (drift={}): they are what says the machine "
                "is unchanged since the reused timings were measured"
            )
        return self

    @classmethod
    def protocol(cls, name: str, **overrides: Any) -> JudgeConfig:
        """A named measurement protocol (see PROTOCOLS), with field overrides."""
        if name not in PROTOCOLS:
            raise ConfigError(f"unknown protocol {name!r} (known: {', '.join(PROTOCOLS)})")
        return cls.model_validate({**PROTOCOLS[name], **overrides})


#: The named protocols. 'evaluation' is what `bench/timing_stability.py` validates;
#: 'naive' is a single unpinned wall-clock run per solution, kept only as the contrast.
PROTOCOLS: dict[str, dict[str, Any]] = {
    "evaluation": {
        "repeats": 5,
        "max_repeats": 7,
        "target_rel_ci": 0.05,
        "clock": "cpu",
        "drift": {},
    },
    "training": {"repeats": 5, "clock": "cpu", "drift": {}, "reuse_references": True},
    "naive": {
        "repeats": 1,
        "interleave": False,
        "timing_mode": False,
        "concurrency": 1,
        "clock": "wall",
    },
}
