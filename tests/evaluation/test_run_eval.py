"""`run_eval` from Python, no CLI: a config in, the verdicts, results file and summary out; a
bad config or input is one typed error, and typer and rich are never loaded."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError
from small_tasks import sum_task

from perfgym.evaluation.config import EvalConfig, EvalFailed
from perfgym.evaluation.run import run_eval
from perfgym.store.results_file import read_results

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("suite")
    (d / "tasks.jsonl").write_text(sum_task("sum-a").model_dump_json() + "\n")
    return d


def test_a_config_refuses_an_unknown_field() -> None:
    with pytest.raises(ValidationError, match="extra"):
        EvalConfig(suite="perfgym-core", no_such_option=True)  # type: ignore[call-arg]


def test_run_eval_judges_writes_and_summarises_without_the_cli(suite_dir: Path, tmp_path: Path):
    out, store = tmp_path / "r.jsonl", tmp_path / "s.sqlite"
    config = EvalConfig(suite=str(suite_dir), repeats=1, out=out, store=str(store), report=False)
    result = run_eval(config)
    assert [(v.model, v.stage.value) for v in result.verdicts] == [
        ("baseline", "OK"),
        ("reference", "OK"),
    ]
    assert result.results == out and result.missing == [] and result.reused == 0
    assert [r.model for r in result.summaries] == ["baseline", "reference"]
    assert all(r.n == 1 for r in result.summaries)
    assert result.recorded == {"judged": 2, "replayed": 0}
    header, written = read_results(out)
    assert header["suite"] == result.suite == suite_dir.name and header["judge"]["repeats"] == 1
    assert [v.model for v in written] == ["baseline", "reference"]
    again = run_eval(config.model_copy(update={"replay": True}))
    assert again.recorded == {"judged": 0, "replayed": 2}
    assert [v.stage for v in again.verdicts] == [v.stage for v in result.verdicts]


@pytest.mark.parametrize(
    ("update", "says"),
    [
        ({"task_ids": ["nope"]}, "unknown task id(s)"),
        ({"solutions": ["nobody"]}, "no solutions labelled nobody"),
        ({"repeats": 0}, "--repeats must be at least 1"),
        ({"split": "dev"}, "unknown --split 'dev'"),
        ({"models": ["m"]}, "a model generates through `perfgym eval --model`"),
        ({"published": True}, "`perfgym eval --published` scores published results"),
    ],
)
def test_bad_input_is_one_eval_failed(suite_dir: Path, tmp_path: Path, update, says) -> None:
    config = EvalConfig(suite=str(suite_dir), out=tmp_path / "r.jsonl", store=None, **update)
    with pytest.raises(EvalFailed, match=says.replace("(", r"\(").replace(")", r"\)")):
        run_eval(config)
    assert not (tmp_path / "r.jsonl").exists()


def test_the_evaluation_layer_loads_no_cli() -> None:
    code = (
        "import sys, perfgym.evaluation.run, perfgym.evaluation.inputs; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'rich') "
        "or m.startswith('perfgym.cli')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
    )
    assert done.stdout.strip() == "[]"
