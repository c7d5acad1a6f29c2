"""`perfgym eval SUITE --model M`: generate and judge in one command, judging while generating.

Generation runs on its own thread (the model calls, as `perfgym generate` makes them, into the
same resumable candidates file and call log); the main thread judges each task as soon as all
its samples are out, and appends its verdicts to the results file at once. A model error stops
generation; every verdict already judged stays in the results file (and the store).
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from perfgym.cli import model_options as mo
from perfgym.cli.output import check_writable, console, err_console, fail, print_json
from perfgym.errors import PerfgymError

if TYPE_CHECKING:
    from perfgym.cli.eval_output import Shown
    from perfgym.evaluation.candidates_file import FileCandidate
    from perfgym.evaluation.config import EvalConfig
    from perfgym.judge.verdict import Verdict
    from perfgym.tasks.suite import Suite
    from perfgym.tasks.task import Task

_DONE = object()


class _Stopped(PerfgymError):
    """The main thread has stopped: generation ends without another call."""


def results_path(candidates: Path) -> Path:
    name = candidates.name.removesuffix(".candidates.jsonl").removesuffix(".jsonl")
    return candidates.with_name(name + ".results.jsonl")


#: eval's options that mean another source of candidates, refused beside --model.
_OTHER_SOURCES = (
    "--candidates",
    "--solutions",
    "--replay",
    "--candidates-from",
    "--backend service",
    "--backend ray",
    "--allow-missing",
    "--skip-bad-lines",
    "--format",
)


def eval_model_command(
    s: Suite, tasks: list[Task], config: EvalConfig, given: dict[str, bool], shown: Shown
) -> None:
    """`perfgym eval --model`: checks its options, then `run_eval_model`."""
    if len(config.models) != 1:
        fail(f"--model: give one model to generate from, got {len(config.models)}")
    for other in _OTHER_SOURCES:
        if given.get(other):
            fail(f"{other} cannot be used with --model (it generates its own candidates)")
    if config.repeats is not None and config.repeats < 1:
        fail(f"--repeats must be at least 1, got {config.repeats}")
    flags = mo.ModelFlags(model=config.models[0], model_config=config.model_file,
                          base_url=config.base_url, api_key_env=config.api_key_env)  # fmt: skip
    run_eval_model(s, tasks, flags, config, shown)


def run_eval_model(
    s: Suite, tasks: list[Task], flags: mo.ModelFlags, eval_config: EvalConfig, shown: Shown
) -> None:
    """Generate `samples` per task from the model and judge them as tasks complete."""
    from rich.progress import Progress

    from perfgym.cli.eval_output import summary_table, warn_no_report
    from perfgym.cli.generate_cmd import default_output
    from perfgym.cli.summary import failure_reasons, print_failures
    from perfgym.evaluation.repeats import JUDGE_REPEATS
    from perfgym.evaluation.run import write_html_report
    from perfgym.judge import JudgeConfig
    from perfgym.llm.candidates_out import CandidatesOut
    from perfgym.metrics.summary import summarise_models
    from perfgym.store.journal import ResultsJournal
    from perfgym.store.open_judge import open_judge
    from perfgym.store.results_file import header

    samples, out, store = eval_config.samples, eval_config.out, eval_config.store
    repeats, seed = eval_config.repeats or JUDGE_REPEATS, eval_config.seed
    as_json, quiet = shown.as_json, shown.quiet
    try:
        config = flags.config()
    except PerfgymError as exc:
        fail(str(exc))
    k = samples if samples is not None else config.n
    if k < 1:
        fail(f"--samples must be at least 1, got {k}")
    if out is None:
        cand_path = default_output(s.name, config.model, k)
        out = results_path(cand_path)
    else:  # the candidates beside the results they are judged into
        cand_path = out.with_name(out.name.removesuffix(".jsonl") + ".candidates.jsonl")
    if out.resolve() == cand_path.resolve():
        fail(f"the results file {out} would overwrite the candidates file")
    for path, what in ((cand_path, "candidates file"), (out, "results file")):
        check_writable(path, what)
    if store is not None:
        check_writable(Path(store), "result store")
    t0 = time.monotonic()
    written = CandidatesOut(cand_path)
    ready: queue.Queue[Any] = queue.Queue()
    by_id = {t.id: t for t in tasks}
    verdicts: list[Verdict] = []
    judge_config = JudgeConfig(repeats=repeats)
    head = header(suite=s.name, judge=judge_config.model_dump(mode="json"), seed=seed,
                  model=config.model, candidates=str(cand_path), complete=False)  # fmt: skip
    reused = _earlier_verdicts(out, config.model, by_id)
    judged_now = 0
    verdicts.extend(reused.values())
    journal = ResultsJournal(out, head, list(reused.values()))
    stop = threading.Event()
    try:
        with mo.open_model(flags, tasks, call_log=store) as (client, _srv):
            thread = threading.Thread(
                target=_generate, args=(client, tasks, k, written, ready, stop), daemon=True
            )
            if len(written.done) < len(tasks) * k:  # bad endpoint or key: one line, at once
                from perfgym.cli.generate_cmd import _checked

                asyncio.run(_checked(client))
            judge = open_judge(judge_config, store=store, run=str(out))
            try:
                with Progress(console=err_console, disable=as_json or quiet,
                              transient=True) as bar:  # fmt: skip
                    gen = bar.add_task(f"generating from {config.model}",
                                       total=len(tasks) * k, completed=len(written.lines))  # fmt: skip
                    jud = bar.add_task("judging", total=len(tasks) * k, completed=len(reused))
                    thread.start()
                    while True:
                        item = ready.get()
                        bar.update(gen, completed=len(written.lines))
                        if item is _DONE:
                            break
                        if isinstance(item, BaseException):
                            raise item
                        batch = [c for c in _candidates(by_id[item], written.lines,
                                                        config.model, k, s.name)
                                 if not _same_call(reused.get((c.task.id, c.sample)), c)]  # fmt: skip
                        judged = _with_meta(judge.judge_many(batch), batch) if batch else []
                        journal.append(judged)
                        verdicts.extend(judged)
                        bar.advance(jud, len(judged))
                        judged_now += len(judged)
            finally:
                stop.set()
                thread.join(timeout=60)
                judge.close()
        written.finish([t.id for t in tasks])
        rank = {t.id: i for i, t in enumerate(tasks)}
        latest = {(v.task_id, v.sample): v for v in verdicts}  # a verdict judged again wins
        verdicts = sorted(latest.values(), key=lambda v: (rank[v.task_id], v.sample))
        journal.finish(verdicts, totals=_totals(client))
    except KeyboardInterrupt:
        written.close()
        journal.close()
        from perfgym.cli.interrupted import stop_interrupted

        stop_interrupted("verdicts", len(verdicts), len(tasks) * k, str(out))
    except PerfgymError as exc:
        written.close()
        journal.close()
        fail(
            f"{exc} ({len(verdicts)} verdicts, {len(written.lines)} samples kept; rerun to resume)"
        )
    rows = summarise_models(verdicts, seed=seed)
    report, problem = write_html_report(out) if eval_config.report else (None, None)
    warn_no_report(problem)
    if as_json:
        print_json({"suite": s.name, "results": str(out), "candidates": str(cand_path),
                    "report": str(report) if report else None, "model_calls": _totals(client),
                    "elapsed_s": time.monotonic() - t0, "judged": judged_now,
                    "reused": len(verdicts) - judged_now,
                    "failures": failure_reasons(verdicts),
                    "models": [r.model_dump(mode="json") for r in rows]})  # fmt: skip
        return
    if not quiet:
        console.print(summary_table(rows, f"perfgym eval {s.name} --model {config.model}"))
        print_failures(verdicts, verbose=False)
    t = _totals(client)
    console.print(f"results: {escape(str(out))} ({len(verdicts)} verdicts; candidates "
                  f"{escape(str(cand_path))}; {t['requests']} requests, {t['replayed']} "
                  f"replayed, {t['retries']} retries, ${t['cost_usd']:.4f}, "
                  f"{time.monotonic() - t0:.0f} s)")  # fmt: skip
    if report is not None:
        console.print(f"report: {report}")


def _generate(client: Any, tasks: list[Task], k: int, written: Any, ready: queue.Queue[Any],
              stop: threading.Event) -> None:  # fmt: skip
    """The generation thread: tasks already complete first, then each task as it completes."""
    from perfgym.llm.generation import plan, run_jobs

    model = client.config.model
    try:
        jobs = plan(tasks, k, model, written.done)
        pending = {j.task.id for j in jobs}
        for t in tasks:
            if t.id not in pending:
                ready.put(t.id)

        def on_line(line: dict[str, Any]) -> None:
            if stop.is_set():
                raise _Stopped
            written.write(line)

        async def main() -> None:
            try:
                await run_jobs(client, jobs, model, json_output=client.config.json_output,
                               on_line=on_line, on_task=ready.put)  # fmt: skip
            finally:
                await client.aclose()

        asyncio.run(main())
        ready.put(_DONE)
    except BaseException as exc:  # noqa: BLE001 - handed to the main thread, which reports it
        ready.put(exc)


def _candidates(task: Task, lines: list[dict[str, Any]], model: str, k: int,
                suite: str) -> list[FileCandidate]:  # fmt: skip
    """The task's k candidates, read from its lines by the candidates file's own rules."""
    from perfgym.evaluation.candidates_file import FileCandidate
    from perfgym.evaluation.candidates_formats import parse_record

    out = []
    for obj in lines:
        if obj["task_id"] != task.id or obj["model"] != model or obj["sample"] >= k:
            continue
        for r in parse_record(obj, {task.id: task}, "perfgym"):
            out.append(FileCandidate(task, r.completion, r.source, r.model, r.sample or 0,
                                     suite=suite, meta=r.meta))  # fmt: skip
    return sorted(out, key=lambda c: c.sample)


def _earlier_verdicts(
    out: Path, model: str, tasks: dict[str, Task]
) -> dict[tuple[str, int], Verdict]:
    """The verdicts an earlier run of the same command left in `out` (killed, or stopped by a
    model error): judged once, never again. An infrastructure failure is judged again."""
    from perfgym.judge.verdict import Verdict
    from perfgym.store.results_file import scan_results

    if not out.is_file():
        return {}
    try:
        scan = scan_results(out)
    except PerfgymError:
        return {}
    found: dict[tuple[str, int], Verdict] = {}
    for _n, obj in scan.records:
        try:
            v = Verdict.model_validate(obj)
        except ValueError:
            continue
        if v.model == model and v.task_id in tasks and not v.infra_error:
            found[(v.task_id, v.sample)] = v
    return found


def _same_call(verdict: Verdict | None, candidate: FileCandidate) -> bool:
    """Whether `verdict` judged this candidate's answer (the same model call)."""
    if verdict is None:
        return False
    mine = (candidate.meta.get("generation") or {}).get("call_key")
    theirs = (verdict.meta.get("generation") or {}).get("call_key")
    return mine is not None and mine == theirs


def _with_meta(verdicts: list[Verdict], batch: list[FileCandidate]) -> list[Verdict]:
    from perfgym.evaluation.candidates_file import with_meta

    return with_meta(verdicts, batch)


def _totals(client: Any) -> dict[str, Any]:
    t = client.totals
    return {"requests": t.requests, "replayed": t.replayed, "retries": t.retries,
            "truncated": t.truncated, "prompt_tokens": t.prompt_tokens,
            "completion_tokens": t.completion_tokens, "cost_usd": round(t.cost_usd, 6)}  # fmt: skip
