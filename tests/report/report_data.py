"""Small results files for the report tests: two runs of one model family on twelve tasks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from perfgym.judge.verdict import Stage, Timing, Verdict
from perfgym.store.results_file import write_results

# (stage, Tc) per task for run A ("base") and run B ("tuned"); Tb = 1.0 s, Tr = 0.25 s.
RUN_A: list[tuple[Stage, float | None]] = [
    (Stage.OK, 1.2), (Stage.OK, 0.9), (Stage.OK, 0.5), (Stage.WO, None), (Stage.NR, None),
    (Stage.OK, 1.1), (Stage.NC, None), (Stage.OK, 0.2), (Stage.OK, 0.95), (Stage.NX, None),
    (Stage.OK, 1.0), (Stage.WO, None),
]  # fmt: skip
RUN_B: list[tuple[Stage, float | None]] = [
    (Stage.OK, 0.6), (Stage.OK, 0.25), (Stage.OK, 0.4), (Stage.OK, 0.8), (Stage.NR, None),
    (Stage.WO, None), (Stage.OK, 0.1), (Stage.OK, 0.2), (Stage.OK, 0.3), (Stage.OK, 1.3),
    (Stage.OK, 0.05), (Stage.OK, 0.7),
]  # fmt: skip


def timing(total: float) -> Timing:
    return Timing(estimate_s=total, samples_s=[total] * 3,
                  per_workload_s={"w1": total / 2, "w2": total / 2})  # fmt: skip


def run(model: str, outcomes: list[tuple[Stage, float | None]], suite: str = "demo",
        **extra: Any) -> list[Verdict]:  # fmt: skip
    out = []
    for k, (stage, tc) in enumerate(outcomes):
        detail = {Stage.NR: "TIMEOUT", Stage.WO: "WRONG_OUTPUT", Stage.NC: "COMPILE_ERROR",
                  Stage.NX: "NO_CODE"}.get(stage, "")  # fmt: skip
        out.append(Verdict(task_id=f"task-{k:02d}", suite=suite, model=model, stage=stage,
                           detail=detail, candidate=timing(tc) if tc is not None else None,
                           baseline=timing(1.0), reference=timing(0.25), **extra))  # fmt: skip
    return out


def write(path: Path, verdicts: list[Verdict], suite: str = "demo") -> Path:
    write_results(path, verdicts, suite=suite, judge={"repeats": 3})
    return path


def two_run_files(directory: Path) -> tuple[Path, Path]:
    """Run A and run B of one model as `base.jsonl` and `tuned.jsonl` in `directory`."""
    return (write(directory / "base.jsonl", run("model", RUN_A)),
            write(directory / "tuned.jsonl", run("model", RUN_B)))  # fmt: skip


def simulation_file(path: Path) -> Path:
    """A small simulation file: rlpf and rlvr on two tasks' four-solution ladders."""
    from perfgym.simulate import build_ladder, sweep, write_simulations
    from perfgym.tasks.task import Language, Solution, Task, TaskKind, TestCase

    tasks, verdicts = [], []
    for k in range(2):
        tid = f"task-{k}"
        tasks.append(Task(id=tid, family="f", language=Language.PYTHON, kind=TaskKind.STDIO,
                          baseline=Solution(label="baseline", source="pass"),
                          references=[Solution(label="reference", source="pass")],
                          pool=[Solution(label="pool-1", source="pass", quality=1)],
                          tests=[TestCase(id="t", expected="")]))  # fmt: skip
        for label, tc in (("baseline", 1.0), ("pool-1", 0.5), ("reference", 0.25)):
            verdicts.append(Verdict(task_id=tid, suite="demo", model=label, stage=Stage.OK,
                                    candidate=timing(tc), baseline=timing(1.0),
                                    reference=timing(0.25)))  # fmt: skip
    ladder = build_ladder(tasks, verdicts, suite="demo")
    write_simulations(path, sweep(ladder, ["rlpf", "rlvr"]), rank_by="spearman", suite="demo")
    return path
