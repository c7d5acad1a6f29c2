"""`eval --published --rules published`: PerfCodeBench's own reading of its eval_result.json
files, where it differs from perfgym's documented rules, on a tree written in its layout.

Four tasks, one model, each showing one difference (docs/perfcodebench.md, "--rules"):
  no_all_ok  the candidate's section has no all_ok: perfgym OK, the published runner not correct
  base_err   the baseline failed, the reference ok, Tc < Tr: perfgym keeps RBR, published none
  no_gap     Tb <= Tr and Tc < Tb: perfgym's CGRE 1[Tc < Tb] = 1, Eq. 3 as written 0
  plain      Tb 10, Tr 2, Tc 6: CGRE 0.5 under both
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from perfgym.cli import app

MODEL = "some-model"


def _section(ms: float | None, *, status: str = "ok", all_ok: bool | None = True) -> dict[str, Any]:
    out: dict[str, Any] = {"status": status, "runs": 3}
    if ms is not None:
        ns = int(ms * 1e6)
        out |= {"median_elapsed_ns": ns, "all_elapsed_ns": [ns, ns, ns]}
    if all_ok is not None:
        out["all_ok"] = all_ok
    return out


CASES: dict[str, dict[str, dict[str, Any]]] = {
    "no_all_ok": {"baseline": _section(10), "reference": _section(2),
                  "candidate": _section(3, all_ok=None)},
    "base_err": {"baseline": _section(None, status="error", all_ok=None),
                 "reference": _section(2), "candidate": _section(1)},
    "no_gap": {"baseline": _section(5), "reference": _section(6), "candidate": _section(4)},
    "plain": {"baseline": _section(10), "reference": _section(2), "candidate": _section(6)},
}  # fmt: skip


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pcb") / "executable_tasks"
    for task_id, sections in CASES.items():
        d = root / task_id
        for sub in ("harness", "baseline", "reference", f"candidate/{MODEL}"):
            (d / sub).mkdir(parents=True)
        instance = {"task_id": task_id, "title": task_id, "goal": "g", "metric": "m",
                    "correctness_rule": "c", "language": "Python",
                    "solution_filename": "solution.py", "build": {"skip": True},
                    "run": {"argv": ["python3", "{variant_dir}/solution.py"]}}  # fmt: skip
        (d / "instance.json").write_text(json.dumps(instance))
        for sub in ("baseline", "reference", f"candidate/{MODEL}"):
            (d / sub / "solution.py").write_text("print(1)\n")
        result = {"task_id": task_id, "model": MODEL, **sections}
        (d / f"candidate/{MODEL}/eval_result.json").write_text(json.dumps(result))
    return root


def _table(tree: Path, *extra: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["eval", str(tree), "--published", "--json", *extra])
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)
    (row,) = got["models"]
    return {"rules": got["rules"], **{k: m["value"] for k, m in row["metrics"].items()}}


def test_perfgym_rules_stay_the_default(tree: Path) -> None:
    # CRR 4/4; FBR: base_err has no Tb, the other three are faster; RBR: no_all_ok? 3 > 2 no,
    # base_err 1 <= 2, no_gap 4 <= 6, plain no; CGRE (7/8 + 0 + 1 + 0.5) / 4.
    assert _table(tree) == _table(tree, "--rules", "perfgym") == {
        "rules": "perfgym", "crr": 1.0, "fbr": 0.75, "rbr": 0.5, "cgre": (7 / 8 + 1 + 0.5) / 4}  # fmt: skip


def test_published_rules_reproduce_the_runners_reading(tree: Path) -> None:
    # no_all_ok not correct; base_err correct but not comparable; no_gap FBR and RBR but CGRE 0.
    assert _table(tree, "--rules", "published") == {
        "rules": "published", "crr": 0.75, "fbr": 0.5, "rbr": 0.25, "cgre": 0.5 / 4}  # fmt: skip


def test_published_rules_never_score_a_cheaper_reading_higher(tree: Path) -> None:
    """A model cannot gain by its files leaving fields out: every column is at most perfgym's."""
    ours, theirs = _table(tree), _table(tree, "--rules", "published")
    assert all(theirs[k] <= ours[k] for k in ("crr", "fbr", "rbr", "cgre"))


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--rules", "paper"], "unknown --rules 'paper'; one of perfgym, published"),
     (["--rules", "published"], "--rules has no effect without --published")],
)  # fmt: skip
def test_bad_rules_are_one_line(tree: Path, args: list[str], message: str) -> None:
    published = ["--published"] if args[1] == "paper" else []
    result = CliRunner().invoke(app, ["eval", str(tree), *published, *args])
    assert result.exit_code == 2
    assert message in result.output and len(result.output.strip().splitlines()) == 1


def runner_reading(tasks: Path, skip: frozenset[str]) -> dict[str, dict[str, float]]:
    """The published scripts' reading, from the raw files with nothing but `json`
    (comparable_and_promising in scripts/run_model_suite.py; Eq. 3 as written)."""
    files: dict[str, dict[str, dict[str, Any]]] = {}
    for d in sorted(p for p in tasks.iterdir() if p.is_dir() and p.name not in skip):
        found = {p.parent.name: json.loads(p.read_text())
                 for p in d.glob("candidate/*/eval_result.json")}  # fmt: skip
        if found:
            files[d.name] = found
    models = sorted({m for f in files.values() for m in f})
    out = {}
    for model in models:
        crr = fbr = rbr = gre = 0.0
        for f in files.values():
            r = f.get(model) or {}
            c, b, ref = (r.get(k) or {} for k in ("candidate", "baseline", "reference"))
            if c.get("status") != "ok" or not c.get("all_ok", False):
                continue
            crr += 1
            if not all(s.get("status") == "ok" and s.get("all_ok", False) for s in (b, ref)):
                continue
            tb, tr, tc = b["median_elapsed_ns"], ref["median_elapsed_ns"], c["median_elapsed_ns"]
            fbr, rbr = fbr + (tc < tb), rbr + (tc <= tr)
            gre += max(0.0, min(1.0, (tb - tc) / (tb - tr))) if tb > tr else 0.0
        n = len(files)
        out[model] = {"crr": crr / n, "fbr": fbr / n, "rbr": rbr / n, "cgre": gre / n}
    return out


def test_the_runners_reading_is_recomputed_from_the_raw_files(tree: Path) -> None:
    assert runner_reading(tree, frozenset())[MODEL] == {
        k: v for k, v in _table(tree, "--rules", "published").items() if k != "rules"
    }


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("PERFGYM_PERFCODEBENCH"),
                    reason="PERFGYM_PERFCODEBENCH (a PerfCodeBench checkout's executable_tasks/) "
                    "is not set; the published repository is not on this machine")  # fmt: skip
def test_real_published_rules_equal_the_runners_reading() -> None:
    """All 23 models of the published repository, every column, to 1e-12."""
    real = Path(os.environ["PERFGYM_PERFCODEBENCH"])
    result = CliRunner().invoke(app, ["eval", str(real), "--published", "--rules", "published",
                                      "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)
    expected = runner_reading(real, frozenset(e["task"] for e in got["skipped"]))
    for row in got["models"]:
        for column, value in expected[row["model"]].items():
            assert row["metrics"][column]["value"] == pytest.approx(value, abs=1e-12), row["model"]
