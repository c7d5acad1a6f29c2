"""`perfgym eval PATH --published`: PerfCodeBench's published results as verdicts and its table.

Nothing runs. Each model is scored from its own `eval_result.json` files, over every task that
has published results (rules in docs/metrics.md, "PerfCodeBench published results"):
  - the candidate section's status gives the stage: ok with every run ok -> OK, ok with a
    failed run -> WO, timeout -> NR (TIMEOUT), error -> NR (ERROR: the published runner does
    not say whether it was a build failure or a wrong answer), missing_candidate, `unknown`,
    no section, no file, or no directory for this model -> NX;
  - the baseline and reference are that model's own file's sections, never another model's;
    one that did not succeed (not ok, a failed run, no median, a median of 0) is an unavailable
    timing, so the candidate keeps its CRR credit and earns only the columns whose durations
    exist: FBR needs Tb, RBR needs Tr, CGRE needs both (perfgym.metrics' missing-timing rule).
`--rules published` applies PerfCodeBench's own reading instead (its runner's
`comparable_and_promising`, scripts/run_model_suite.py, and Eq. 3 as written), where perfgym's
documented rules differ:
  - a candidate is correct only when its section is ok AND says `all_ok: true` (an absent
    all_ok is not correct: the runner reads `get("all_ok", False)`);
  - a task scores FBR/RBR/CGRE only when BOTH its baseline and reference are ok with all_ok
    (perfgym keeps whichever duration exists: RBR with a failed baseline, FBR with a failed
    reference);
  - when Tb <= Tr (no gap) CGRE is 0, not perfgym's 1[Tc < Tb] (the runner: denom <= 0 -> no
    credit; Eq. 3's clipped ratio is never positive there).
`--candidates-from MODEL` judges a model's published sources instead
(`perfgym.evaluation.inputs.published_candidates`).
"""

from __future__ import annotations

from collections import Counter
from enum import Enum
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from perfgym.cli.output import console, err_console, fail, print_json
from perfgym.errors import PerfgymError
from perfgym.judge.verdict import Stage, Timing, TimingStatus, Verdict
from perfgym.metrics.perfcodebench import PerfCodeBenchConfig, perfcodebench_table
from perfgym.tasks.eval_results import PublishedCandidate
from perfgym.tasks.perfcodebench_published import PublishedResults, read_published
from perfgym.tasks.task import StoredMeasurement, StoredStatus

COLUMNS = ("crr", "fbr", "rbr", "cgre")


class Rules(str, Enum):
    """Whose rules score the published results (`eval --published --rules`)."""

    PERFGYM = "perfgym"  # docs/metrics.md, the default
    PUBLISHED = "published"  # PerfCodeBench's own scripts (module docstring)


def published_timing(stored: StoredMeasurement | None, what: str) -> Timing | None:
    """A published section as a Timing: ok with a positive median, else unavailable (why)."""
    if stored is None:
        return None
    why = ""
    if stored.status != StoredStatus.OK:
        why = f"published {what}: {stored.status}"
    elif stored.all_ok is False:
        why = f"published {what}: a run reported ok=false"
    elif stored.median_s is None or not stored.median_s > 0:
        why = f"published {what}: no positive median_elapsed_ns ({stored.median_s})"
    if why:
        return Timing(clock="harness", status=TimingStatus.UNAVAILABLE, status_reason=why)
    return Timing(estimate_s=stored.median_s, samples_s=stored.samples_s, clock="harness")


def _stage(c: PublishedCandidate | None, rules: Rules = Rules.PERFGYM) -> tuple[Stage, str, str]:
    section = None if c is None else c.candidate
    if section is None or section.status == StoredStatus.MISSING_CANDIDATE:
        return Stage.NX, "NO_CODE", "no published candidate"
    if section.status == StoredStatus.TIMEOUT:
        return Stage.NR, "TIMEOUT", (c.error if c else "") or "published timeout"
    if section.status == StoredStatus.ERROR:
        return Stage.NR, "ERROR", (c.error if c else "") or "published error"
    if section.all_ok is False:
        return Stage.WO, "WRONG_OUTPUT", "a published run reported ok=false"
    if section.all_ok is None and rules is Rules.PUBLISHED:
        return Stage.WO, "WRONG_OUTPUT", "no all_ok in the published section (--rules published)"
    return Stage.OK, "", ""


def rules_of(text: str | None) -> Rules:
    """`--rules` as given (None: perfgym's); anything else is one line and exit 2."""
    if text is None:
        return Rules.PERFGYM
    try:
        return Rules(text.strip().lower())
    except ValueError:
        fail(f"unknown --rules {text!r}; one of {', '.join(r.value for r in Rules)}")


def _comparable(c: PublishedCandidate | None) -> bool:
    """Both the baseline and the reference ok with all_ok true (the published runner's test)."""
    return c is not None and all(
        s is not None and s.status == StoredStatus.OK and s.all_ok is True and bool(s.median_s)
        for s in (c.baseline, c.reference)
    )


