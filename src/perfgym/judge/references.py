"""The judge's two caches: each task's baseline and reference, and the expected outputs the
reference gives where a case names none."""

from __future__ import annotations

import collections
import contextlib
import hashlib
import json
import logging
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from perfgym.judge.batched import batchable, run_batched
from perfgym.judge.harness_answer import HarnessAnswer, agreed
from perfgym.judge.hidden import is_hidden
from perfgym.judge.plan import TaskPlan
from perfgym.judge.reference_disk import ReferenceDisk
from perfgym.judge.variant import Variant, prepare
from perfgym.sandbox._inside import valuecodec
from perfgym.sandbox.batch_messages import ValueDigest
from perfgym.sandbox.execution import Status
from perfgym.tasks.task import TaskKind, TestCase
from perfgym.toolchains import BuildCache

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class References:
    """A task's own solutions, prepared: None where the task has none."""

    baseline: Variant | None
    reference: Variant | None

    def items(self) -> list[tuple[str, Variant | None]]:
        return [("baseline", self.baseline), ("reference", self.reference)]

    @property
    def twins(self) -> bool:
        """The baseline and the reference are the same program (HumanEval+'s canonical
        solution is both): it is run, and measured, once."""
        b, r = self.baseline, self.reference
        return b is not None and r is not None and b.source == r.source and b.argv == r.argv


class ReferenceCache:
    """Each task's `References`, prepared (built) once per task (`TaskPlan.key`: its id and
    content)."""

    def __init__(self, cache: BuildCache) -> None:
        self.cache = cache
        self._by_task: dict[str, References] = {}
        self._lock = threading.Lock()

    def of(self, plan: TaskPlan) -> References:
        task = plan.task
        # Read without the lock (a dict lookup is atomic; entries are only ever added): this
        # runs for every test of every candidate, from every judging thread.
        known = self._by_task.get(plan.key)
        if known is not None:
            return known
        with self._lock:
            known = self._by_task.get(plan.key)
        if known is not None:
            return known

        def made(label: str, sol: Any) -> Variant | None:
            return None if sol is None else prepare(
                task, label, source=sol.source, sandbox=plan.sandbox, cache=self.cache,
                workers=plan.workers,
            )  # fmt: skip

        refs = References(made("baseline", task.baseline), made("reference", task.reference))
        with self._lock:
            self._by_task[plan.key] = refs
        return refs


@dataclass(frozen=True)
class OwnRun:
    """One run of a task's own solution (baseline or reference) on a case: whether it ended
    cleanly, its output (the reference's only) and the sandbox's wall time of the run."""

    ok: bool
    output: Any
    wall_s: float | None
    why: str
    #: CPU of the run alone, where a batch metered it per test (None: not known apart)
    cpu_s: float | None = None
    #: a harness run's own elapsed time (the task's own solution's, run by the judge: it sets
    #: the scale of the task's limits, `perfgym.judge.machine_scale`)
    reported_s: float | None = None


#: What an `OwnRun` holds in place of an output dropped to bound memory (asked again later).
_DROPPED = object()
#: Tasks whose reference outputs are kept at once (the others' are dropped, their times kept).
KEEP_OUTPUTS_OF = 8


