"""`perfgym eval enamel --solutions NAME`: ENAMEL's own protocol and its eff@1 / pass@1."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.progress import Progress
from rich.table import Table

from perfgym.cli.interrupted import stop_interrupted, stop_on_sigterm
from perfgym.cli.output import console, err_console, fail, print_json
from perfgym.enamel.checkpoint import EnamelCheckpoint
from perfgym.enamel.pairing import EnamelTiming
from perfgym.enamel.protocol import SOLUTION_ALIASES
from perfgym.enamel.run import evaluate_solution_sets
from perfgym.errors import PerfgymError
from perfgym.metrics.enamel import EnamelConfig, enamel_eff_at_k, enamel_pass_at_k
from perfgym.store.checkpoint import ResumeFrom
from perfgym.tasks.generate import ENAMEL_KEY
from perfgym.tasks.task import Task


def run_enamel(
    tasks: list[Task],
    labels: list[str],
    out: Path,
    repeats: int,
    as_json: bool,
    resume: ResumeFrom | None = None,
    timing: EnamelTiming = EnamelTiming.SEQUENTIAL,
) -> None:
    labels = labels or ["humaneval-canonical"]
    known = set(SOLUTION_ALIASES) | {s.label for s in tasks[0].solutions()}
    unknown = [lb for lb in labels if lb not in known]
    if unknown:
        fail(
            f"unknown ENAMEL solution set(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    rows: list[dict[str, Any]] = []
    t0 = time.monotonic()
    try:
        checkpoint = EnamelCheckpoint(
            out, tasks, labels, resume=resume or ResumeFrom(explicit=True, prefix=""),
            header_fields={"suite": "enamel", "protocol": "enamel", "repeats": repeats,
                           "timing": timing.value},
        )  # fmt: skip
    except (OSError, PerfgymError) as exc:
        fail(f"cannot write results {out}: {getattr(exc, 'strerror', None) or exc}")
    out = checkpoint.path
    for line in [*checkpoint.notes, checkpoint.resume_line()]:
        if line:
            err_console.print(f"[yellow]{escape(line)}[/]", soft_wrap=True)
    scored = sum(t.metadata[ENAMEL_KEY].get("scored", True) for t in tasks)
    restore = stop_on_sigterm()

    def summarise(label: str) -> None:  # a solution set complete: its eff@1 and pass@1
        problems, traces = checkpoint.results(label)
        excluded = [tr.stopped for tr in traces if tr.stopped.startswith("excluded")]
        for why in excluded:
            err_console.print(f"[yellow]{escape(why)}[/]")
        eff = enamel_eff_at_k(problems, EnamelConfig(k=1))
        pas = enamel_pass_at_k(problems, EnamelConfig(k=1))
        rows.append({"solutions": label, "problems": len(problems), "excluded": excluded,
                     "eff@1": [eff.value, eff.ci_low, eff.ci_high],
                     "pass@1": [pas.value, pas.ci_low, pas.ci_high],
                     "notes": eff.notes})  # fmt: skip

    try:
        with Progress(console=err_console, disable=as_json) as bar:
            jobs = {lb: bar.add_task(f"ENAMEL {lb}", total=None) for lb in labels}
            evaluate_solution_sets(
                tasks, labels, repeats, checkpoint, done=summarise, timing=timing,
                progress=lambda lb, n, total: bar.update(jobs[lb], completed=n, total=total),
            )  # fmt: skip
        checkpoint.finish()
    except KeyboardInterrupt as exc:
        checkpoint.close()
        stop_interrupted("problem results", checkpoint.kept, scored * len(labels), str(out), exc)
    except OSError as exc:
        checkpoint.close()
        fail(f"cannot write results {out}: {exc.strerror or exc}")
    finally:
        restore()
    elapsed = time.monotonic() - t0
    if as_json:
        print_json({"suite": "enamel", "results": str(out), "elapsed_s": elapsed,
                    "reused": checkpoint.reused, "rows": rows})  # fmt: skip
        return
    t = Table(title="ENAMEL: eff@1 and pass@1 over the scored problems, 95% bootstrap CIs")
    for col in ("solutions", "problems", "eff@1", "pass@1"):
        t.add_column(col)
    for r in rows:
        e, p = r["eff@1"], r["pass@1"]
        t.add_row(r["solutions"], str(r["problems"]), f"{e[0]:.3f} [{e[1]:.3f}, {e[2]:.3f}]",
                  f"{p[0]:.3f} [{p[1]:.3f}, {p[2]:.3f}]")  # fmt: skip
    console.print(t)
    for r in rows:
        for note in r["notes"]:
            console.print(f"[yellow]{escape(r['solutions'])} eff@1: {escape(note)}[/]")
    reused = f", reused {checkpoint.reused} problem results" if checkpoint.reused else ""
    console.print(f"results: {out} ({elapsed:.0f} s{reused})")
