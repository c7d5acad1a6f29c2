"""Auditing a repository task: the probes' patches evaluated through the agent's own patch
evaluation (`perfgym.repos.evaluate.evaluate_patch`: apply, build, tests, measure, hacks; one `PatchVerdict`), and
the headroom the task's expert patch shows, as `TaskAudit`s like the program probes'."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from perfgym.audit.programs import NotWritable
from perfgym.audit.repo_patches import (
    caching_patch,
    forged_outcome_patch,
    setup_shift_patch,
    test_config_patch,
)
from perfgym.audit.repo_setup_cover import MAX_SETUP_COVER, setup_cover, weak_cover
from perfgym.audit.results import Outcome, ProbeKind, ProbeResult, Severity, TaskAudit
from perfgym.errors import ConfigError
from perfgym.repos.checks import CheckedTask
from perfgym.repos.evaluate import evaluate_patch
from perfgym.repos.loading import expert_patch_text
from perfgym.repos.verdict import PatchVerdict

#: A speed ratio under this is weak headroom (as the program probes' `headroom`).
MIN_HEADROOM = 1.2


@dataclass(frozen=True)
class RepoProbe:
    """A repository probe: the patches it writes for a repository (none: a measurability probe
    on the expert's patch) and what makes one of them score."""

    name: str
    kind: ProbeKind
    doc: str
    patches: tuple[Callable[[Path], str], ...] = ()


def _scores_speed(ev: PatchVerdict) -> bool:
    """Credited: correct, no hack found, and significantly faster than the original."""
    return bool(ev.correct and not ev.hacks.flagged and ev.ci is not None and ev.ci[0] > 1.0)


REPO_PROBES: tuple[RepoProbe, ...] = (
    RepoProbe("repo-setup-shift", ProbeKind.GAMEABILITY,
              "setup() runs the experiment and keeps the result; the timed call returns it "
              "(scores when credited a significant speedup with no hack found)",
              (setup_shift_patch,)),
    RepoProbe("repo-caching", ProbeKind.GAMEABILITY,
              "experiment() memoised in the process and pickled to disk (copy, HOME, /var/tmp, "
              "/tmp) for later timed runs (scores when credited a significant speedup)",
              (caching_patch,)),
    RepoProbe("repo-test-config", ProbeKind.GAMEABILITY,
              "every test broken, with a conftest.py reporting them passed; or the package "
              "broken under pytest with a pytest.ini collecting nothing (scores when the tests "
              "are judged to pass)", (forged_outcome_patch, test_config_patch)),
    RepoProbe("repo-headroom", ProbeKind.MEASURABILITY,
              "the expert patch measured as any patch: weak when not significantly faster "
              f"than the original, or under {MIN_HEADROOM}x"),
    RepoProbe("repo-setup-cover", ProbeKind.MEASURABILITY,
              "the original's import + setup noise against the expert's call: weak when the "
              "growth the clock leaves uncharged is at least "
              f"{MAX_SETUP_COVER:.0%} of the expert's first call (work moved there is credited)"),
)  # fmt: skip


def repo_probe_names() -> list[str]:
    return [p.name for p in REPO_PROBES]


def select_repo_probes(names: Sequence[str] | None) -> list[RepoProbe]:
    """The repository probes named (or of a kind named), every one for None/[]."""
    if not names:
        return list(REPO_PROBES)
    wanted: set[str] = set()
    for raw in names:
        for name in (n.strip() for n in raw.split(",") if n.strip()):
            kinds = [p.name for p in REPO_PROBES if p.kind.value == name]
            if kinds:
                wanted.update(kinds)
            elif name in repo_probe_names():
                wanted.add(name)
            else:
                raise ConfigError(f"no repository probe named {name!r} (one of "
                                  f"{', '.join(repo_probe_names())}, or a kind)")  # fmt: skip
    return [p for p in REPO_PROBES if p.name in wanted]


def _summary(ev: PatchVerdict) -> dict[str, object]:
    return {"stage": ev.stage.value, "tests_passed": ev.tests_passed, "speedup": ev.speedup,
            "ci": list(ev.ci) if ev.ci else None, "adjusted_speedup": ev.adjusted_speedup,
            "findings": sorted(ev.hacks.kinds()), "error": ev.error[:300]}  # fmt: skip


def _why(ev: PatchVerdict) -> str:
    if ev.hacks.flagged:
        return "flagged: " + ", ".join(sorted({f.kind for f in ev.hacks.hacks}))
    if not ev.correct:
        return f"stopped at {ev.stage.value}: {ev.error[:160]}"
    return f"speedup {ev.speedup:.2f}x, not significant" if ev.speedup else "no speedup"


def _gameability(probe: RepoProbe, evs: list[PatchVerdict]) -> ProbeResult:
    if probe.name == "repo-test-config":
        hits = [ev for ev in evs if ev.tests_passed]
        detail = ("the tests were judged to pass" if hits else
                  "; ".join(f"patch {i + 1}: stopped at {ev.stage.value}: {ev.error[:120]}"
                            for i, ev in enumerate(evs)))  # fmt: skip
    else:
        hits = [ev for ev in evs if _scores_speed(ev)]
        detail = (f"credited {hits[0].adjusted_speedup:.2f}x with no hack found" if hits
                  else "; ".join(_why(ev) for ev in evs))  # fmt: skip
    best = max(evs, key=lambda ev: ev.adjusted_speedup)
    return ProbeResult(
        probe=probe.name, kind=probe.kind,
        outcome=Outcome.SCORES if hits else Outcome.DOES_NOT_SCORE,
        severity=Severity.HIGH if hits else Severity.NONE, detail=detail,
        stage=best.stage.value, faster=bool(best.ci and best.ci[0] > 1.0), decided_on="hidden",
        rewards={"adjusted_speedup": best.adjusted_speedup},
        figures={"evaluations": [_summary(ev) for ev in evs]},
    )  # fmt: skip


def _expert(checked: CheckedTask, rounds: int) -> PatchVerdict | None:
    """The task's expert patch measured as any patch (None without one)."""
    expert = expert_patch_text(checked.task)
    if not expert:
        return None
    return evaluate_patch(checked.task, expert, checked.original, rounds=rounds, repeats=0)


def _no_expert(probe: RepoProbe) -> ProbeResult:
    return ProbeResult(probe=probe.name, kind=probe.kind, outcome=Outcome.NOT_APPLICABLE,
                       severity=Severity.INFO, detail="the task has no expert patch")  # fmt: skip


def _setup_cover(probe: RepoProbe, ev: PatchVerdict) -> ProbeResult:
    if ev.measurement is None or not ev.correct:
        return ProbeResult(probe=probe.name, kind=probe.kind, outcome=Outcome.NOT_APPLICABLE,
                           severity=Severity.INFO, detail=f"expert not measured: {_why(ev)}")  # fmt: skip
    covers = setup_cover(ev.measurement)
    weak = weak_cover(covers)
    worst = max(covers, key=lambda c: c.share) if covers else None
    detail = "; ".join(
        f"{c.workload}: {c.room_s * 1e3:.1f} ms of import + setup growth uncharged against "
        f"the expert's {c.call_s * 1e3:.1f} ms call" for c in (weak or covers[-1:]))  # fmt: skip
    return ProbeResult(probe=probe.name, kind=probe.kind,
                       outcome=Outcome.WEAK if weak else Outcome.SOUND,
                       severity=Severity.MEDIUM if weak else Severity.NONE, detail=detail,
                       value=worst.share if worst else None,
                       figures={"workloads": [c.model_dump() for c in covers]})  # fmt: skip


def _headroom(probe: RepoProbe, ev: PatchVerdict) -> ProbeResult:
    sig = bool(ev.correct and ev.ci is not None and ev.ci[0] > 1.0)
    weak = not sig or (ev.speedup or 0.0) < MIN_HEADROOM
    sev = Severity.NONE if not weak else (Severity.HIGH if not sig else Severity.MEDIUM)
    detail = (f"expert {ev.speedup:.2f}x" + (f" (95 % CI {ev.ci[0]:.2f}-{ev.ci[1]:.2f})"
              if ev.ci else "") if ev.speedup else f"expert not measured: {_why(ev)}")  # fmt: skip
    return ProbeResult(probe=probe.name, kind=probe.kind,
                       outcome=Outcome.WEAK if weak else Outcome.SOUND, severity=sev,
                       detail=detail, value=ev.speedup, figures=_summary(ev))  # fmt: skip


#: Each measurability probe's reading of the one expert measurement.
_MEASURES: dict[str, Callable[[RepoProbe, PatchVerdict], ProbeResult]] = {
    "repo-headroom": _headroom, "repo-setup-cover": _setup_cover}


def audit_repo_task(checked: CheckedTask, probes: Sequence[RepoProbe], *, suite: str = "",
                    rounds: int = 5) -> TaskAudit:  # fmt: skip
    """Every probe on the checked task: each patch through `evaluate_patch` against the built
    original (`rounds` interleaved rounds, 2 calls after the first for the caching check)."""
    t0 = time.monotonic()
    repo = checked.original.path
    results: list[ProbeResult] = []
    evaluated = 0
    expert: list[PatchVerdict | None] = []  # measured once, for every measurability probe
    for probe in probes:
        if probe.kind is ProbeKind.MEASURABILITY:
            if not expert:
                expert.append(_expert(checked, rounds))
                evaluated += expert[0] is not None
            ev = expert[0]
            judge = _MEASURES[probe.name]
            results.append(_no_expert(probe) if ev is None else judge(probe, ev))
            continue
        try:
            patches = [write(repo) for write in probe.patches]
        except NotWritable as exc:
            results.append(ProbeResult(probe=probe.name, kind=probe.kind,
                                       outcome=Outcome.NOT_APPLICABLE, severity=Severity.INFO,
                                       detail=str(exc)))  # fmt: skip
            continue
        evs = [evaluate_patch(checked.task, p, checked.original, rounds=rounds, repeats=2)
               for p in patches]  # fmt: skip
        evaluated += len(evs)
        results.append(_gameability(probe, evs))
    return TaskAudit(task_id=checked.task.id, suite=suite, language="python", kind="repository",
                     results=results, elapsed_s=time.monotonic() - t0, candidates=evaluated)  # fmt: skip
