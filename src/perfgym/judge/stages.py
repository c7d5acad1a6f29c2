"""The judge's stages for one candidate of a task: extract → build → run → check → measure,
each a function over the candidate's `Entry`, and the verdict made of what they found."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from perfgym.judge.batched import batchable, equal_passes, run_batched
from perfgym.judge.build_look import phase_look
from perfgym.judge.build_work import flag_build_work, header_probe_cpu, remembered
from perfgym.judge.candidate import Candidate
from perfgym.judge.case_limits import CaseLimit
from perfgym.judge.config import JudgeConfig
from perfgym.judge.crosscheck import crosscheck_harness
from perfgym.judge.decided_on import DecidedOn
from perfgym.judge.harness_answer import HarnessAnswer
from perfgym.judge.idle_wait import beyond_a_spike, flag_idle_wait, flag_timing, idle_suspects
from perfgym.judge.measure import measure
from perfgym.judge.noise_bands import needs_band, twin_label
from perfgym.judge.paid_saving import pay_confirmed
from perfgym.judge.plan import TaskPlan
from perfgym.judge.record import Entry
from perfgym.judge.references import ExpectedOutputs, References
from perfgym.judge.replaced_calls import flag_replaced_calls, own_names
from perfgym.judge.reuse import ReusedTimings
from perfgym.judge.runner import CheckedRuns, Expected, Failure, RunFn, RunOutcome, judge_outcome
from perfgym.judge.same_source import same_source_roles
from perfgym.judge.twins import role_of, role_timing
from perfgym.judge.variant import Variant, built, extracted
from perfgym.judge.verdict import Stage, TestResult, Timing, TimingStatus, Verdict
from perfgym.machine import fingerprint
from perfgym.sandbox.batch_messages import ValueDigest
from perfgym.sandbox.execution import Status
from perfgym.sandbox.limits import Limits
from perfgym.tasks.task import TaskKind, TestCase
from perfgym.timing.drift import DriftMonitor
from perfgym.toolchains import BuildCache


def candidate_labels(group: list[Candidate]) -> list[str]:
    """Each candidate's label in its task's batch (`candidate-{model}-{sample}`), unique: the
    runs and timings of a batch are keyed by label, and two candidates of one model and sample
    (a caller that numbered none) took one shared timing before (helper-52)."""
    out: list[str] = []
    taken: set[str] = set()
    for c in group:
        label, n = f"candidate-{c.model}-{c.sample}", 0
        while label in taken:  # a suffix no other candidate's own label holds either
            n += 1
            label = f"candidate-{c.model}-{c.sample}#{n}"
        taken.add(label)
        out.append(label)
    return out


def extract(plan: TaskPlan, c: Candidate, label: str) -> Entry:
    """Stage 1: the candidate's source (given, or extracted from its text); NX without one.
    `label`: the candidate's in its task's batch (`candidate_labels`)."""
    return Entry.of(c, extracted(plan.task, label, completion=c.completion, source=c.source))


def build(plan: TaskPlan, entry: Entry, cache: BuildCache) -> Entry:
    """Stage 2: the extracted source built (from `cache` when it was built before); NC when it
    does not build."""
    if entry.going:
        entry.took(built(plan.task, entry.variant, sandbox=plan.sandbox, cache=cache,
                         workers=plan.workers))  # fmt: skip
    return entry


def run_tests(
    plan: TaskPlan,
    entry: Entry,
    expected: ExpectedOutputs,
    limits: Mapping[str, CaseLimit] | None = None,
    *,
    fail_fast: bool = True,
    isolate: bool = False,
) -> Entry:
    """Stage 3: the task's tests (in warm workers where they can run: a function task's in
    batches, `perfgym.judge.batched`; under their `limits`, relative to the task's own
    solutions' time, where known), then the workloads whose outputs are checked apart from the
    measurement (run as the measurement would, under the task's limit). The verdict is the
    first failure: NR for a run that did not end cleanly, WO for a wrong answer; `fail_fast`
    stops there, else every test runs and has its result. `isolate`: one process per test."""
    if not entry.going:
        return entry
    own = limits or {}
    entry.limits = {k: lim.limits for k, lim in own.items()}
    warm = plan.runner(warm=True, limits={k: lim.limits for k, lim in own.items()})
    fresh = plan.runner()
    if batchable(plan) and entry.variant.source is not None:
        runs = run_batched(plan, entry.variant.source, plan.tests,
                           lambda c: own[c.id].limits if c.id in own else plan.limits,
                           fail_fast=fail_fast, isolate=isolate,
                           limits=plan.limits_for(entry.variant, plan.limits))  # fmt: skip
    else:
        runs = ((t, warm(entry.variant, t, None)) for t in plan.tests)
    separate = ((w, fresh(entry.variant, w, None)) for w in plan.separate)
    for stream in (runs, separate):
        try:
            for case, out in stream:
                if out.status is Status.TIMEOUT and case.id in own:
                    out.message = f"{out.message} ({own[case.id].why})".strip()
                res, failure = _judged(plan, entry, case, out, expected)
                entry.tests.append(res)
                if failure is not None and entry.going:
                    entry.failed(failure)
                if failure is not None and fail_fast:
                    break
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()
        if not entry.going and fail_fast:
            break
    return entry


def _judged(plan: TaskPlan, entry: Entry, case: TestCase, out: RunOutcome,
            expected: ExpectedOutputs) -> tuple[TestResult, Failure | None]:  # fmt: skip
    """One run judged; its output dropped (results stream: no test's output is kept). A large
    output came back as its digest: equal to the reference's, it passes where the task's
    checker passes equal outputs; else both values are asked for (each run alone) and judged."""
    want: Expected = _expected_of(plan, case, expected)
    if out.status is Status.OK and plan.task.kind is TaskKind.FUNCTION:
        known, value = want()
        digests = isinstance(out.output, ValueDigest) or isinstance(value, ValueDigest)
        if known and equal_passes(plan, value, out.output):
            # built unvalidated (one per passed test, 124,000 in a HumanEval+ run): each field
            # is of its type already (the case's id, a Status, the batch's floats)
            return TestResult.model_construct(id=case.id, passed=True, status=out.status,
                                              wall_s=out.wall_s, cpu_s=out.cpu_s,
                                              peak_rss_mb=out.peak_rss_mb,
                                              message=""), None  # fmt: skip
        if known and digests:
            out = plan.runner(warm=True, limits={case.id: out_limits(plan, case, entry)})(
                entry.variant, case, None
            )  # the candidate's value itself
            value = expected.full_output(plan, case, value)
        want = lambda: (known, value)  # noqa: E731 - asked once
    # Described for every line that said ok, one the end-mark checks failed included.
    if out.status is Status.OK and plan.task.kind is TaskKind.HARNESS and out.line_ok:
        known, value = want()  # the answer the reference's and the baseline's lines agree on
        if isinstance(value, HarnessAnswer):
            entry.harness_answer = value.describe()
        want = lambda: (known, value)  # noqa: E731 - asked once
    judged = judge_outcome(plan.task, case, out, want)
    if judged[1] is not None and judged[1][0] is Stage.WO:
        # judged against a reference output kept on disk: it stands only if a fresh run of
        # the reference gives it again (else the entry is dropped and the test judged anew)
        fresh = expected.confirm(plan, case)
        if fresh is not None:
            judged = judge_outcome(plan.task, case, out, lambda: fresh)
    out.output = None
    return judged


def checked_runs(
    plan: TaskPlan, entries: Sequence[Entry], expected: Sequence[tuple[bool, object]]
) -> CheckedRuns | None:
    """Stage 4, before measuring: the run function whose runs of the passing candidates are
    checked runs, given each workload's `expected` output. Where a workload has none, every
    passing candidate stops at NR with the reason, and nothing is checked (None)."""
    going = [e for e in entries if e.going]
    by_id = {}
    for w, (known, value) in zip(plan.workloads, expected, strict=True):
        if not known:
            for e in going:
                e.tests.append(TestResult(id=w.id, passed=False, status=Status.SANDBOX_ERROR,
                                          message=str(value)[:500]))  # fmt: skip
                e.failed((Stage.NR, "SANDBOX_ERROR", f"{w.id}: {value}"))
            return None
        by_id[w.id] = value
    return CheckedRuns(plan.task, plan.runner(), plan.workloads, by_id, {e.label for e in going})


def measure_all(
    plan: TaskPlan,
    entries: Sequence[Entry],
    refs: References,
    run: RunFn,
    config: JudgeConfig,
    monitor: Callable[[], DriftMonitor | None],
    reused: ReusedTimings | None = None,
    baseline_twins: int = 1,
) -> dict[str, Timing]:
    """Stage 5 (`_measured_all`), where a passing candidate that is the program of a measured
    baseline or reference (`perfgym.judge.twins`, config.same_program_once) is not measured
    again (the same source exactly): it has that role's timing, flagged."""
    measured = measured_roles(refs, config)
    copies = {}
    if config.same_program_once:
        for e in entries:
            role = role_of(e, measured)
            if role is not None:
                copies[e.label] = e.timed_as = role
    if copies and isinstance(run, CheckedRuns):
        run.labels |= set(copies.values())  # the role's runs are checked: the copy's outcome
    rest = [e for e in entries if e.label not in copies]
    timings = _measured_all(plan, rest, refs, run, config, monitor, reused, baseline_twins)
    for label, role in copies.items():
        if role in timings:
            timings[label] = role_timing(timings[role])
    return timings


def _measured_all(
    plan: TaskPlan,
    entries: Sequence[Entry],
    refs: References,
    run: RunFn,
    config: JudgeConfig,
    monitor: Callable[[], DriftMonitor | None],
    reused: ReusedTimings | None = None,
    baseline_twins: int = 1,
) -> dict[str, Timing]:
    """Stage 5 (`_measured_batch`); where a candidate's runs waited beyond what the task's own
    programs waited (`idle_wait.idle_suspects`) by what a load spike may explain, the whole
    batch is measured once more, fresh (nothing reused; what is kept for reuse is the second
    measurement's), and only that measurement is used: one round's load spike is not a flag, a
    program that waits waits again, and no round of the first measurement survives. A wait
    beyond any spike (`idle_wait.beyond_a_spike`) is flagged all the same, and alone it makes
    no second measurement."""
    timings = _measured_batch(plan, entries, refs, run, config, monitor, reused, baseline_twins)
    labels = [e.label for e in entries if e.going]
    suspects = idle_suspects(timings, labels, plan.clock, plan.cores)
    if all(beyond_a_spike(f) for f in suspects.values()):
        return timings  # none, or each flagged on these figures (`verdict_of`)
    timings = _measured_batch(plan, entries, refs, run, config, monitor, reused, baseline_twins,
                              fresh=True)  # fmt: skip
    for label, figures in suspects.items():
        t = timings.get(label)
        if beyond_a_spike(figures) and t is not None and t.ok:
            flag_timing(t, figures, " in the judge's first measurement of its batch")
    return timings


def _measured_batch(
    plan: TaskPlan,
    entries: Sequence[Entry],
    refs: References,
    run: RunFn,
    config: JudgeConfig,
    monitor: Callable[[], DriftMonitor | None],
    reused: ReusedTimings | None = None,
    baseline_twins: int = 1,
    fresh: bool = False,
) -> dict[str, Timing]:
    """Stage 5: every passing candidate measured with the wanted baseline and reference, in one
    interleaved batch on this machine; each variant's `Timing` by label. `monitor`: the drift
    monitor, asked for (and so started) only when something is measured. `reused`: where it
    holds the baseline's and reference's timings and the machine is unchanged since they were
    measured (config.reuse_references), the reference is measured alone, then (when it agrees
    with its kept timing) the candidates with it, and the kept baseline joins them when the
    reference measured with them agrees too;
    when it does not, or the machine moved meanwhile, everything is measured again together.
    A baseline that is the reference's program (`References.twins`) is measured once, as the
    reference, and has its timing (not under reuse_references)."""
    # (with reused timings the baseline's own are what is kept and reused: measured apart)
    twins = refs.twins and not config.reuse_references
    if twins and _wanted(config, "baseline") and _wanted(config, "reference"):
        timings = _measured_batch(plan, entries, References(None, refs.reference), run, config,
                                  monitor, reused, baseline_twins, fresh)  # fmt: skip
        if "reference" in timings:
            timings["baseline"] = timings["reference"]
        return timings
    candidates = [e.variant for e in entries if e.going]
    own = measured_roles(refs, config)
    if not candidates and not own:
        return {}
    workers = plan.workers if plan.task.kind is TaskKind.FUNCTION else None
    drift = monitor()

    def measured(variants: list[Variant], bracketed: bool = True) -> dict[str, Timing]:
        return measure(variants, plan.workloads or plan.tests, config, run, plan.clock,
                       task=plan.task, sandbox=plan.sandbox, limits=plan.limits,
                       monitor=drift if bracketed else None, workers=workers,
                       cores=plan.cores)  # fmt: skip

    kept = reused.usable(plan, own, drift) if reused is not None and not fresh else None
    canary = own.get("reference")
    # The reference alone first (cheap): where it moved, one full measurement follows and no
    # candidate is measured twice. Then the candidates with it, paired by round.
    if (
        kept is not None
        and reused is not None
        and drift is not None
        and canary is not None
        and reused.agrees(plan, own, measured([canary], bracketed=False), kept)
    ):
        timings = measured([*candidates, canary])
        if reused.confirm(plan, own, drift) and reused.agrees(plan, own, timings, kept):
            return {**{k: t for k, t in kept.items() if k != canary.label}, **timings}
    timings = measured(
        candidates + list(own.values()) + batch_twins(config, candidates, own, baseline_twins)
    )
    if reused is not None:
        reused.keep(plan, own, timings, drift)
    return timings


def batch_twins(config: JudgeConfig, candidates: list[Variant], own: Mapping[str, Variant],
                twins: int = 1) -> list[Variant]:  # fmt: skip
    """The baseline `twins` more times, run as a candidate runs (`twin_label`), where a
    single-round batch's speed calls rest on the noise band: each one's ratio to the baseline is
    an equal-work copy's, met in this very batch (`NoiseBands.for_batch`)."""
    base = own.get("baseline")
    if not candidates or base is None or not needs_band(config):
        return []
    return [dataclasses.replace(base, label=twin_label(k)) for k in range(max(1, twins))]


def settle(entry: Entry, checks: CheckedRuns | None, workloads: list[TestCase],
           timings: dict[str, Timing]) -> Entry:  # fmt: skip
    """Stage 4, after measuring: a measured candidate's checked runs join its results (NR/WO
    without a timing when one failed); the timing of one that passed is its own."""
    if not entry.going:
        return entry
    if checks is not None:
        failure, ran = checks.outcome(entry.timed_as or entry.label, workloads)
        entry.tests += ran
        if failure is not None:
            entry.failed(failure)
            return entry
    entry.timing = timings.get(entry.label)
    return entry


def reference_timings(
    refs: References, timings: dict[str, Timing], config: JudgeConfig
) -> dict[str, Timing | None]:
    """The wanted baseline's and reference's timings ('UNAVAILABLE' for one that cannot run)."""
    out: dict[str, Timing | None] = {}
    for label, v in refs.items():
        if not _wanted(config, label):
            continue
        if v is None:
            out[label] = None
        elif not v.ready:
            out[label] = Timing(
                status=TimingStatus.UNAVAILABLE, status_reason=f"{label}: {v.reason}"
            )
        else:
            out[label] = timings.get(label)
    return out


def verdict_of(
    plan: TaskPlan,
    entry: Entry,
    refs: dict[str, Timing | None],
    config: JudgeConfig,
    own: Sequence[Variant | None] = (),
    memo: Path | None = None,
) -> Verdict:
    """The candidate's `Verdict`: what the stages found, beside the baseline and reference
    (`own`: the task's own solutions' variants, whose builds' imports (and weak definitions) the
    candidate's must not define: `replaced_calls`; `memo`: where `build_work` keeps the header
    probe it drew for each candidate build)."""
    c, v = entry.candidate, entry.variant
    verdict = Verdict(
        task_id=plan.task.id,
        suite=c.suite,
        model=c.model,
        sample=c.sample,
        stage=entry.stage,
        detail=entry.detail,
        reason=entry.reason,
        infra_error=v.infra or entry.detail == "SANDBOX_ERROR",
        language=plan.task.language.value,
        source=v.source,
        extraction_rule=v.extraction_rule,
        build_log=v.build_log,
        tests=entry.tests,
        candidate=entry.timing,
        baseline=refs.get("baseline"),
        reference=refs.get("reference"),
        config=config.model_dump(mode="json"),
        machine=fingerprint(),
        same_source=same_source_roles(plan.task, v.source),
        decided_on=plan.decided_on,
        hidden_workloads=len(plan.workloads) if plan.decided_on is DecidedOn.HIDDEN else 0,
        why_visible=plan.why_visible,
        harness_end_mark=v.end_mark or (f"none: {v.end_mark_why}" if v.end_mark_why else ""),
        harness_answer=entry.harness_answer,
    )
    if verdict.correct:
        language, sandbox = plan.task.language, plan.sandbox
        probe = remembered(memo, v, "probe_cpu_s", lambda: header_probe_cpu(language, sandbox))
        look = None
        if v.artifact_dir and v.source is not None:  # a harness folder keeps its one figure
            source, artifact = v.source, v.artifact_dir
            look = remembered(memo, v, "phase_look",
                              lambda: phase_look(language, sandbox, source, artifact))  # fmt: skip
        flag_build_work(verdict, v, own, config.build_work_s, probe=probe, look=look)
    if verdict.candidate is not None:
        flag_idle_wait(verdict, plan.clock, plan.cores)
        verdict.flags += verdict.candidate.flags
        slack = RUNTIME_THREAD_SLACK.get(plan.task.language.value, 0)
        if plan.cores == 1 and more_threads(verdict.candidate, verdict.baseline, verdict.reference,
                                            slack=slack):  # fmt: skip
            verdict.flags.append(MORE_THREADS)
    if plan.clock != "harness":
        return verdict
    theirs = [own_names(o) for o in own if o is not None and o.build_dir]
    if v.build_dir and theirs and flag_replaced_calls(verdict, v.build_dir, theirs):
        return verdict
    if crosscheck_harness(verdict, config.harness_saving_ratio):
        pay_confirmed(verdict, config.ci_level)
    return verdict


#: A one-core task's candidate ran more threads at once than its baseline and reference: it
#: gains nothing from them on its one reserved core (and is timed as pinned), but it is said.
MORE_THREADS = "more_threads_than_task"


#: Threads a language's runtime starts or parks of its own accord, more in one run than in
#: another of the same program: Go's (sysmon, GC workers, a thread per blocking syscall) read 3
#: or 4 for the same one-goroutine program, and a copy of the reference was said to run more
#: threads than its task in 1 of 30 verdicts. A candidate must go past them.
RUNTIME_THREAD_SLACK = {"go": 2, "java": 2}


def more_threads(candidate: Timing, *own: Timing | None, slack: int = 0) -> bool:
    """The candidate's measured runs showed more threads than every measured own solution's,
    by over `slack` (the runtime's own threads, a JVM's or Go's, count for all of them alike,
    but not always as many: `RUNTIME_THREAD_SLACK`)."""
    seen = [t.threads_seen for t in own if t is not None and t.threads_seen is not None]
    return (candidate.threads_seen is not None and bool(seen)
            and candidate.threads_seen > max(seen) + slack)  # fmt: skip


def out_limits(plan: TaskPlan, case: TestCase, entry: Entry) -> Limits:
    """The limits a candidate's test ran under (its relative limit, kept on the entry)."""
    return entry.limits.get(case.id, plan.limits)


def _expected_of(plan: TaskPlan, case: TestCase, expected: ExpectedOutputs) -> Expected:
    return lambda: expected.of(plan, case)


def measured_roles(refs: References, config: JudgeConfig) -> dict[str, Variant]:
    """The task's own solutions this judge measures (the baseline, the reference), by label."""
    return {
        label: v
        for label, v in refs.items()
        if _wanted(config, label) and v is not None and v.ready
    }


def _wanted(config: JudgeConfig, label: str) -> bool:
    return config.measure_baseline if label == "baseline" else config.measure_reference
