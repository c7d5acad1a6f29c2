"""The terminal summary's extra lines: why candidates failed (by stage, top few per model) and
how many tasks each model left unanswered."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from rich.markup import escape

from perfgym.cli.output import console, err_console
from perfgym.judge.verdict import Stage, Verdict

#: How many (stage, detail) reasons each model's line names.
TOP_REASONS = 4


def reason_key(v: Verdict) -> str:
    """'NR TIMEOUT', 'WO', 'NX MISSING', 'infra SANDBOX_ERROR': the stage and its detail."""
    stage = "infra" if v.infra_error else v.stage.value
    detail = v.detail if v.detail and v.detail != "WRONG_OUTPUT" else ""
    return f"{stage} {detail}".strip()


def failure_reasons(verdicts: Sequence[Verdict], top: int = TOP_REASONS) -> dict[str, str]:
    """Model -> 'NR TIMEOUT ×3, WO ×2, …' for its failed verdicts, commonest first (models
    with no failure are left out)."""
    by_model: dict[str, Counter[str]] = {}
    for v in verdicts:
        if v.stage is Stage.OK and not v.infra_error:
            continue
        by_model.setdefault(v.model, Counter())[reason_key(v)] += 1
    out = {}
    for model, counts in by_model.items():
        ranked = counts.most_common()
        shown = ", ".join(f"{k} ×{n}" for k, n in ranked[:top])
        rest = sum(n for _, n in ranked[top:])
        out[model] = shown + (f", other ×{rest}" if rest else "")
    return out


def failed_lines(verdicts: Sequence[Verdict]) -> list[str]:
    """One line per failed verdict (-v): task, model, sample, stage, detail and the reason."""
    return [
        f"{v.task_id} {v.model}#{v.sample}: {reason_key(v)}"
        + (f" — {v.reason.splitlines()[0][:160]}" if v.reason.strip() else "")
        for v in verdicts
        if v.stage is not Stage.OK or v.infra_error
    ]


def print_failures(verdicts: Sequence[Verdict], *, verbose: bool) -> None:
    """The failure reasons per model under the table; with `verbose`, every failed verdict."""
    reasons = failure_reasons(verdicts)
    if reasons:
        console.print("failures by stage (top per model):", highlight=False)
    for model, line in reasons.items():
        console.print(f"  {escape(model)}: {escape(line)}", highlight=False)
    if verbose:
        for line in failed_lines(verdicts):
            console.print(escape(line), highlight=False)


def print_missing(missing: dict[str, int], n_tasks: int, allow_missing: bool) -> None:
    """The warning (or, with --allow-missing, the note) naming how many tasks went unanswered."""
    for model, n in missing.items():
        if allow_missing:
            err_console.print(
                f"note: {escape(model)}: scored over the {n_tasks - n} answered tasks of "
                f"{n_tasks} (--allow-missing); {n} unanswered left out of every denominator",
                highlight=False,
            )
        else:
            err_console.print(
                f"[yellow]warning:[/] {escape(model)}: {n} of {n_tasks} tasks have no candidate "
                "and count as NX (MISSING); --allow-missing scores only the answered ones",
                highlight=False,
            )
