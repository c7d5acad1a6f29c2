"""Interleaved measurement: A B C, C A B, … per workload, one pinned run per core (per reserved
core set for a multi-core task) at a time, with early stopping, drift probes around it,
instruction counting and the first-call check."""

from __future__ import annotations

import random
import secrets
import statistics
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from perfgym.judge import trailer
from perfgym.judge.config import JudgeConfig
from perfgym.judge.input_locks import input_held
from perfgym.judge.plan import own_clock
from perfgym.judge.runner import CheckedRuns, RunOutcome, program_text, read_harness
from perfgym.judge.variant import OWN_LABELS, Variant
from perfgym.judge.verdict import Timing, TimingStatus
from perfgym.sandbox.base import Sandbox
from perfgym.sandbox.execution import HIDING_FLAGS, Status
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.pool import usable_cores
from perfgym.sandbox.pyworker import PythonWorkerPool
from perfgym.sandbox.run_request import Pin
from perfgym.tasks.task import Task, TaskKind, TestCase
from perfgym.timing import instructions
from perfgym.timing.drift import DriftMonitor
from perfgym.timing.first_call import first_call_check
from perfgym.timing.summary import cv, estimate, estimate_ci, relative_half_width

RunFn = Callable[[Variant, TestCase, Pin], RunOutcome]
#: A harness time below this (0, or under clock()'s 1 µs tick) measured nothing: the
#: measurement falls back to the sandbox's own clock, flagged `harness_below_resolution`.
HARNESS_RESOLUTION_S = 1e-6
Item = tuple[int, int, Variant, TestCase]  # (round, position in round, variant, workload)


def duration_of(out: RunOutcome, clock: str) -> float | None:
    if clock == "harness":
        return out.reported_s
    if clock == "cpu":
        return out.cpu_s
    if clock == "instructions":
        return None if out.instructions is None else float(out.instructions)
    return out.wall_s


def lanes_of(config: JudgeConfig) -> list[int | None]:
    """The cores measured runs are pinned to (timing mode), or unpinned slots."""
    if config.timing_mode:
        usable = usable_cores()
        cores = [c for c in config.cores if c in usable] if config.cores else usable
        if cores:
            return list(cores)
    return [None] * (config.concurrency or len(usable_cores()))


