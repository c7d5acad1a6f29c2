"""`perfgym validate` reruns an undecided task at more repeats (judge/validate_rerun): at 3
repeats a side the rank test cannot reach p < 0.05 whatever the difference, so py_range_sums
(its reference ~100x faster) is undecided there and decided on the rerun at 6. The rerun's row
replaces the first, says so in the JSON row, the table's notes and the summary, and is reused
whole by --resume. With a budget of 0 nothing is rerun."""

import json
from pathlib import Path

from cli_helpers import perfgym

TREE = Path(__file__).parents[1] / "fixtures" / "perfcodebench" / "published" / "executable_tasks"


def test_an_undecided_row_is_rerun_at_more_repeats_and_resumed_whole(tmp_path):
    out = tmp_path / "rows.jsonl"
    args = ("validate", TREE, "--task", "py_range_sums", "--repeats", "3", "--max-repeats", "6",
            "--out", out)  # fmt: skip
    p = perfgym(*args, "--no-resume")
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert "py_range_sums: decided on rerun at 6 repeats (3 undecided)" in p.stdout, p.stdout
    assert "rerun at more repeats (undecided at first): 1 task(s), decided 1" in p.stdout
    header, row = [json.loads(line) for line in out.read_text().splitlines()]
    assert header["validation"]["rerun"] == {"max_repeats": 6, "budget_s": 60.0}
    assert row["repeats"] == 6 and row["direction"] == "agree" and row["ok"] is True
    rerun = row["rerun"]
    assert rerun["first_repeats"] == 3 and rerun["repeats"] == [6] and rerun["decided"]
    assert "not significantly faster" in rerun["first"] and rerun["wall_s"] > 0
    # every measured round of the kept row is the rerun's own: nothing pooled from the first
    assert row["comparison"]["n_a"] == row["comparison"]["n_b"] == 6
    again = perfgym(*args, "--resume", "--json")
    assert again.returncode == 0, again.stderr[-3000:]
    got = json.loads(again.stdout)
    assert got["reused"] == 1 and got["tasks"][0]["rerun"] == rerun
    assert got["summary"]["reruns"]["decided"] == 1


def test_no_rerun_without_budget():
    p = perfgym("validate", TREE, "--task", "py_range_sums", "--repeats", "3",
                "--rerun-budget-s", "0", "--json")  # fmt: skip
    assert p.returncode == 1, p.stderr[-3000:]  # not significantly faster at 3 repeats
    row = json.loads(p.stdout)["tasks"][0]
    assert row["rerun"] is None and row["repeats"] == 3 and row["direction"] == "undecided"
