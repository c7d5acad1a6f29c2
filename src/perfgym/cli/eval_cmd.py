"""`perfgym eval SUITE`: judge candidates (or the suite's own solutions) and summarise."""

from __future__ import annotations

import contextlib
import dataclasses
import sqlite3
import time
from pathlib import Path

import typer
from pydantic import ValidationError
from rich.markup import escape
from rich.progress import Progress
from rich.table import Table

from perfgym.cli import app
from perfgym.cli.candidates_file import read_candidates
from perfgym.cli.enamel_eval import run_enamel
from perfgym.cli.output import check_writable, console, err_console, fail, one_line, print_json
from perfgym.cli.suite_arg import load_or_fail
from perfgym.errors import PerfgymError
from perfgym.judge import Candidate, JudgeConfig, Verdict
from perfgym.judge.enamel_protocol import REPEATS as ENAMEL_REPEATS
from perfgym.judge.enamel_protocol import is_enamel
from perfgym.metrics.summary import ModelSummary, summarise_models
from perfgym.service.backend import BACKENDS, open_judge
from perfgym.store.replay import RecordingJudge
from perfgym.store.results_file import write_results
from perfgym.tasks.task import Task

#: `perfgym eval`'s measured runs per workload on the staged judge (RLPF's protocol uses 3).
JUDGE_REPEATS = 3


def resolve_repeats(repeats: int | None, *, enamel: bool) -> int:
    """The measured runs per workload: an explicit `--repeats` as given, else the protocol's."""
    if repeats is not None:
        return repeats
    return ENAMEL_REPEATS if enamel else JUDGE_REPEATS


def own_solutions(tasks: list[Task], labels: list[str]) -> list[Candidate]:
    """The suite's own solutions as candidates, one model per label."""
    out = []
    for t in tasks:
        by_label = {s.label: s for s in t.solutions()}
        for label in labels:
            sol = by_label.get(label)
            if sol is not None:
                out.append(Candidate(t, source=sol.source, model=label))
    return out


def summary_table(rows: list[ModelSummary], title: str) -> Table:
    t = Table(title=title)
    for col in ("model", "n", "NX", "NC", "NR", "WO", "OK", "infra", "CRR", "FBR", "RBR", "CGRE"):
        t.add_column(col)
    for r in rows:
        t.add_row(r.model, str(r.n), *(str(r.stages.get(s, 0)) for s in ("NX", "NC", "NR", "WO", "OK")),
                  str(r.infra_errors), *(r.cell(k) for k in ("crr", "fbr", "rbr", "cgre")))  # fmt: skip
    return t


