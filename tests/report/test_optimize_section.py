"""The report's optimisation section: per-task speed-ups with bracketed 95 % intervals, the
"stopped" and "same source as" columns filled, and a note when the median speed-up of
unchanged bests moves between iterations (noise, or a machine that changed: never a gain)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from perfgym.report.optimize_section import noise_notes, section_html


def _row(it: int, median: float, accepted: int, speedups: dict[str, list[float]]) -> dict[str, Any]:
    return {"iteration": it, "tasks": 1, "pass_at_1": 1.0, "fbr": 1.0, "rbr": 0.0,
            "median_speedup": median, "beyond": {"T": None, "M": None, "I": None},
            "proposals_ok": 1.0, "accepted": accepted, "speedups": speedups}  # fmt: skip


def _doc(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {"kind": "perfgym-optimize", "run": "r1", "suite": "s", "model": "m",
            "strategy": "greedy", "objective": "time", "iterations": rows,
            "tasks": [{"task_id": "t", "best": "candidate", "iteration": 1,
                       "stopped": "all 2 iteration(s) done", "same_as": [], "reference": False,
                       "speedup": 4.4, "ci": [4.0, 4.8]}]}  # fmt: skip


def test_an_unchanged_best_whose_median_moves_is_called_noise_with_its_intervals() -> None:
    doc = _doc(
        [_row(1, 4.58, 1, {"t": [4.58, 4.2, 5.0]}), _row(2, 4.40, 0, {"t": [4.4, 4.0, 4.8]})]
    )
    (note,) = noise_notes(doc)
    assert "no best changed" in note and "4.580× → 4.400×" in note
    assert "t 4.580× [4.200, 5.000] → 4.400× [4.000, 4.800]" in note and "noise" in note


def test_disjoint_intervals_are_not_called_noise_and_an_accepted_step_gets_no_note() -> None:
    """Adversarial: the note must not explain away a real change, nor hide a drifting machine."""
    drift = _doc([_row(1, 4.6, 1, {"t": [4.6, 4.5, 4.7]}), _row(2, 3.0, 0, {"t": [3.0, 2.9, 3.1]})])
    (note,) = noise_notes(drift)
    assert "do not overlap" in note and "noise, not" not in note
    gain = _doc([_row(1, 2.0, 1, {"t": [2.0, 1.9, 2.1]}), _row(2, 4.0, 1, {"t": [4.0, 3.8, 4.2]})])
    assert noise_notes(gain) == []


def test_the_task_table_shows_speed_up_ci_stopped_and_same_source(tmp_path: Path) -> None:
    doc = _doc(
        [_row(1, 4.58, 1, {"t": [4.58, 4.2, 5.0]}), _row(2, 4.40, 0, {"t": [4.4, 4.0, 4.8]})]
    )
    path = tmp_path / "optimize.json"
    path.write_text(json.dumps(doc))
    html = section_html([path])
    row = html.split("<tr><td>t</td>")[1].split("</tr>")[0]
    assert "4.400×" in row and "[4.000×, 4.800×]" in row
    assert "all 2 iteration(s) done" in row and "none (its own source)" in row
    assert "no best changed" in html and "1.000" in html  # rates as fractions, not 100.0


def test_a_summary_written_before_these_fields_still_renders(tmp_path: Path) -> None:
    """Malformed-ish input: an older optimize.json (no speedups, no speed-up, no CI)."""
    doc = _doc([_row(1, 2.0, 1, {}), _row(2, 2.1, 0, {})])
    for r in doc["iterations"]:
        del r["speedups"]
    doc["tasks"] = [{"task_id": "t", "best": "baseline", "iteration": 0, "stopped": "",
                     "same_as": []}]  # fmt: skip
    path = tmp_path / "optimize.json"
    path.write_text(json.dumps(doc))
    html = section_html([path])
    assert "no per-task intervals recorded" in html
    row = html.split("<tr><td>t</td>")[1].split("</tr>")[0]
    assert "–" in row
