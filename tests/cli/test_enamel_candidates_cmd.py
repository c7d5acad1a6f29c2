"""`perfgym eval enamel --candidates FILE`: ENAMEL's protocol on model samples (eff@k per model),
never the staged judge; conflicting and malformed input is a one-line error."""

from __future__ import annotations

import json

from cli_helpers import one_line_error, perfgym

from perfgym.tasks import load_suite


def _cands(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_candidates_run_enamel_s_protocol_and_report_eff_at_k(tmp_path):
    task = load_suite("enamel").get("HumanEval/1")
    wrong = f"def {task.entry_point}(*args):\n    return []\n"
    cands = _cands(tmp_path / "c.jsonl", [
        {"task_id": task.id, "model": "m", "sample": 0, "source": task.reference.source},
        {"task_id": task.id, "model": "m", "sample": 1, "completion": f"```python\n{wrong}```"},
    ])  # fmt: skip
    cands.write_text(cands.read_text() + "{not json\n")
    out = tmp_path / "o.jsonl"
    p = perfgym("eval", "enamel", "--candidates", cands, "--task", task.id, "--repeats", "2",
                "--no-store", "--json", "--out", out)  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    summary = json.loads(p.stdout)
    (row,) = summary["rows"]
    assert row["model"] == "m" and row["samples_per_problem"] == 2 and row["problems"] == 1
    eff1, eff2 = row["metrics"]["eff@1"], row["metrics"]["eff@2"]
    # One right sample (the reference, ~1) and one wrong (0): eff@1 is half of eff@2.
    assert eff2[0] > 0.3 and abs(eff1[0] - eff2[0] / 2) < 1e-9
    assert row["metrics"]["pass@1"][0] == 0.5 and row["metrics"]["pass@2"][0] == 1.0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert lines[0]["perfgym_results"]["protocol"] == "enamel"
    assert [t["sample"] for t in lines[1:]] == [0, 1]
    assert lines[2]["stopped"].startswith("wrong on L0")
    assert "skipped" in p.stderr  # the line the reader refused is named, not silently dropped


def test_candidates_and_solutions_together_are_refused(tmp_path):
    cands = _cands(tmp_path / "c.jsonl", [{"task_id": "HumanEval/1", "source": "x = 1\n"}])
    p = perfgym("eval", "enamel", "--candidates", cands, "--solutions", "humaneval-canonical",
                "--task", "HumanEval/1", "--no-store", "--out", tmp_path / "o.jsonl")  # fmt: skip
    one_line_error(p, "--candidates", "--solutions")


def test_a_candidates_file_with_no_usable_line_is_refused(tmp_path):
    cands = tmp_path / "c.jsonl"
    cands.write_text("not json\n")
    p = perfgym("eval", "enamel", "--candidates", cands, "--task", "HumanEval/1", "--no-store",
                "--out", tmp_path / "o.jsonl")  # fmt: skip
    assert p.returncode == 2 and "no usable candidates" in p.stderr, p.stderr[-2000:]
