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