def reserve(config: JudgeConfig, cores: int) -> tuple[list[Pin], int | None]:
    """Lanes for runs that need `cores` cores each, and how many each gets (None: unpinned).

    Timing mode splits the measuring cores into disjoint sets of `cores` (the cores left over
    stay idle): a run holds its whole set, so no other measured run shares any of its cores
    meanwhile. A machine with fewer measuring cores than asked gives one set of all of them
    (the timing records the cap). Without timing mode runs float, fewer at once."""
    lanes: list[Pin] = list(lanes_of(config))
    if cores <= 1:
        return lanes, 1 if lanes[0] is not None else None
    if lanes[0] is None:
        return [None] * max(1, len(lanes) // cores), None
    pinned = [c for c in lanes if isinstance(c, int)]
    size = min(cores, len(pinned))
    if size == 1:
        return list(pinned), 1
    starts = range(0, len(pinned) - size + 1, size)
    return [tuple(pinned[i : i + size]) for i in starts], size


def schedule(
    variants: Sequence[Variant],
    workloads: Sequence[TestCase],
    rounds: range,
    interleave: bool,
    salt: str = "",
) -> list[Item]:
    """Per workload: interleaved rounds, each variant once per round in a fresh (seeded) random
    order, so drift hits every variant alike and no variant keeps the same position or the
    same neighbour on the other core; or (interleave=False) each variant's rounds back to back.
    `salt` joins the seed: `measure` gives each measurement its own, so a batch of one round
    does not put every variant where the last batch of its size did (a position's systematic
    edge, one neighbour on the other core, would follow the variant's index from batch to batch:
    red team rt103)."""
    items: list[Item] = []
    for k, w in enumerate(workloads):
        if not interleave:
            items += [(r, i, v, w) for i, v in enumerate(variants) for r in rounds]
            continue
        for r in rounds:
            order = list(variants)
            random.Random(f"{salt}{k}/{r}").shuffle(order)  # a fresh order every round
            items += [(r, i, v, w) for i, v in enumerate(order)]
    return items


def input_of(w: TestCase) -> tuple[str, str]:
    """What a run of workload `w` is given (its standard input, its arguments)."""
    return w.stdin, repr(w.args)


def _execute(items: list[Item], run: RunFn, lane_ids: list[Pin]) -> list[RunOutcome]:
    """Run `items` on the lanes, each lane taking the first item (in order) whose input no
    other lane is running: two runs never have the same input at the same time. Two copies of
    one program given the same input at once could split its work over a channel between
    concurrent runs (a futex on a shared file's page: red team helper-91's copies scored 0.38
    on average against their honest twin's 0.15) and both answer for all of it. The rule is the
    same for every variant, so no variant gets quieter neighbours than another; a task with one
    workload is measured one run at a time. A run also holds its input's machine-wide lock
    (`input_locks`), so another judge on this machine does not run that input beside it."""
    results: list[RunOutcome | None] = [None] * len(items)
    pending = list(range(len(items)))
    running: list[tuple[str, str]] = []
    failure: list[BaseException] = []
    turn = threading.Condition()

    def take() -> int | None:
        with turn:
            while pending and not failure:
                for i in pending:
                    if input_of(items[i][3]) not in running:
                        pending.remove(i)
                        running.append(input_of(items[i][3]))
                        return i
                turn.wait()
            return None

    def lane(core: Pin) -> None:
        while (i := take()) is not None:
            try:
                with input_held(input_of(items[i][3])):  # and no other judge's run of it
                    results[i] = run(items[i][2], items[i][3], core)
            except BaseException as exc:  # noqa: BLE001 - re-raised below, once every lane stops
                with turn:
                    failure.append(exc)
            finally:
                with turn:
                    running.remove(input_of(items[i][3]))
                    turn.notify_all()

    with ThreadPoolExecutor(max_workers=len(lane_ids)) as pool:
        for f in [pool.submit(lane, core) for core in lane_ids]:
            f.result()
    if failure:
        raise failure[0]
    done = [r for r in results if r is not None]
    assert len(done) == len(items), "a lane stopped with items left"
    return done


def measure(
    variants: Sequence[Variant],
    workloads: Sequence[TestCase],
    config: JudgeConfig,
    run: RunFn,
    clock: str,
    *,
    task: Task | None = None,
    sandbox: Sandbox | None = None,
    limits: Limits | None = None,
    monitor: DriftMonitor | None = None,
    workers: PythonWorkerPool | None = None,
    cores: int = 1,
) -> dict[str, Timing]:
    """Measure every variant on every workload, interleaved, and summarise each as a `Timing`.

    clock='instructions' needs `task`, `sandbox` and `limits` (to count with Valgrind when the
    host has no hardware counters); `monitor` brackets the measurement with drift checks;
    `workers` runs the first-call check of function tasks when `config.first_call` is set;
    `cores`: the cores each run gets to itself (a multi-core task's; see `reserve`).
    """
    if clock == "instructions":
        inner = run.run if isinstance(run, CheckedRuns) else run
        run_or_why = _instruction_run(inner, config, task, sandbox, limits)
        if isinstance(run_or_why, str):
            return {v.label: _unavailable(config, clock, run_or_why) for v in variants}
        if isinstance(run, CheckedRuns):
            # The counted runs are the checked runs: a program can tell it runs under
            # Valgrind, so the output of the very runs that are counted is what is judged.
            run.run = run_or_why
        else:
            run = run_or_why
    lane_ids, reserved = reserve(config, cores)
    drifting = monitor is not None and clock != "instructions"
    pre = monitor.check() if drifting and monitor is not None else None
    runs: dict[str, list[tuple[int, TestCase, RunOutcome]]] = {v.label: [] for v in variants}
    done = 0
    target = config.warmup + config.repeats
    cap = config.warmup + (config.max_repeats or config.repeats)
    # This measurement's orders (`schedule`), from `secrets`, not `random`'s global stream, which
    # a caller may have seeded. Instruction counts keep the fixed orders: a run's count moves
    # with the lane it lands on (2,452 of 121.6 M instructions between a function task's two
    # rounds once its order was drawn), and deterministic mode promises identical repeats.
    salt = "" if clock == "instructions" else secrets.token_hex(8) + "/"
    while done < target:
        items = schedule(variants, workloads, range(done, target), config.interleave, salt)
        for (r, _i, v, w), out in zip(items, _execute(items, run, lane_ids), strict=True):
            if r >= config.warmup:
                runs[v.label].append((r, w, out))
        done = target
        if done < cap and not _converged(runs, config, clock):
            target = done + 1  # one more interleaved round for everyone
    fallback = clock == "harness" and _harness_below_resolution(runs)
    used = own_clock(config.clock, cores) if fallback else clock
    timings = {label: summarise(items_, config, used) for label, items_ in runs.items()}
    for t in timings.values():
        record_cores(t, cores, reserved)
    if fallback:
        for t in timings.values():
            t.flags.append("harness_below_resolution")
    if drifting and monitor is not None:
        monitor.used()
        post = monitor.check()
        why = monitor.between(pre, post) if pre is not None else ""
        if why:
            _degrade_all(timings, "timing_drift", f"machine drift during the measurement: {why}")
    if config.first_call is not None and workers is not None and task is not None:
        _first_calls(timings, variants, workloads, config, task, workers, limits, clock)
    return timings


def record_cores(timing: Timing, wanted: int, reserved: int | None) -> None:
    """Stamp the cores the runs had (`reserved`; None: unpinned) against the task's `wanted`;
    fewer than wanted is flagged `cores_capped` (the machine has too few measuring cores)."""
    timing.cores, timing.cores_wanted = reserved, wanted
    if reserved is not None and reserved < wanted:
        timing.flags.append("cores_capped")


def _harness_below_resolution(runs: dict[str, list[tuple[int, TestCase, RunOutcome]]]) -> bool:
    """Some successful run's harness reported a duration its clock cannot resolve. Then every
    variant of this measurement is timed by the sandbox's clock, so they stay comparable."""
    return any(
        out.status is Status.OK
        and out.reported_s is not None
        and out.reported_s < HARNESS_RESOLUTION_S
        for items in runs.values()
        for _r, _w, out in items
    )


def _converged(
    runs: dict[str, list[tuple[int, TestCase, RunOutcome]]], config: JudgeConfig, clock: str
) -> bool:
    for items in runs.values():
        totals = _round_totals(items, clock)
        if totals is None:
            continue  # a failing variant is degraded anyway; more rounds will not fix it
        half = relative_half_width(totals, config.estimator, config.ci_level)
        if half is None or half > config.target_rel_ci:
            return False
    return True


def _round_totals(items: list[tuple[int, TestCase, RunOutcome]], clock: str) -> list[float] | None:
    totals: dict[int, float] = {}
    for r, _w, out in items:
        d = duration_of(out, clock)
        if out.status is not Status.OK or d is None:
            return None
        totals[r] = totals.get(r, 0.0) + d
    return [totals[r] for r in sorted(totals)]


def summarise(
    items: list[tuple[int, TestCase, RunOutcome]], config: JudgeConfig, clock: str
) -> Timing:
    per_w: dict[str, list[float]] = {}
    totals: dict[int, float] = {}
    walls: dict[int, float] = {}
    cpus: dict[int, float | None] = {}
    failed: list[str] = []
    hiding: dict[str, int] = {}  # accounting flag -> measured runs that carried it
    harness_ns: list[int] = []
    peaks: list[float] = []
    integrals: dict[str, list[float]] = {}
    threads = [out.threads for _r, _w, out in items if out.threads]
    for r, w, out in items:
        for flag in out.flags:
            if flag in HIDING_FLAGS:
                hiding[flag] = hiding.get(flag, 0) + 1
        d = duration_of(out, clock)
        if out.status is not Status.OK or d is None or out.harness_ok is False:
            failed.append(f"{w.id}: {out.status.value} {out.message}".strip())
            continue
        per_w.setdefault(w.id, []).append(d)
        totals[r] = totals.get(r, 0.0) + d
        walls[r] = walls.get(r, 0.0) + (out.wall_s or 0.0)
        known = cpus.get(r, 0.0)
        cpus[r] = None if known is None or out.cpu_s is None else known + out.cpu_s
        if out.reported_s is not None and clock == "harness":
            harness_ns.append(int(out.reported_s * 1e9))
        if out.peak_rss_mb is not None:
            peaks.append(out.peak_rss_mb)
        if out.memory_integral_mb_s is not None:
            integrals.setdefault(w.id, []).append(out.memory_integral_mb_s)
    complete = [totals[r] for r in sorted(totals)]
    timing = Timing(
        estimator=config.estimator,
        clock=clock,
        per_workload_samples_s=per_w,
        per_workload_s={k: estimate(v, config.estimator) for k, v in per_w.items()},
        harness_elapsed_ns=harness_ns,
        peak_rss_mb=max(peaks) if peaks else None,
        memory_integral_mb_s=sum(statistics.median(v) for v in integrals.values())
        if integrals
        else None,
        threads_seen=max(threads) if threads else None,
    )
    if failed:
        timing.status = TimingStatus.DEGRADED
        timing.status_reason = "measured run failed: " + "; ".join(failed[:3])
        return timing
    if hiding:
        # CPU the main process's accounting did not show (an auto-reaped child), or processes
        # left running after it: whatever the figures, such a run cannot time a speed reward.
        timing.flags += sorted(hiding)
        timing.status = TimingStatus.DEGRADED
        timing.status_reason = "the run's CPU accounting does not add up: " + ", ".join(
            f"{flag} in {n} of {len(items)} measured runs" for flag, n in sorted(hiding.items())
        )
    n_workloads = len({w.id for _r, w, _o in items})
    if len(per_w) < n_workloads or not complete:
        timing.status = TimingStatus.UNAVAILABLE
        timing.status_reason = "no complete measurement"
        return timing
    timing.samples_s = complete
    timing.external_wall_s = statistics.median(walls.values())
    timing.external_walls_s = [walls[r] for r in sorted(walls)]
    if all(cpus.get(r) is not None for r in walls):
        timing.external_cpus_s = [cpus[r] or 0.0 for r in sorted(walls)]
    timing.estimate_s = estimate(complete, config.estimator)
    timing.cv = cv(complete)
    timing.ci_s = estimate_ci(complete, config.estimator, config.ci_level)
    if clock == "instructions":
        timing.instructions = round(timing.estimate_s)
    return timing


def _unavailable(config: JudgeConfig, clock: str, why: str) -> Timing:
    return Timing(estimator=config.estimator, clock=clock, status=TimingStatus.UNAVAILABLE,
                  status_reason=why)  # fmt: skip


def _degrade_all(timings: dict[str, Timing], flag: str, why: str) -> None:
    """The fallback policy: correctness stands, the duration is withheld, the reason is kept."""
    for t in timings.values():
        t.flags.append(flag)
        if t.ok:
            t.status = TimingStatus.DEGRADED
            t.status_reason = why


# -- deterministic mode ---------------------------------------------------------------------------
def _instruction_run(
    run: RunFn,
    config: JudgeConfig,
    task: Task | None,
    sandbox: Sandbox | None,
    limits: Limits | None,
) -> RunFn | str:
    """A run function that fills `RunOutcome.instructions`, or why none can."""
    how, why = instructions.backend()
    if how == "hardware":
        return run  # the sandbox's own Measurement.instructions
    if how is None:
        return why
    if task is None or sandbox is None or limits is None:
        return "instruction counting with Valgrind needs the task, sandbox and limits"
    box = sandbox
    forgetting = limits.model_copy(update={"forget_page_cache": True})

    def counted(v: Variant, case: TestCase, core: Pin) -> RunOutcome:
        # Every counted run says what it computed, and it is checked like a timed run: a
        # program can tell it is counted (Valgrind, the function driver) and skip its work
        # there (red team helper-94: 85 million instructions for 757 million of work, 1.26).
        secret = None
        # a candidate's counted run forgets the page cache it brought in (Limits)
        lim = limits if v.label in OWN_LABELS else forgetting
        if task.kind is TaskKind.FUNCTION:
            assert v.source is not None
            source, entry, args = v.source, task.entry_point, case.args
            if task.oracle.kind == "assertion":  # HumanEval: the program is its own test
                source = f"{v.source}\n\n{task.oracle.checker}\n\ncheck({task.entry_point})\n"
                entry, args = None, None
            argv, files = instructions.function_files(source, entry, args)
            c = instructions.count(box, argv, limits=lim, files=files, cpu=core,
                                   tool=config.instructions_tool,
                                   slowdown=config.instructions_slowdown)  # fmt: skip
        else:
            if task.kind is TaskKind.HARNESS and v.end_mark:
                secret = trailer.nonce()
            c = instructions.count(box, v.argv, limits=lim, stdin=case.stdin, binds=v.binds,
                                   cpu=core, tool=config.instructions_tool,
                                   slowdown=config.instructions_slowdown,
                                   files={trailer.NONCE_FILE: secret + "\n"} if secret else None)  # fmt: skip
        m = c.execution.measurement
        status = c.execution.status
        if status is Status.OK and c.instructions is None:
            status = Status.SANDBOX_ERROR
        out = RunOutcome(status=status, wall_s=m.wall_s if m else None,
                         cpu_s=m.cpu_s if m else None, instructions=c.instructions,
                         message=c.error)  # fmt: skip
        if task.kind is TaskKind.STDIO:
            out.output = program_text(c.execution.stdout)
        elif task.kind is TaskKind.HARNESS:
            read_harness(c.execution.stdout_text, out, secret)
        elif out.status is Status.OK and task.oracle.kind != "assertion":
            try:
                out.output = instructions.returned_value(c.execution.stdout)
            except ValueError as exc:
                out.status, out.message = Status.RUNTIME_ERROR, str(exc)
        return out

    return counted


# -- anti-caching -----------------------------------------------------------------------------------
def _first_calls(
    timings: dict[str, Timing],
    variants: Sequence[Variant],
    workloads: Sequence[TestCase],
    config: JudgeConfig,
    task: Task,
    workers: PythonWorkerPool,
    limits: Limits | None,
    clock: str,
) -> None:
    """Function tasks: first call vs repeated calls of each measured variant on its first
    workload; a large gap flags the timing (the fresh-process protocol already removed the
    gain, so the duration stands)."""
    if task.kind is not TaskKind.FUNCTION or not task.entry_point or not workloads:
        return
    if task.oracle.kind == "assertion" or workloads[0].args is None:
        return
    fc_clock = "cpu" if clock == "cpu" else "wall"
    for v in variants:
        t = timings.get(v.label)
        if t is None or not t.ok or v.source is None:
            continue
        for _attempt in range(2):  # a check that failed on a loaded machine is tried again
            report = first_call_check(workers, v.source, task.entry_point, workloads[0].args,
                                      limits or Limits(), config.first_call, fc_clock)  # fmt: skip
            if not report.error:
                break
        t.first_call_s, t.repeat_call_s = report.first_s, report.repeat_s
        if report.error:
            t.flags.append("first_call_unchecked")
        if report.caching_signature:
            t.flags.append("first_call_gap")
