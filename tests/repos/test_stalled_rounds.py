"""A round in which a run's import + setup stalled (a load spike: 206-430 ms against bloomc's
~20 ms, in original and patched rounds alike) is measured once more instead of decided on
(`measure._stalled_rounds`): charged as moved work it failed the expert's significance twice in
six idle evaluations. The runs here are scripted (the sandbox's own runs are the repository
tests'); what is tested is which runs `measure_workloads` makes and which it decides on."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import perfgym.repos.measure as measure
from perfgym.repos.measure import _stalled_rounds, measure_workloads
from perfgym.repos.runner import WorkloadRun
from perfgym.repos.task import RepoTask, Workload

ORIGINAL = Path("/original")
PATCHED = Path("/patched")
TASK = RepoTask(id="stall", repo="repo", workloads=(Workload(name="w", script="wl.py"),))


def _run(setup: float, first: float, *, ok: bool = True, digest: str = "d") -> WorkloadRun:
    return WorkloadRun(workload="w", ok=ok, first_s=first, digests=(digest,) if ok else (),
                       error="" if ok else "crashed", total_s=setup + first,
                       import_s=setup / 2, setup_s=setup / 2, inproc_first_s=first,
                       process_s=setup + first + 0.01, child_cpu_s=setup + first,
                       window_cpu_s=setup + first)  # fmt: skip


class Script:
    """Stands in for `run_workload`: each copy's runs, in the order they are asked for."""

    def __init__(self, original: list[WorkloadRun], patched: list[WorkloadRun]) -> None:
        self._runs = {ORIGINAL: iter(original), PATCHED: iter(patched)}
        self.calls: list[Path] = []

    def __call__(self, task: RepoTask, copy: Path, w: Workload, **_: object) -> WorkloadRun:
        self.calls.append(copy)
        return next(self._runs[copy])


@pytest.fixture
def script(monkeypatch: pytest.MonkeyPatch) -> Iterator[type[Script]]:
    def install(original: list[WorkloadRun], patched: list[WorkloadRun]) -> Script:
        s = Script(original, patched)
        monkeypatch.setattr(measure, "run_workload", s)
        return s

    yield install  # type: ignore[misc]


def test_a_stalled_patched_round_is_measured_again_and_not_charged(script) -> None:
    """full104's case: the expert's round with a 393 ms import + setup was charged ~357 ms and
    the task's speed-up lost significance; measured again, the round is an ordinary one."""
    original = [_run(s, 0.0050) for s in (0.0190, 0.0160, 0.0230, 0.0210)]
    patched = [_run(s, 0.0003) for s in (0.0200, 0.3930, 0.0170, 0.0220)] + [_run(0.0180, 0.0003)]
    runs = script(original + [_run(0.0200, 0.0050)], patched)
    m = measure_workloads(TASK, ORIGINAL, PATCHED, rounds=4)
    w = m.by_name("w")
    assert w.remeasured_rounds == (1,)
    assert len(runs.calls) == 10  # 4 rounds of 2, and round 1 once more
    assert runs.calls[-2:] == [PATCHED, ORIGINAL]  # round 1's order kept
    assert max(w.patched_setup_s) < 0.05 and max(w.charged_s) == 0.0, w.charged_s
    assert w.significant and m.speedup is not None and m.speedup > 10


def test_a_stall_in_an_original_round_is_measured_again(script) -> None:
    """Left in, an original's stall widens the room every patched round may grow uncharged."""
    original = [_run(s, 0.0050) for s in (0.0190, 0.0160, 0.4300)] + [_run(0.0200, 0.0050)]
    patched = [_run(s, 0.0010) for s in (0.0200, 0.0180, 0.0170, 0.0190)]
    script(original, patched)
    w = measure_workloads(TASK, ORIGINAL, PATCHED, rounds=3).by_name("w")
    assert w.remeasured_rounds == (2,)
    assert max(w.original_setup_s) < 0.05


def test_a_patch_that_shifts_work_in_some_rounds_is_charged_where_the_new_draw_shifts_again(
    script,
) -> None:
    """A patch that moves its call's work into import in a random share of its processes cannot
    tell a round measured again from any other: where the new draw shifts too, it is charged as
    it was before (no cheaper), and where it does not, the work is in its call."""
    original = [_run(s, 0.2000) for s in (0.0190, 0.0160, 0.0230, 0.0210, 0.0200)]
    original += [_run(0.0200, 0.2000)] * 2
    shifted, honest = _run(0.2150, 0.0020), _run(0.0190, 0.2000)
    patched = [honest, shifted, honest, shifted, honest, shifted, honest]
    script(original, patched)
    m = measure_workloads(TASK, ORIGINAL, PATCHED, rounds=5)
    w = m.by_name("w")
    assert w.remeasured_rounds == (1, 3)
    assert w.charged_s[1] > 0.15 and w.charged_s[3] == 0.0, w.charged_s
    assert not w.significant and m.speedup is not None and m.speedup < 1.2, (m.speedup, w.patched_s)


def test_no_stall_no_further_runs(script) -> None:
    runs = script([_run(0.020, 0.005)] * 3, [_run(0.021, 0.001)] * 3)
    w = measure_workloads(TASK, ORIGINAL, PATCHED, rounds=3).by_name("w")
    assert len(runs.calls) == 6 and w.remeasured_rounds == ()


def test_a_patch_whose_import_always_grew_is_no_stall() -> None:
    """Judged against its own copy's median: a steady growth is charged (`_charges`), never
    measured away."""
    original = [_run(s, 0.2) for s in (0.019, 0.016, 0.023)]
    patched = [_run(s, 0.002) for s in (0.215, 0.221, 0.209)]
    assert _stalled_rounds(original, patched) == []


def test_a_crash_when_measured_again_fails_the_workload(script) -> None:
    original = [_run(s, 0.0050) for s in (0.0190, 0.0160, 0.0210)] + [_run(0.0200, 0.0050)]
    patched = [_run(s, 0.0010) for s in (0.0200, 0.3900, 0.0170)] + [_run(0.0, 0.0, ok=False)]
    script(original, patched)
    m = measure_workloads(TASK, ORIGINAL, PATCHED, rounds=3)
    assert not m.correct and "patched: crashed" in m.error


def test_other_outputs_when_measured_again_fail_the_workload(script) -> None:
    original = [_run(s, 0.0050) for s in (0.0190, 0.0160, 0.0210)] + [_run(0.0200, 0.0050)]
    patched = [_run(s, 0.0010) for s in (0.0200, 0.3900, 0.0170)]
    patched.append(_run(0.0190, 0.0010, digest="other"))
    script(original, patched)
    m = measure_workloads(TASK, ORIGINAL, PATCHED, rounds=3)
    assert not m.correct and "outputs differ" in m.error
