"""Running one prepared variant on one test case or workload (in the sandbox or a warm
worker), judging what it produced, and measured runs that are checked runs."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from perfgym.judge import trailer
from perfgym.judge.harness_answer import HarnessAnswer, answer_fields, mismatch
from perfgym.judge.oracle import check
from perfgym.judge.variant import Variant
from perfgym.judge.verdict import Stage, TestResult
from perfgym.sandbox.base import Sandbox
from perfgym.sandbox.execution import Status
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.pyworker import PythonWorkerPool
from perfgym.sandbox.run_request import Pin
from perfgym.tasks.task import Language, Task, TaskKind, TestCase


@dataclass
class RunOutcome:
    """What one run produced and cost, as seen from outside the program."""

    status: Status
    output: Any = None
    wall_s: float | None = None
    cpu_s: float | None = None
    peak_rss_mb: float | None = None
    memory_integral_mb_s: float | None = None
    reported_s: float | None = None  # the program's own timer (harness elapsed_ns): untrusted
    instructions: int | None = None  # hardware counters, or Valgrind in deterministic mode
    harness_ok: bool | None = None
    #: the harness verdict line's own `ok`, before the end-mark checks (which can fail a line
    #: that said ok: `harness_ok` is then False)
    line_ok: bool | None = None
    #: the answer fields of the harness's verdict line (`perfgym.judge.harness_answer`)
    answer: dict[str, Any] | None = None
    message: str = ""
    #: the sandbox's accounting suspicions (`Measurement.flags`: hidden CPU, processes that
    #: outlived the main one); a measured run carrying one cannot time a speed reward
    flags: list[str] = field(default_factory=list)
    #: most threads (of all its processes) seen alive at once, sampled; None when not sampled
    threads: int | None = None


def run_case(
    task: Task,
    variant: Variant,
    case: TestCase,
    *,
    sandbox: Sandbox,
    workers: PythonWorkerPool | None,
    limits: Limits,
    cpu: Pin = None,
    warm: bool = False,
) -> RunOutcome:
    """Run `variant` on `case` once (the case's input already materialised). `warm`: a Python
    stdio program runs in program mode of a warm worker (correctness runs, never measured
    ones: those stay fresh sandboxed processes)."""
    if task.kind is TaskKind.FUNCTION:
        assert workers is not None and variant.source is not None
        return _call(task, variant.source, case, workers, limits, cpu)
    script = _python_script(task, variant)
    if warm and workers is not None and script is not None and variant.source is not None:
        return _program(variant.source, script, case, workers, limits)
    secret = trailer.nonce() if task.kind is TaskKind.HARNESS and variant.end_mark else None
    files = {trailer.NONCE_FILE: secret + "\n"} if secret else None
    ex = sandbox.run(variant.argv, stdin=case.stdin, binds=variant.binds, limits=limits, cpu=cpu,
                     files=files)  # fmt: skip
    m = ex.measurement
    out = RunOutcome(
        status=ex.status,
        output=program_text(ex.stdout),
        wall_s=m.wall_s if m else None,
        cpu_s=m.cpu_s if m else None,
        peak_rss_mb=m.peak_rss_mb if m else None,
        memory_integral_mb_s=m.memory_integral_mb_s if m else None,
        instructions=m.instructions if m else None,
        message=ex.reason if ex.status is not Status.OK else "",
        flags=list(m.flags) if m else [],
        threads=(m.max_processes_seen or None) if m else None,
    )
    if ex.status is not Status.OK and ex.stderr:
        out.message = f"{out.message}: {ex.stderr_text.strip()[-300:]}"
    if task.kind is TaskKind.HARNESS:
        read_harness(ex.stdout_text, out, secret)
        if ex.status is Status.RUNTIME_ERROR and out.harness_ok is False:
            out.status = Status.OK  # it ran and reported a wrong answer: WO, not NR
    return out


def program_text(stdout: bytes) -> str:
    """A program's output as the text its check compares, losslessly: bytes that are not UTF-8
    become lone surrogates (PEP 383), so two different outputs never compare equal (replacing
    each invalid byte by U+FFFD would make them equal); valid UTF-8 decodes as itself."""
    return stdout.decode("utf-8", "surrogateescape")


def _python_script(task: Task, variant: Variant) -> str | None:
    """The script of a plain `python3 SCRIPT.py` stdio program, else None."""
    argv = variant.argv
    if task.kind is not TaskKind.STDIO or task.language is not Language.PYTHON:
        return None
    if len(argv) == 2 and argv[0] == "python3" and argv[1].endswith(".py"):
        return argv[1]
    return None


def _program(
    source: str, script: str, case: TestCase, workers: PythonWorkerPool, limits: Limits
) -> RunOutcome:
    r = workers.run_program(source, stdin=case.stdin, argv=[script], limits=limits)
    out = RunOutcome(status=r.status, output=program_text(r.stdout), wall_s=r.wall_s, cpu_s=r.cpu_s,
                  peak_rss_mb=r.peak_rss_mb, message=r.reason if r.status is not Status.OK else "",
                  flags=list(getattr(r, "flags", None) or []))  # fmt: skip
    if r.status is not Status.OK and r.stderr:
        out.message = f"{out.message}: {r.stderr_text.strip()[-300:]}"
    return out


def read_harness(stdout: str, out: RunOutcome, secret: str | None) -> None:
    """The harness's verdict from a run's stdout (`out.wall_s` already measured). With an
    end-mark wrapper (`secret`: the run's nonce, `perfgym.judge.trailer`), only the stdout
    before the mark counts, a verdict line with `ok` true needs the mark (else the harness did
    not finish: the program ended the run) and must be the only result line there. With or
    without one, the reported time cannot exceed the run's wall time measured outside."""
    mark = trailer.read_end_mark(stdout, secret) if secret is not None else None
    _read_harness_line(mark.before if mark is not None else stdout, out)
    if not out.harness_ok:
        return  # a failure the harness (or the program) reported: believed
    why = ""
    if mark is not None and mark.forged:
        why = "the program printed a forged end mark"
    elif mark is not None and not mark.found:
        why = (
            "the harness did not finish (its result line has no end mark after it: the "
            "program ended the run before the harness's main returned)"
        )
    elif mark is not None and mark.state != trailer.EndState.OK:
        why = f"the program replaced the harness's stdout ({mark.state})"
    elif mark is not None and _result_lines(mark.before) > 1:
        why = "more than one result line before the end mark (the program printed one)"
    elif (
        out.reported_s is not None
        and out.wall_s is not None
        and (out.reported_s > out.wall_s * WALL_MARGIN + WALL_SLACK_S)
    ):
        why = (
            f"the harness's elapsed_ns ({out.reported_s:.6f} s) exceeds the run's wall time "
            f"measured outside ({out.wall_s:.6f} s): forged"
        )
    if why:
        out.harness_ok, out.message = False, why


#: A reported time over the run's own wall time (measured outside, which contains it) by more
#: than this factor and slack is forged; generous, as the two clocks start at other moments.
WALL_MARGIN, WALL_SLACK_S = 1.05, 0.005


def _result_lines(stdout: str) -> int:
    """Lines that are, or look like, a result line: any with an `"ok"` key, parsed or not (a
    program that leaves a partial line makes the harness's own line unparseable)."""
    return sum('"ok"' in line for line in stdout.splitlines())


def _read_harness_line(stdout: str, out: RunOutcome) -> None:
    """PerfCodeBench harnesses print one JSON line with `ok` and `elapsed_ns`."""
    for line in reversed(stdout.strip().splitlines()):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):  # not JSON, or nested past the recursion limit
            continue
        if isinstance(obj, dict) and "ok" in obj:
            out.harness_ok = out.line_ok = bool(obj["ok"])
            out.answer = answer_fields(obj)
            ns = obj.get("elapsed_ns")
            # Every PerfCodeBench harness prints its elapsed_ns, and the program's process can
            # print this line too: a line without a plausible one (missing, negative, beyond a
            # float, infinity or NaN, which raised out of the judge and dropped the whole
            # batch) is not the harness's, so the run failed (the program's failure, WO).
            if isinstance(ns, int | float) and not isinstance(ns, bool) and 0 <= ns < 1e18:
                out.reported_s = float(ns) / 1e9
            elif out.harness_ok:
                out.harness_ok = False
                out.message = "the harness's result line has no valid elapsed_ns"
            return
    out.harness_ok = None
    if out.status is Status.OK:
        out.message = "the harness printed no JSON result line"


def _call(
    task: Task, source: str, case: TestCase, workers: PythonWorkerPool, limits: Limits,
    cpu: Pin = None,
) -> RunOutcome:  # fmt: skip
    """A function task's call in a warm worker, on one core: `cpu` (the core its measurement
    owns, in timing mode), else the worker's own."""
    if task.oracle.kind == "assertion":
        # HumanEval style: check(entry_point), the test code in a process apart from the
        # candidate's (in one process the candidate could forge the verdict or fool asserts).
        r = workers.check_call(source, task.oracle.checker or "", task.entry_point or "", limits,
                               core=cpu)  # fmt: skip
    else:
        r = workers.call(source, task.entry_point, case.args or [], limits, core=cpu)
    return RunOutcome(
        status=r.status,
        output=r.value,
        wall_s=r.wall_s,
        cpu_s=r.cpu_s,
        peak_rss_mb=r.peak_rss_mb,
        reported_s=r.reported_call_s,
        message=r.error,
        flags=list(getattr(r, "flags", None) or []),
    )


# -- judging one outcome ------------------------------------------------------------------------
Failure = tuple[Stage, str, str]  # (stage, detail, reason)
Expected = Callable[[], tuple[bool, Any]]  # (known, expected output or why it is unknown)


def judge_outcome(
    task: Task, case: TestCase, out: RunOutcome, expected: Expected
) -> tuple[TestResult, Failure | None]:
    """The `TestResult` of one run and, when it failed, the verdict's stage, detail and reason
    (NR for a run that did not finish cleanly, WO for a wrong answer)."""
    res = TestResult(id=case.id, passed=False, status=out.status, wall_s=out.wall_s,
                     cpu_s=out.cpu_s, peak_rss_mb=out.peak_rss_mb, message=out.message[:500])  # fmt: skip
    if out.status is Status.SANDBOX_ERROR:
        return res, (Stage.NR, "SANDBOX_ERROR", f"{case.id}: {out.message}")
    if out.status is not Status.OK:
        return res, (Stage.NR, out.status.value, f"{case.id}: {out.message}".strip())
    if task.kind is TaskKind.HARNESS or task.oracle.kind == "assertion":
        passed = out.harness_ok is not False and (
            task.kind is not TaskKind.HARNESS or out.harness_ok is True
        )
        message = "" if passed else (out.message or "the harness reported a wrong answer")
        if passed and task.kind is TaskKind.HARNESS:
            known, want = expected()
            if known and isinstance(want, HarnessAnswer) and (why := mismatch(want, out.answer)):
                passed, message = False, f"{why}: a wrong answer the line calls ok"
    else:
        known, want = expected()
        if not known:
            res.message = str(want)
            return res, (Stage.NR, "SANDBOX_ERROR", f"{case.id}: {want}")
        passed, message = check(task.oracle, case, want, out.output)
    res.passed, res.message = passed, message[:500]
    if not passed:
        return res, (Stage.WO, "WRONG_OUTPUT", f"{case.id}: {message}")
    return res, None


RunFn = Callable[[Variant, TestCase, Pin], RunOutcome]


class CheckedRuns:
    """A measurement's run function whose runs of the candidates are checked runs: every
    measured (and warm-up) run's output is judged against the workload's expected output, so
    a program that answers differently on later runs is caught on every one of them.

    After a candidate's first failed run its remaining runs are not executed (the verdict is
    NR/WO without a timing; nothing more is needed from it). Runs of other variants (baseline,
    reference) pass through unchecked. Outputs are dropped once checked.
    """

    def __init__(self, task: Task, run: RunFn, workloads: list[TestCase],
                 expected: dict[str, Any], labels: set[str]) -> None:  # fmt: skip
        self.task, self.run, self.labels = task, run, labels
        self.expected = expected
        self.order = {w.id: k for k, w in enumerate(workloads)}
        self._lock = threading.Lock()
        self._seq = 0
        self._first: dict[tuple[str, str], TestResult] = {}
        self._failed: dict[str, tuple[tuple[int, int], TestResult, Failure]] = {}

    def __call__(self, v: Variant, case: TestCase, cpu: Pin) -> RunOutcome:
        if v.label not in self.labels:
            return self.run(v, case, cpu)
        with self._lock:
            held = self._failed.get(v.label)
            # Runs of a workload after the failing one are not needed; an earlier workload's
            # still are (lanes run two workloads at once: its failure is the one reported).
            if held is not None and self.order.get(case.id, len(self.order)) >= held[0][0]:
                return RunOutcome(status=Status.RUNTIME_ERROR, message="not run: an earlier checked "
                               "run of this candidate failed")  # fmt: skip
        out = self.run(v, case, cpu)
        res, failure = judge_outcome(self.task, case, out, lambda: (True, self.expected[case.id]))
        out.output = None  # checked; measurement needs only the figures
        with self._lock:
            self._seq += 1
            rank = (self.order.get(case.id, len(self.order)), self._seq)
            if failure is not None:
                held = self._failed.get(v.label)
                if held is None or rank < held[0]:  # keep the failure of the earliest workload
                    self._failed[v.label] = (rank, res, failure)
            else:
                self._first.setdefault((v.label, case.id), res)
        if failure is not None and out.status is Status.OK:
            out.status, out.message = Status.RUNTIME_ERROR, failure[2]  # no timing from it
        return out

    def outcome(
        self, label: str, workloads: list[TestCase]
    ) -> tuple[Failure | None, list[TestResult]]:
        """The candidate's failure (None: every checked run passed) and one `TestResult` per
        workload up to and including the failing one (the first run of each that passed)."""
        held = self._failed.get(label)
        results = []
        for w in workloads:
            if held is not None and w.id == held[1].id:
                results.append(held[1])
                break
            res = self._first.get((label, w.id))
            if res is not None:
                results.append(res)
        return (held[2] if held else None), results
