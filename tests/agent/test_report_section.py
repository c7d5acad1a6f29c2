"""The report's agent section from results JSONL: the curve's numbers, and malformed files."""

from __future__ import annotations

import json

import jinja2
import pytest

from perfgym.errors import ConfigError
from perfgym.report.agent_section import (
    harmonic_mean_curve,
    read_agent_results,
    render_agent_section,
)


def _write(path, records):  # type: ignore[no-untyped-def]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _task(tid, curve, best=1):  # type: ignore[no-untyped-def]
    return {"kind": "task", "task_id": tid, "model": "m", "curve": curve, "best": best,
            "best_speedup": curve[-1], "best_ci": [1.1, 3.0], "full_suite_passed": True,
            "expert_speedup": None, "prep": {"speedscope": "x.original.speedscope.json"}}  # fmt: skip


def test_curve_is_the_harmonic_mean_of_best_so_far(tmp_path):  # type: ignore[no-untyped-def]
    (tmp_path / "a.files").mkdir()  # where perfgym agent keeps a run's profiles
    (tmp_path / "a.files" / "x.original.speedscope.json").write_text("{}")
    f = _write(tmp_path / "a.jsonl", [
        {"kind": "header"},
        {"kind": "attempt", "task_id": "a", "index": 1, "stage": "measured", "speedup": 2.0,
         "ci": [1.5, 2.5], "significant": True, "hacks": [], "speedscope": "",
         "hidden_speedup": 1.9, "tests_mode": "selected", "tests_ran": 3, "tests_failed": []},
        _task("a", [2.0, 2.0, 4.0]), _task("b", [1.0]),
    ])  # fmt: skip
    tasks = read_agent_results(f)
    assert [t.task_id for t in tasks] == ["a", "b"] and len(tasks[0].attempts) == 1
    # turn 3: task a at 4.0, task b held at its last value 1.0 -> 2 / (1/4 + 1) = 1.6
    assert harmonic_mean_curve(tasks, 3) == pytest.approx([2 / 1.5, 2 / 1.5, 1.6])
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters["num"] = lambda x, d=3: "–" if x is None else f"{x:.{d}f}"
    html = str(render_agent_section([f], env))
    assert "data:image/png;base64," in html and 'download="x.original.speedscope.json"' in html
    # The per-task table: each task's best speed-up with its 95 % interval.
    assert "speed-up [95&nbsp;% CI]" in html
    row_a = html.split("<tr><td>a</td>")[1].split("</tr>")[0]
    assert "4.00×" in row_a and "[1.10, 3.00]" in row_a and "passed" in row_a


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"kind": "header"}\nnot json\n', "a.jsonl:2: not a JSON line"),
        ('{"kind": "header"}\n', "no finished agent task"),
        ("", "no finished agent task"),
    ],
)
def test_malformed_results_are_one_line_errors(tmp_path, text, words):  # type: ignore[no-untyped-def]
    f = tmp_path / "a.jsonl"
    f.write_text(text)
    with pytest.raises(ConfigError, match=words):
        read_agent_results(f)


def test_missing_file_is_a_config_error(tmp_path):  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match="cannot read agent results"):
        read_agent_results(tmp_path / "nope.jsonl")
