"""`run_eval`: judge an evaluation's candidates, write its results file, summarise, report."""

from __future__ import annotations

import contextlib
import dataclasses
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from perfgym.errors import PerfgymError, one_line
from perfgym.evaluation.config import EvalConfig, EvalFailed
from perfgym.evaluation.inputs import EvalInputs, gather
from perfgym.evaluation.repeats import JUDGE_REPEATS

if TYPE_CHECKING:
    from perfgym.judge.candidate import Candidate
    from perfgym.judge.config import JudgeConfig
    from perfgym.judge.verdict import Verdict
    from perfgym.metrics.summary import ModelSummary
    from perfgym.store.checkpoint import EvalCheckpoint


class EvalInterrupted(KeyboardInterrupt):
    """Judging was interrupted (Ctrl-C, or what the caller turned into one): `kept` of `total`
    verdicts are in `where`, and running the same evaluation again judges only the rest. The
    interrupt itself is the `__cause__`."""

    def __init__(self, kept: int, total: int, where: str) -> None:
        super().__init__(f"kept {kept} of {total} verdicts in {where}")
        self.kept, self.total, self.where = kept, total, where


class EvalWatcher:
    """What a caller hears while `run_eval` works; this one hears nothing (the CLI's prints)."""

    def note(self, line: str) -> None:
        """A line about the run (a resumed results file, records a resume skipped)."""

    @contextlib.contextmanager
    def guarded(self) -> Iterator[None]:
        """Around the judging: the CLI turns SIGTERM into an interrupt here."""
        yield

    @contextlib.contextmanager
    def judging(self, label: str, total: int, done: int) -> Iterator[Callable[[int], None]]:
        """Around the judging of `total` candidates, `done` of them reused: yields what is
        called with the number done so far."""
        yield lambda done: None


@dataclasses.dataclass
class EvalResult:
    """What an evaluation produced: its verdicts, where they are written, and their summary."""

    suite: str
    #: The results file (JSONL: a header, then one verdict per line).
    results: Path
    #: One verdict per candidate, in candidate order (reused ones included).
    verdicts: list[Verdict]
    #: NX verdicts of the tasks a model left unanswered (scored unless `allow_missing`).
    missing: list[Verdict]
    #: One row per model: pass@k and the speed rates with their CIs.
    summaries: list[ModelSummary]
    allow_missing: bool
    n_tasks: int
    #: The candidates file's bad lines that were skipped.
    skipped_lines: list[str]
    #: Verdicts reused from an interrupted run of the same evaluation, and its results file.
    reused: int
    resumed_from: Path | None
    #: The HTML report, or why there is none (None, None: not asked for).
    report: Path | None
    report_problem: str | None
    #: time.monotonic() when judging began.
    started: float
    #: With a store: how many verdicts were judged and how many replayed from it.
    recorded: dict[str, int]

    @property
    def counted(self) -> list[Verdict]:
        """The verdicts the summary scores: the missing tasks' too, unless `allow_missing`."""
        return self.verdicts if self.allow_missing else self.verdicts + self.missing

    def missing_counts(self) -> dict[str, int]:
        """Model -> how many tasks it left unanswered."""
        from perfgym.evaluation.missing import missing_counts

        return missing_counts(self.missing)


def default_results(suite: str) -> Path:
    """Where an evaluation's results go when no path is given: results/SUITE-TIMESTAMP.jsonl."""
    return Path("results") / f"{suite}-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"


def run_eval(
    config: EvalConfig,
    *,
    inputs: EvalInputs | None = None,
    results: Path | None = None,
    watch: EvalWatcher | None = None,
) -> EvalResult:
    """Judge the candidates `config` names through the staged judge, writing each verdict to
    the results file (and the store) as it is judged; then summarise them per model and write
    the HTML report. An interrupted run of the same evaluation is resumed.

    `inputs`: the suite, tasks and candidates already gathered (else `gather(config)`);
    `results`: the results path chosen for a `config.out` of None (else `default_results`).
    Raises EvalFailed (one line) when it cannot start or keep its results, and EvalInterrupted
    when interrupted (every finished verdict is kept).
    """
    from perfgym.evaluation.missing import missing_verdicts
    from perfgym.metrics.summary import summarise_models

    watch = watch or EvalWatcher()
    inputs = inputs or gather(config)
    s = inputs.suite
    cands = [dataclasses.replace(c, suite=s.name) for c in inputs.candidates]  # stamped on verdicts
    missing = missing_verdicts(inputs.tasks, cands, s.name) if config.candidates else []
    judge_config = _judge_config(config)
    out = config.out or results or default_results(s.name)
    checkpoint = _open_checkpoint(config, out, s.name, cands, judge_config, inputs.problems,
                                  missing)  # fmt: skip
    started = time.monotonic()
    for line in [*checkpoint.notes, checkpoint.resume_line()]:
        if line:
            watch.note(line)
    verdicts, recorded = _judge(config, checkpoint, judge_config, s.name, missing, watch)
    result = EvalResult(
        suite=s.name, results=checkpoint.path, verdicts=verdicts, missing=missing, summaries=[],
        allow_missing=config.allow_missing, n_tasks=len(inputs.tasks),
        skipped_lines=inputs.problems, reused=checkpoint.reused,
        resumed_from=checkpoint.resumed_from, report=None, report_problem=None,
        started=started, recorded=recorded,
    )  # fmt: skip
    result.summaries = summarise_models(result.counted, seed=config.seed)
    if config.report:
        result.report, result.report_problem = write_html_report(checkpoint.path)
    return result