def published_verdict(task_id: str, language: str, model: str, suite: str,
                      c: PublishedCandidate | None,
                      rules: Rules = Rules.PERFGYM) -> Verdict:  # fmt: skip
    """One model's published result on one task (None: the model has no directory there)."""
    stage, detail, reason = _stage(c, rules)
    candidate = published_timing(c.candidate, "candidate") if c and stage is Stage.OK else None
    baseline = published_timing(c.baseline if c else None, "baseline")
    reference = published_timing(c.reference if c else None, "reference")
    if rules is Rules.PUBLISHED and c is not None and not _comparable(c):
        why = "published baseline or reference not ok (--rules published: neither is used)"
        baseline = reference = Timing(clock="harness", status=TimingStatus.UNAVAILABLE,
                                      status_reason=why)  # fmt: skip
    return Verdict(
        task_id=task_id, suite=suite, model=model, stage=stage, detail=detail, reason=reason,
        language=language, candidate=candidate, baseline=baseline, reference=reference,
        config={"published": True, "rules": rules.value,
                "eval_result": str(c.eval_result) if c else None},
    )  # fmt: skip


def published_verdicts(
    results: PublishedResults, model: str, rules: Rules = Rules.PERFGYM
) -> list[Verdict]:
    """A model's verdict on every task with published results (NX where it has none)."""
    suite = (
        results.root.parent.name if results.root.name == "executable_tasks" else results.root.name
    )
    return [published_verdict(t.task_id, t.language, model, suite, t.candidates.get(model), rules)
            for t in results.tasks]  # fmt: skip


def published_rows(
    results: PublishedResults, models: list[str], rules: Rules = Rules.PERFGYM
) -> list[dict[str, Any]]:
    """Per model: stage counts and the RLPF columns (values, CIs, notes)."""
    rows = []
    gap = "zero" if rules is Rules.PUBLISHED else "step"
    for model in models:
        verdicts = published_verdicts(results, model, rules)
        # Published results are one median per program, without samples: no test can decide,
        # so the table is the paper's, under its strict rule (Tc < Tb, Tc <= Tr).
        config = PerfCodeBenchConfig(decision="strict", degenerate_gap=gap)
        table = perfcodebench_table(verdicts, config)
        stages = Counter(v.stage.value for v in verdicts)
        metrics = {name: getattr(table, name) for name in COLUMNS}
        rows.append({
            "model": model, "n": len(verdicts), "stages": dict(stages),
            "metrics": {k: {"value": m.value, "ci": [m.ci_low, m.ci_high]} for k, m in metrics.items()},
            "notes": list(dict.fromkeys(table.crr.notes)),
        })  # fmt: skip
    return rows


def run_published(path: str, models: list[str], task_ids: list[str], as_json: bool,
                  rules: Rules = Rules.PERFGYM) -> None:  # fmt: skip
    """Read, score and print; a model named but absent everywhere is an error."""
    try:
        results = read_published(Path(path), only=task_ids or None)
    except PerfgymError as exc:
        fail(str(exc))
    for e in results.skipped:
        err_console.print(f"[yellow]skipped[/] {escape(e['reason'])}")
    unknown = [m for m in models if m not in results.models]
    if unknown:
        fail(f"no published results for model(s) {', '.join(unknown)} "
             f"(known: {', '.join(results.models) or 'none'})")  # fmt: skip
    if not results.tasks:
        fail(f"no task under {results.root} has published results")
    rows = published_rows(results, models or results.models, rules)
    per_language = Counter(t.language for t in results.tasks)
    summary = {"root": str(results.root), "tasks": len(results.tasks),
               "rules": rules.value,
               "per_language": dict(per_language), "skipped": results.skipped,
               "without_results": results.without_results, "models": rows}  # fmt: skip
    if as_json:
        print_json(summary)
        return
    table = Table(title=f"PerfCodeBench published results ({results.root}; {rules.value} rules)")
    for col in ("model", "n", "NX", "NC", "NR", "WO", "OK", "CRR", "FBR", "RBR", "CGRE"):
        table.add_column(col)
    for r in rows:
        cells = [_cell(r["metrics"][k]) for k in COLUMNS]
        table.add_row(r["model"], str(r["n"]),
                      *(str(r["stages"].get(s, 0)) for s in ("NX", "NC", "NR", "WO", "OK")), *cells)  # fmt: skip
    console.print(table)
    for r in rows:
        for note in r["notes"]:
            console.print(f"{escape(r['model'])}: {escape(note)}")
    langs = ", ".join(f"{k} {n}" for k, n in sorted(per_language.items()))
    console.print(f"{len(results.tasks)} tasks with published results ({langs}); "
                  f"{len(results.skipped)} skipped, {len(results.without_results)} without results")  # fmt: skip


def _cell(m: dict[str, Any]) -> str:
    if m["value"] is None:
        return "-"
    lo, hi = m["ci"]
    return f"{m['value']:.3f}" if lo is None else f"{m['value']:.3f} [{lo:.3f}, {hi:.3f}]"
