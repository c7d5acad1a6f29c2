"""`perfgym eval enamel --candidates FILE`: ENAMEL's protocol on model samples, eff@k per model."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.progress import Progress
from rich.table import Table

from perfgym.cli.output import console, err_console, fail, print_json
from perfgym.enamel.candidates import ModelRun
from perfgym.enamel.pairing import EnamelTiming
from perfgym.enamel.protocol import EnamelTrace
from perfgym.enamel.run import evaluate_model_samples
from perfgym.errors import PerfgymError
from perfgym.evaluation.candidates_file import read_candidates
from perfgym.metrics.enamel import EnamelConfig, enamel_eff_at_k, enamel_pass_at_k
from perfgym.store.results_file import header
from perfgym.tasks.suite_model import Suite
from perfgym.tasks.task import Task

#: The k ENAMEL reports (`demo.py`: 1, 10, 100), those a model's samples allow, and its n.
REPORTED_K = (1, 10, 100)


def ks_for(n: int) -> list[int]:
    """eff@k's k for n samples per problem: ENAMEL's 1, 10, 100 up to n, and n itself."""
    return sorted({k for k in REPORTED_K if k <= n} | ({n} if n >= 1 else set()))


def model_row(run: ModelRun) -> dict[str, Any]:
    """One model's summary: eff@k and pass@k with 95% bootstrap CIs for every reportable k."""
    row: dict[str, Any] = {"model": run.model, "problems": len(run.problems),
                           "samples_per_problem": run.min_samples,
                           "missing": len(run.missing), "metrics": {}}  # fmt: skip
    for k in ks_for(run.min_samples):
        for name, fn in (("eff", enamel_eff_at_k), ("pass", enamel_pass_at_k)):
            m = fn(run.problems, EnamelConfig(k=k))
            row["metrics"][f"{name}@{k}"] = [m.value, m.ci_low, m.ci_high]
    return row


def run_enamel_candidates(
    suite: Suite,
    tasks: list[Task],
    path: Path,
    solutions: list[str],
    out: Path,
    repeats: int,
    as_json: bool,
    *,
    timing: EnamelTiming = EnamelTiming.SEQUENTIAL,
) -> None:
    if solutions:
        fail("--candidates and --solutions both name what to evaluate: give one of them")
    try:
        cands, skipped = read_candidates(path, suite)
    except PerfgymError as exc:
        fail(str(exc))
    for p in skipped:
        err_console.print(f"[yellow]skipped[/] {escape(str(path))}: {escape(p)}")
    wanted = {t.id for t in tasks}
    cands = [c for c in cands if c.task.id in wanted]
    if not cands:
        fail(f"no usable candidates in {path}")
    t0 = time.monotonic()
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w") as f:
        f.write(json.dumps(header(suite=suite.name, protocol="enamel", repeats=repeats,
                                  timing=timing.value, candidates=str(path),
                                  skipped_lines=skipped)) + "\n")  # fmt: skip

        def write(traces: list[EnamelTrace]) -> None:  # each problem's traces as it finishes
            f.writelines(tr.model_dump_json() + "\n" for tr in traces)
            f.flush()

        with Progress(console=err_console, disable=as_json) as bar:
            job = bar.add_task(f"ENAMEL on {len(cands)} samples", total=None)
            runs, excluded = evaluate_model_samples(
                tasks, cands, repeats, on_traces=write, timing=timing,
                progress=lambda done, total: bar.update(job, completed=done, total=total),
            )  # fmt: skip
    for why in excluded:
        err_console.print(f"[yellow]{escape(why)}[/]")
    rows = [model_row(run) for run in runs.values()]
    for r in rows:
        if r["missing"]:
            err_console.print(f"[yellow]{escape(r['model'])}: {r['missing']} scored problem(s) "
                              "without a sample, counted as 0[/]")  # fmt: skip
    elapsed = time.monotonic() - t0
    if as_json:
        print_json({"suite": suite.name, "results": str(out), "elapsed_s": elapsed,
                    "excluded": excluded, "rows": rows})  # fmt: skip
        return
    t = Table(title="ENAMEL on model samples: eff@k and pass@k over the scored problems, "
              "95% bootstrap CIs")  # fmt: skip
    for col in ("model", "problems", "n", "metric", "value [95% CI]"):
        t.add_column(col)
    for r in rows:
        for name, (v, lo, hi) in r["metrics"].items():
            t.add_row(r["model"], str(r["problems"]), str(r["samples_per_problem"]), name,
                      f"{_num(v)} [{_num(lo)}, {_num(hi)}]")  # fmt: skip
    console.print(t)
    console.print(f"results: {out} ({elapsed:.0f} s)")


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"