class ExpectedOutputs:
    """The expected output of a case: given, or the reference's output on it; and every run of
    the task's own solutions on a case, run once per task (`TaskPlan.key`), solution and case id (their wall
    times set the correctness tests' limits: `perfgym.judge.case_limits`)."""

    def __init__(self, references: ReferenceCache, disk: ReferenceDisk | None = None) -> None:
        self.references = references
        #: the runs kept between judges (`perfgym.judge.reference_disk`; None: none kept)
        self.disk = disk
        #: (task key, label) -> the disk key its runs were loaded from (they may be wrong)
        self._loaded: dict[tuple[str, str], str] = {}
        self._runs: dict[tuple[str, str, str], OwnRun] = {}
        self._lock = threading.Lock()
        self._with_outputs: collections.OrderedDict[str, set[tuple[str, str, str]]] = (
            collections.OrderedDict()
        )
        self._in_use: collections.Counter[str] = collections.Counter()

    def calibrate(self, plan: TaskPlan) -> None:
        """A batchable task (`perfgym.judge.batched`): the reference's runs on every test not
        run yet, in one batch under the task's limits (not measured: their times, metered per
        test, set the tests' limits), and the baseline's where it is another program."""
        if not batchable(plan):
            return
        refs = self.references.of(plan)
        for label in ("reference", "baseline"):
            variant = getattr(refs, label)
            if variant is None or not variant.ready or (label == "baseline" and refs.twins):
                continue
            with self._lock:
                todo = [c for c in plan.tests if (plan.key, label, c.id) not in self._runs]
            if todo and not self._from_disk(plan, label, variant, todo):
                self._batch(plan, label, variant, todo)
                self._to_disk(plan, label, variant, todo)

    # -- the runs kept on disk (`perfgym.judge.reference_disk`) -------------------------------
    def _disk_key(self, plan: TaskPlan, label: str, variant: Variant,
                  cases: list[TestCase]) -> str | None:  # fmt: skip
        """The entry of these runs, or None where they are not kept (no disk, hidden cases)."""
        if self.disk is None or variant.source is None or any(is_hidden(c.id) for c in cases):
            return None
        return self.disk.key(plan.key, label, variant.source, plan.limits.model_dump(), cases)

    def _from_disk(self, plan: TaskPlan, label: str, variant: Variant,
                   cases: list[TestCase], keep_times: bool = False) -> bool:  # fmt: skip
        """The runs of `cases` taken from their kept entry; False where there is none."""
        key = self._disk_key(plan, label, variant, cases)
        kept = None if key is None or self.disk is None else self.disk.load(key, cases)
        if key is None or kept is None:
            return False
        keys = [(plan.key, label, c.id) for c in cases]
        columns = zip(kept.ok, kept.outputs, kept.wall_s, kept.cpu_s, kept.why, strict=True)
        runs = [OwnRun(ok, out, wall, why, cpu) for ok, out, wall, cpu, why in columns]
        with self._lock:
            if keep_times:  # a refill: the limits' times stay
                for k, run in zip(keys, runs, strict=True):
                    old = self._runs.get(k)
                    self._runs[k] = run if old is None else _with_output(old, run.output)
            else:
                self._runs.update(zip(keys, runs, strict=True))
            self._loaded[(plan.key, label)] = key
            if label == "reference":
                self._outputs_kept(plan.key, keys)
        return True

    def _to_disk(self, plan: TaskPlan, label: str, variant: Variant,
                 cases: list[TestCase]) -> None:  # fmt: skip
        """Keep the runs of `cases` when there is every one of them and each ended cleanly (a
        run a loaded machine cut, or an infrastructure failure, is made again next time)."""
        key = self._disk_key(plan, label, variant, cases)
        if key is None or self.disk is None:
            return
        with self._lock:
            runs = [self._runs.get((plan.key, label, c.id)) for c in cases]
        if any(r is None or not r.ok or r.output is _DROPPED for r in runs):
            return
        self.disk.save(key, [(c.id, r.ok, r.output, r.wall_s, r.cpu_s, r.why)
                             for c, r in zip(cases, runs, strict=True) if r is not None])  # fmt: skip

    def confirm(self, plan: TaskPlan, case: TestCase) -> tuple[bool, Any] | None:
        """Where the reference's output on `case` came from disk: the reference run again on it
        alone; when that run gives the kept output, (True, it). When it does not, a lone run
        decides nothing (a reference that is not a pure function of its arguments answers
        alone what it did not answer in its batch): the task's whole batch is made again, the
        way the kept runs were made, and its output on `case` is the answer; a batch that
        differs from the kept one anywhere discards the entry and is kept instead. None: the
        output did not come from disk, or no fresh run ended cleanly (the entry stands)."""
        refs = self.references.of(plan)
        label = "reference"
        with self._lock:
            key = self._loaded.get((plan.key, label))
            known = self._runs.get((plan.key, label, case.id))
        if key is None or known is None or refs.reference is None or case.expected is not None:
            return None
        out = plan.runner(warm=True)(refs.reference, case, None)
        if out.status is not Status.OK:
            return None  # nothing to compare with: the authenticated entry stands
        if _same(out.output, known.output):
            return True, out.output
        return self._rebatch(plan, key, case)

    def _rebatch(self, plan: TaskPlan, key: str, case: TestCase) -> tuple[bool, Any] | None:
        """The reference's whole batch made again after a lone run disagreed with the kept
        output on `case`: its output on `case`, the entry discarded where the batch differs."""
        refs = self.references.of(plan)
        label = "reference"
        assert refs.reference is not None
        with self._lock:
            kept = {k: r for k, r in self._runs.items() if k[0] == plan.key and k[1] == label}
            for k in kept:
                del self._runs[k]
            self._loaded.pop((plan.key, label), None)
        self._batch(plan, label, refs.reference, list(plan.tests))
        with self._lock:
            fresh = {k: r for k, r in self._runs.items() if k[0] == plan.key and k[1] == label}
            for k, run in kept.items():  # a test the new batch could not run keeps its run
                self._runs.setdefault(k, run)
        mine = fresh.get((plan.key, label, case.id))
        if mine is None or not mine.ok:
            with self._lock:  # nothing decided: the kept entry stands
                self._loaded[(plan.key, label)] = key
            return None
        differ = [k[2] for k, run in fresh.items()
                  if k in kept and run.ok and kept[k].output is not _DROPPED
                  and not _same(run.output, kept[k].output)]  # fmt: skip
        if differ:
            log.warning("reference cache: %s's kept outputs differ from a fresh batch on %d "
                        "test(s) (first: %s); its entry is discarded", plan.task.id,
                        len(differ), differ[0])  # fmt: skip
            if self.disk is not None:
                self.disk.forget(key)
            self._to_disk(plan, label, refs.reference, list(plan.tests))
        return True, mine.output

    def _batch(self, plan: TaskPlan, label: str, variant: Variant, cases: list[TestCase],
               keep_times: bool = False) -> None:  # fmt: skip
        assert variant.source is not None
        made: list[tuple[tuple[str, str, str], OwnRun]] = []
        # The task's limits: CPU, with room on the wall for a loaded machine (`task_limits`);
        # the candidates' tests get their limits from these runs' CPU.
        lim = plan.limits
        for case, out in run_batched(plan, variant.source, cases, lambda _c: lim,
                                     fail_fast=False, isolate=False):  # fmt: skip
            if out.status is Status.SANDBOX_ERROR:
                continue  # ours, not the program's: asked again later, one run at a time
            made.append(((plan.key, label, case.id), OwnRun(
                ok=out.status is Status.OK, output=out.output if label == "reference" else None,
                wall_s=out.wall_s, cpu_s=out.cpu_s,
                why=f"{out.status.value} {out.message}".strip())))  # fmt: skip
        with self._lock:
            for key, run in made:
                old = self._runs.get(key)
                if keep_times and old is not None:  # a refill: the limits' times stay
                    run = _with_output(old, run.output)
                self._runs[key] = run
            if label == "reference":
                self._outputs_kept(plan.key, [k for k, _ in made])

    def _outputs_kept(self, task_id: str, keys: list[tuple[str, str, str]]) -> None:
        """Hold the outputs of at most `KEEP_OUTPUTS_OF` tasks (memory flat in the number of
        tests a run judges); an older task's are dropped, to be run again if asked for."""
        self._with_outputs.setdefault(task_id, set()).update(keys)
        self._with_outputs.move_to_end(task_id)
        while len(self._with_outputs) > KEEP_OUTPUTS_OF:
            # the oldest task not being tested now (a task being tested keeps its outputs)
            old = next((t for t in self._with_outputs if not self._in_use[t]), None)
            if old is None:
                break
            dropped = self._with_outputs.pop(old)
            for key in dropped:
                run = self._runs.get(key)
                if is_hidden(key[2]):  # drawn for one call: never asked for again
                    self._runs.pop(key, None)
                elif run is not None and run.ok:
                    self._runs[key] = _with_output(run, _DROPPED)

    @contextlib.contextmanager
    def in_use(self, task_id: str) -> Iterator[None]:
        """While inside, the outputs of `task_id` (a `TaskPlan.key`) are not dropped (its candidates are being tested
        against them; dropping them would run its reference again)."""
        with self._lock:
            self._in_use[task_id] += 1
        try:
            yield
        finally:
            with self._lock:
                self._in_use[task_id] -= 1
                if not self._in_use[task_id]:
                    del self._in_use[task_id]

    def known_runs(self, plan: TaskPlan, labels: Sequence[str]) -> dict[str, list[OwnRun | None]]:
        """Case id -> the runs of each of `labels` on it, for the cases where every one of
        them is run already (their times: an output may have been dropped); the others are
        asked of `run_of`. One look-up per case under one lock, for a task's every test."""
        refs = self.references.of(plan)
        keys = ["reference" if label == "baseline" and refs.twins else label
                for label in labels]  # fmt: skip
        absent = [getattr(refs, k) is None or not getattr(refs, k).ready for k in keys]
        out: dict[str, list[OwnRun | None]] = {}
        live = [(i, k) for i, (k, gone) in enumerate(zip(keys, absent, strict=True)) if not gone]
        task, n = plan.key, len(keys)
        with self._lock:  # a plain loop: 125,000 tests a HumanEval+ run, 3 generators a test
            get = self._runs.get
            for case in plan.tests:
                got: list[OwnRun | None] = [None] * n
                for i, k in live:
                    run = get((task, k, case.id))
                    if run is None:
                        break
                    got[i] = run
                else:
                    out[case.id] = got
        return out

    def run_of(self, plan: TaskPlan, label: str, case: TestCase) -> OwnRun | None:
        """The run of the task's `label` solution on `case` (None: the task has no such
        solution, or it cannot run). Run under the task's own limits, in a fresh process."""
        refs = self.references.of(plan)
        if label == "baseline" and refs.twins:
            label = "reference"  # the same program: its one run answers for both
        key = (plan.key, label, case.id)
        with self._lock:
            known = self._runs.get(key)
        if known is not None and known.output is _DROPPED and refs.reference is not None:
            # the task's outputs were dropped: all of them again, in one batch
            again = plan.tests if any(c.id == case.id for c in plan.tests) else [case]
            if not self._from_disk(plan, "reference", refs.reference, list(again),
                                   keep_times=True):  # fmt: skip
                self._batch(plan, "reference", refs.reference, list(again), keep_times=True)
            with self._lock:
                known = self._runs.get(key)
        if known is not None and known.output is not _DROPPED:
            return known
        variant = getattr(refs, label)
        if variant is None or not variant.ready:
            return None
        out = plan.runner()(variant, case, None)
        harness = plan.task.kind is TaskKind.HARNESS
        output = out.answer if harness else out.output if label == "reference" else None
        run = OwnRun(ok=out.status is Status.OK and (not harness or out.harness_ok is True),
                     output=output, wall_s=out.wall_s,
                     cpu_s=out.cpu_s,  # the tests' limits are on CPU: so is their base
                     why=f"{out.status.value} {out.message}".strip(),
                     reported_s=out.reported_s)  # fmt: skip
        if out.status is not Status.SANDBOX_ERROR:  # ours, not the program's: ask again later
            with self._lock:
                self._runs[key] = run
                if label == "reference" and is_hidden(case.id):
                    self._outputs_kept(plan.key, [key])  # bounded like the tests' outputs
        return run

    def harness_answer(self, plan: TaskPlan, case: TestCase) -> HarnessAnswer:
        """The answer fields the reference's and the baseline's own verdict lines agree on (one
        run of each per task, kept)."""
        if self.references.of(plan).twins:
            return HarnessAnswer(why="the baseline is the reference's program: nothing to agree")
        ref = self.run_of(plan, "reference", case)
        base = self.run_of(plan, "baseline", case)
        return agreed(ref.output if ref is not None and ref.ok else None,
                      base.output if base is not None and base.ok else None)  # fmt: skip

    def full_output(self, plan: TaskPlan, case: TestCase, known: Any) -> Any:
        """The reference's output on `case` itself where `known` is only its digest (a large
        value): the reference run again alone, the value not kept."""
        refs = self.references.of(plan)
        if not isinstance(known, ValueDigest) or refs.reference is None:
            return known
        out = plan.runner(warm=True)(refs.reference, case, None)
        return out.output if out.status is Status.OK else known

    def of(self, plan: TaskPlan, case: TestCase) -> tuple[bool, Any]:
        """(True, the expected output), or (False, why there is none). A harness task's is a
        `HarnessAnswer` (always known: without one, the harness's own check stands)."""
        if plan.task.kind is TaskKind.HARNESS:
            return True, self.harness_answer(plan, case)
        if case.expected is not None:
            return True, case.expected
        run = self.run_of(plan, "reference", case)
        if run is None:
            return False, "the reference cannot run, so there is no expected output"
        if not run.ok:
            return False, f"the reference failed on {case.id}: {run.why}"
        return True, run.output


def _same(fresh: Any, kept: Any) -> bool:
    """Whether a fresh output is the kept one: equal plain values, or the same encoding (NaN
    included); a digest (a large value) by the SHA-256 the worker takes of its answer."""
    try:
        if isinstance(kept, ValueDigest) or isinstance(fresh, ValueDigest):
            return _digest_of(fresh) == _digest_of(kept)
        if type(fresh) is type(kept) and bool(fresh == kept):
            return True
        return json.dumps(valuecodec.encode(fresh)) == json.dumps(valuecodec.encode(kept))
    except (RecursionError, TypeError, ValueError, valuecodec.UnsupportedValue):
        return False


def _digest_of(value: Any) -> str:
    if isinstance(value, ValueDigest):
        return value.sha256
    # the bytes the worker's child writes for a value's answer (pyworker_check.send)
    return hashlib.sha256(json.dumps({"value": valuecodec.encode(value)}).encode()).hexdigest()


def _with_output(run: OwnRun, output: Any) -> OwnRun:
    """`run` with another output (its times kept): dataclasses.replace, without its look at
    every field (a task's 1,000 runs at a time)."""
    return OwnRun(run.ok, output, run.wall_s, run.why, run.cpu_s, run.reported_s)