@app.command("eval")
def eval_(
    suite: str = typer.Argument(..., help="Suite: a built-in name or a path."),
    candidates: Path | None = typer.Option(None, "--candidates", help="JSONL of candidates."),
    solutions: list[str] = typer.Option(
        [],
        "--solutions",
        help="Judge the suite's own solutions with these labels (default: baseline and reference).",
    ),  # fmt: skip
    task: list[str] = typer.Option([], "--task", help="Only these task ids (repeatable)."),
    out: Path | None = typer.Option(None, "--out", help="Results JSONL (default under results/)."),
    repeats: int | None = typer.Option(
        None,
        "--repeats",
        help=f"Measured runs per workload (default: the protocol's own, {JUDGE_REPEATS} for the "
        f"staged judge as in RLPF, {ENAMEL_REPEATS} for ENAMEL's protocol).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable summary on stdout."),
    store: str = typer.Option("results/perfgym.sqlite", "--store", help="Result store (SQLite)."),
    no_store: bool = typer.Option(False, "--no-store", help="Do not record verdicts."),
    replay: bool = typer.Option(False, "--replay", help="Reuse stored verdicts; execute nothing."),
    replay_machine: str | None = typer.Option(
        None, "--replay-machine", help="Replay verdicts measured on this fingerprint ('*': any)."
    ),
    backend: str = typer.Option("local", "--backend", help=f"Judge on: {', '.join(BACKENDS)}."),
    url: str | None = typer.Option(None, "--url", help="Service URL (--backend service)."),
    token: str | None = typer.Option(
        None, "--token", envvar="PERFGYM_TOKEN", help="Service token."
    ),
    address: str | None = typer.Option(None, "--address", help="Ray address (--backend ray)."),
    report: bool = typer.Option(True, "--report/--no-report", help="Write the HTML report."),
) -> None:
    """Judge every candidate through extract → build → run → check → measure."""
    s, tasks = load_or_fail(suite, task)
    if repeats is not None and repeats < 1:
        fail(f"--repeats must be at least 1, got {repeats}")
    enamel = bool(tasks) and all(is_enamel(t) for t in tasks)
    repeats = resolve_repeats(repeats, enamel=enamel)
    out = out or Path("results") / f"{s.name}-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"
    # Before judging anything: a verdict judged is never lost to a path that cannot be written.
    check_writable(out, "results file")
    if not no_store:
        check_writable(Path(store), "result store")
    if enamel and candidates is not None:  # model samples through ENAMEL's own protocol
        from perfgym.cli.enamel_candidates import run_enamel_candidates  # noqa: PLC0415

        run_enamel_candidates(s, tasks, candidates, solutions, out, repeats, as_json)
        return
    if enamel:
        run_enamel(tasks, solutions, out, repeats, as_json)
        return
    problems: list[str] = []
    if candidates is not None:
        try:
            cands, problems = read_candidates(candidates, s)
        except PerfgymError as exc:
            fail(str(exc))
        wanted = {t.id for t in tasks}
        cands = [c for c in cands if c.task.id in wanted]
        for p in problems:
            err_console.print(f"[yellow]skipped[/] {candidates}: {p}")
        if not cands:
            fail(f"no usable candidates in {candidates}")
    else:
        cands = own_solutions(tasks, solutions or ["baseline", "reference"])
        if not cands:
            fail(f"no solutions labelled {', '.join(solutions)} in {s.name}")
    cands = [dataclasses.replace(c, suite=s.name) for c in cands]  # the judge stamps it on verdicts
    try:
        config = JudgeConfig(repeats=repeats)
    except ValidationError as exc:
        fail(f"invalid judge settings: {one_line(exc)}")
    t0 = time.monotonic()
    try:
        judge = open_judge(config, backend=backend, url=url, token=token, address=address,
                           store=None if no_store else store, replay=replay,
                           replay_machine=replay_machine, run=str(out))  # fmt: skip
        with contextlib.closing(judge), Progress(console=err_console, disable=as_json) as bar:
            job = bar.add_task(f"judging {len(cands)} candidates on {s.name}", total=len(cands))
            verdicts: list[Verdict] = judge.judge_many(
                cands, progress=lambda done, total: bar.update(job, completed=done)
            )
    except PerfgymError as exc:
        fail(str(exc))
    except sqlite3.Error as exc:  # a store file that is not SQLite, or a locked one
        fail(f"result store {store}: {exc}")
    try:
        write_results(out, verdicts, suite=s.name, judge=config.model_dump(mode="json"),
                      skipped_lines=problems)  # fmt: skip
    except OSError as exc:
        kept = "" if no_store else f"; the verdicts are in the store {store}"
        fail(f"cannot write results {out}: {exc.strerror or exc}{kept}")
    rows = summarise_models(verdicts)
    report_path = _write_report(out) if report else None
    if as_json:
        reused = {"judged": judge.judged, "replayed": judge.replayed} if isinstance(
            judge, RecordingJudge) else {}  # fmt: skip
        print_json({"suite": s.name, "results": str(out), "skipped_lines": problems,
                    "report": str(report_path) if report_path else None,
                    "elapsed_s": time.monotonic() - t0, **reused,
                    "models": [r.model_dump(mode="json") for r in rows]})  # fmt: skip
        return
    console.print(summary_table(rows, f"perfgym eval {s.name}"))
    console.print(f"results: {out} ({len(verdicts)} verdicts, {time.monotonic() - t0:.0f} s)")
    if report_path is not None:
        console.print(f"report: {report_path}")


def _write_report(results: Path) -> Path | None:
    """The HTML report beside the results; a problem with it is a warning, not a failed eval."""
    target = results.with_suffix(".html")
    try:
        from perfgym.report import write_report

        write_report([results], target)
    except Exception as exc:  # noqa: BLE001 - the verdicts are written; a report is extra
        why = (str(exc).splitlines() or [type(exc).__name__])[0]
        err_console.print(f"[yellow]no report:[/] {escape(why)}")
        return None
    return target
