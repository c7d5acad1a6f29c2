"""The report's numbers, hand-counted, and its handling of bad input (the CLI's: tests/cli)."""

import json
import math
from html.parser import HTMLParser

import pytest
from report_data import RUN_A, RUN_B, run, two_run_files, write

from perfgym.errors import ConfigError
from perfgym.metrics import perfcodebench_table
from perfgym.report import render_report, write_report
from perfgym.report.runs import read_file, split_runs
from perfgym.report.sections import rung_of, suite_section


@pytest.fixture
def two_runs(tmp_path):
    return two_run_files(tmp_path)


def section(paths):
    runs = split_runs([read_file(p) for p in paths])
    return suite_section(runs[0].suite, runs)


def test_sections_hand_counted(two_runs):
    s = section(two_runs)
    assert [r.label for r in s.runs] == ["model (base.jsonl)", "model (tuned.jsonl)"]
    a, b = (s.leaderboard[r.label] for r in s.runs)
    assert (a.crr.value, a.fbr.value, a.rbr.value) == pytest.approx((7 / 12, 4 / 12, 1 / 12))
    assert (b.crr.value, b.fbr.value, b.rbr.value) == pytest.approx((10 / 12, 9 / 12, 4 / 12))
    assert a.cgre.value == pytest.approx(perfcodebench_table(s.runs[0].verdicts).cgre.value)
    assert b.crr.ci_low <= b.crr.value <= b.crr.ci_high
    counts = s.staircase.counts
    assert counts["model (base.jsonl)"] == {"NX": 1, "NC": 1, "NR": 1, "WO": 2, "correct": 3,
                                            "faster": 3, "reference": 1}  # fmt: skip
    assert counts["model (tuned.jsonl)"] == {"NX": 0, "NC": 0, "NR": 1, "WO": 1, "correct": 1,
                                             "faster": 5, "reference": 4}  # fmt: skip
    means = s.staircase.mean_reward["model (base.jsonl)"]
    assert means["NX"] == pytest.approx(-0.05) and means["WO"] == pytest.approx(0.10)
    assert means["correct"] == pytest.approx(0.15)
    assert means["reference"] == pytest.approx(1.26)
    (t,) = s.transitions
    assert (t.before, t.after, t.error) == ("model (base.jsonl)", "model (tuned.jsonl)", "")
    r = t.result
    assert (r.fail_to_correct, r.notfast_to_fbr, r.notref_to_rbr, r.lost_correct) == (4, 5, 3, 1)
    assert (r.lost_fbr, r.lost_rbr) == (0, 0)
    d = s.speedups["model (tuned.jsonl)"]
    assert d.n == 9 and d.counts == [9, 9, 7, 6, 3, 2, 1, 0]
    assert d.median == pytest.approx(10 / 3)
    assert sorted(s.speedup_values["model (tuned.jsonl)"])[0] == pytest.approx(1 / 1.3)
    assert s.stages["model (base.jsonl)"].by_stage == {"NX": 1, "NC": 1, "NR": 1, "WO": 2, "OK": 7}
    assert s.stages["model (base.jsonl)"].nr_causes == {"TIMEOUT": 1}
    cells = s.cells
    assert (cells["task-07"]["model (base.jsonl)"].css, cells["task-07"]["model (base.jsonl)"].text) == ("ref", "5.00×")  # fmt: skip
    assert cells["task-00"]["model (base.jsonl)"].css == "slow"
    assert cells["task-01"]["model (base.jsonl)"].css == "fast"
    assert cells["task-03"]["model (base.jsonl)"].text == "WO WRONG_OUTPUT"


def test_rungs():
    vs = run("m", [(s, tc) for s, tc in RUN_A])
    assert [rung_of(v) for v in vs[:4]] == ["correct", "faster", "faster", "WO"]


def test_one_report_file_with_every_section(two_runs, tmp_path):
    out = write_report(list(two_runs), tmp_path / "r" / "report.html")
    html = out.read_text()

    class Count(HTMLParser):
        def __init__(self):
            super().__init__()
            self.tags, self.srcs = {}, []

        def handle_starttag(self, tag, attrs):
            self.tags[tag] = self.tags.get(tag, 0) + 1
            self.srcs += [v for k, v in attrs if k in ("src", "href") and v]

    p = Count()
    p.feed(html)
    # Inputs, leaderboard, staircase, speedups, stages, transitions, per-task: 7 tables;
    # leaderboard, staircase, speedup, stages: 4 embedded images.
    assert p.tags["table"] == 7 and p.tags["img"] == 4
    assert "script" not in p.tags and "link" not in p.tags
    assert all(s.startswith(("data:image/png;base64,", "#")) for s in p.srcs)


def test_progress_is_reported(two_runs, tmp_path):
    seen = []
    render_report(list(two_runs), progress=lambda what, done, total: seen.append((done, total)))
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]


def test_different_models_in_two_files_are_compared(tmp_path):
    a = write(tmp_path / "a.jsonl", run("base", RUN_A))
    b = write(tmp_path / "b.jsonl", run("rlpf", RUN_B))
    (t,) = section([a, b]).transitions
    assert (t.before, t.after) == ("base", "rlpf") and t.result.fail_to_correct == 4


def test_incompatible_transitions_say_why(tmp_path):
    a = write(tmp_path / "a.jsonl", run("m", RUN_A))
    b = write(tmp_path / "b.jsonl", run("m", RUN_B[:6]))
    (t,) = section([a, b]).transitions
    assert t.result is None and "different tasks" in t.error


def test_bad_input_is_a_config_error(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(ConfigError, match="holds no verdicts"):
        render_report([empty])
    header_only = write(tmp_path / "h.jsonl", [])
    with pytest.raises(ConfigError, match="holds no verdicts"):
        render_report([header_only])
    broken = write(tmp_path / "broken.jsonl", run("m", RUN_A))
    broken.write_text(broken.read_text() + '{"task_id": "x", "stage"\n')
    with pytest.raises(ConfigError, match=r"broken.jsonl:14: not JSON"):
        render_report([broken])
    mixed = write(tmp_path / "mixed.jsonl", run("m", RUN_A) + run("n", RUN_B, suite="other"))
    with pytest.raises(ConfigError, match="mix suites"):
        render_report([mixed])
    nan = write(tmp_path / "nan.jsonl", run("m", RUN_A))
    lines = nan.read_text().splitlines()
    row = json.loads(lines[1])
    row["candidate"]["estimate_s"] = math.nan
    nan.write_text("\n".join([lines[0], json.dumps(row), *lines[2:]]) + "\n")
    with pytest.raises(ConfigError, match=r"nan.jsonl.*not a finite number"):
        render_report([nan])
    with pytest.raises(ConfigError, match="nothing to report"):
        render_report([])


def test_infrastructure_failures_are_excluded_and_shown(tmp_path):
    vs = run("m", RUN_A)
    vs[0] = vs[0].model_copy(update={"infra_error": True, "reason": "sandbox died"})
    s = section([write(tmp_path / "i.jsonl", vs)])
    assert s.leaderboard["m"].n_tasks == 11
    assert s.stages["m"].infra_errors == 1
    assert s.cells["task-00"]["m"].css == "infra"
    assert any("infrastructure" in n for n in s.notes)