def write_html_report(results: Path) -> tuple[Path | None, str | None]:
    """(the HTML report beside the results, None), or (None, why there is none): a problem
    with the report never fails an evaluation whose verdicts are written."""
    target = results.with_suffix(".html")
    try:
        from perfgym.report import write_report

        write_report([results], target)
    except Exception as exc:  # noqa: BLE001 - the verdicts are written; a report is extra
        return None, (str(exc).splitlines() or [type(exc).__name__])[0]
    return target, None


def _judge_config(config: EvalConfig) -> JudgeConfig:
    """The staged judge's settings `config` asks for (repeats: the protocol's unless given)."""
    from pydantic import ValidationError

    from perfgym.judge.config import JudgeConfig

    repeats = JUDGE_REPEATS if config.repeats is None else config.repeats
    if repeats < 1:
        raise EvalFailed(f"--repeats must be at least 1, got {repeats}")
    try:
        return JudgeConfig(repeats=repeats, **config.judging())
    except ValidationError as exc:
        raise EvalFailed(f"invalid judge settings: {one_line(exc)}") from exc


def _open_checkpoint(
    config: EvalConfig, out: Path, suite: str, cands: list[Candidate], judge_config: JudgeConfig,
    problems: list[str], missing: list[Verdict],
) -> EvalCheckpoint:  # fmt: skip
    """The results file opened (an interrupted run of the same evaluation found and reused)."""
    from perfgym.evaluation.missing import missing_counts
    from perfgym.store.checkpoint import EvalCheckpoint, ResumeFrom

    resume = ResumeFrom(config.out is not None, f"{suite}-", config.resume and not config.replay)
    try:
        return EvalCheckpoint(
            out, cands, judge_config, resume=resume, store=config.store,
            header_fields={"suite": suite, "judge": judge_config.model_dump(mode="json"),
                           "skipped_lines": problems, "missing": missing_counts(missing),
                           "allow_missing": config.allow_missing, "seed": config.seed},
        )  # fmt: skip
    except PerfgymError as exc:
        raise EvalFailed(str(exc)) from exc
    except sqlite3.Error as exc:
        raise EvalFailed(f"result store {config.store}: {exc}") from exc
    except OSError as exc:
        raise EvalFailed(f"cannot write results {out}: {exc.strerror or exc}") from exc


def _judge(
    config: EvalConfig, checkpoint: EvalCheckpoint, judge_config: JudgeConfig, suite: str,
    missing: list[Verdict], watch: EvalWatcher,
) -> tuple[list[Verdict], dict[str, int]]:  # fmt: skip
    """(every candidate's verdict, judged/replayed counts): what is left judged, each task's
    verdicts written as they come; the results file completed."""
    from perfgym.evaluation.candidates_file import with_meta
    from perfgym.store.open_judge import open_judge
    from perfgym.store.replay import RecordingJudge
    from perfgym.store.stream import judge_streaming

    out, store, cands = checkpoint.path, config.store, checkpoint.candidates
    try:
        with watch.guarded():
            judge = open_judge(judge_config, backend=config.backend, url=config.url,
                               token=config.token, address=config.address, store=store,
                               replay=config.replay, replay_machine=config.replay_machine,
                               run=str(out))  # fmt: skip
            label = f"judging {len(cands)} candidates on {suite}"
            with contextlib.closing(judge), watch.judging(label, len(cands),
                                                          checkpoint.reused) as advance:  # fmt: skip
                judged = judge_streaming(
                    judge, checkpoint.todo_candidates,
                    finished=lambda idx, vs: checkpoint.finished(idx, with_meta(vs, cands)),
                    progress=lambda done, total: advance(checkpoint.reused + done),
                )  # fmt: skip
            # The results file holds what was scored, so the report and a replay agree with
            # the summary: the MISSING verdicts too, unless allow_missing (its header still
            # counts them).
            verdicts = checkpoint.finish(with_meta(judged, cands),
                                         extra=[] if config.allow_missing else missing)  # fmt: skip
    except KeyboardInterrupt as exc:
        checkpoint.close()
        kept = f"{out}" + ("" if store is None else f" and the store {store}")
        raise EvalInterrupted(checkpoint.kept, len(cands), kept) from exc
    except PerfgymError as exc:
        checkpoint.close()
        raise EvalFailed(str(exc)) from exc
    except sqlite3.Error as exc:  # a store file that is not SQLite, or a locked one
        checkpoint.close()
        raise EvalFailed(f"result store {store}: {exc}") from exc
    except OSError as exc:
        checkpoint.close()
        kept = "" if store is None else f"; the verdicts are in the store {store}"
        raise EvalFailed(f"cannot write results {out}: {exc.strerror or exc}{kept}") from exc
    recorded = ({"judged": judge.judged, "replayed": judge.replayed}
                if isinstance(judge, RecordingJudge) else {})  # fmt: skip
    return verdicts, recorded
