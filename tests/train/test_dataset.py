"""GRPO/SFT/DPO datasets: built from a suite, its graded pools and real judged results files;
each round-trips through parquet and Hugging Face `datasets`; bad input names what is wrong."""

from __future__ import annotations

import json

import pytest
from train_tasks import FAST_SUM, MID_SUM, SLOW_SUM, WRONG_SUM

from perfgym.errors import ConfigError
from perfgym.judge.candidate import Candidate
from perfgym.judge.config import JudgeConfig
from perfgym.judge.judge import Judge
from perfgym.store.results_file import write_results
from perfgym.tasks.suite import load_suite
from perfgym.tasks.task import Split
from perfgym.train.dataset import GRPO_COLUMNS, check_family_disjoint, grpo_rows
from perfgym.train.dataset_io import load_dataset, write_dataset
from perfgym.train.dataset_pairs import dpo_rows, entries_from_verdicts, graded_ladder, sft_rows

datasets = pytest.importorskip("datasets")
SAME_AS_SLOW = SLOW_SUM + "# the same program, another text\n"


@pytest.fixture(scope="module")
def judged(train_suite, tmp_path_factory):
    """A real results file: sum-a's slow, same-as-slow, mid, fast and wrong programs judged
    together (5 interleaved rounds), as `perfgym eval` writes it."""
    suite = load_suite(train_suite)
    task = suite.get("sum-a")
    sources = [SLOW_SUM, SAME_AS_SLOW, MID_SUM, FAST_SUM, WRONG_SUM]
    with Judge(JudgeConfig(repeats=5)) as judge:
        verdicts = judge.judge_many([Candidate(task, source=s, model="m", sample=i, suite=suite.name)
                                     for i, s in enumerate(sources)])  # fmt: skip
    path = tmp_path_factory.mktemp("results") / "results.jsonl"
    write_results(path, verdicts, suite=suite.name)
    return suite, path, verdicts


def test_grpo_round_trips_and_carries_the_reward_columns(train_suite, tmp_path):
    suite = load_suite(train_suite)
    rows = grpo_rows(suite, "train", data_source=train_suite)
    assert [r["task_id"] for r in rows] == ["sum-a", "sum-b"]  # the test split stays out
    path = write_dataset(rows, tmp_path, "train", kind="grpo")
    ds = load_dataset(path, GRPO_COLUMNS)
    assert ds.to_list() == rows
    assert datasets.load_dataset("parquet", data_files=str(path), split="train").to_list() == rows
    first = ds[0]
    assert [m["role"] for m in first["prompt"]] == ["system", "user"]
    assert SLOW_SUM in first["prompt"][1]["content"]
    assert first["reward_model"]["ground_truth"] == "sum-a" and first["data_source"] == train_suite
    assert json.loads((tmp_path / "train.json").read_text())["rows"] == 2


def test_sft_from_the_graded_pool_round_trips(train_suite, tmp_path):
    suite = load_suite(train_suite)
    entries = [e for t in suite.split("train").tasks for e in graded_ladder(t)]
    rows = sft_rows(suite, entries)
    # baseline < pool-1 < reference: three slower -> faster pairs per task
    assert len(rows) == 6 and {r["evidence"] for r in rows} == {"graded"}
    one = next(r for r in rows if r["slower"] == "baseline" and r["faster"] == "reference")
    assert SLOW_SUM in one["messages"][1]["content"]
    assert json.loads(one["messages"][2]["content"])["solution_source"] == FAST_SUM
    path = write_dataset(rows, tmp_path, "sft")
    assert load_dataset(path, ["messages"]).to_list() == rows


def test_dpo_leaves_out_pairs_that_are_not_significant(judged, tmp_path):
    suite, path, verdicts = judged
    from perfgym.store.results_file import read_results

    _, back = read_results(path)
    rows, left_out = dpo_rows(suite, entries_from_verdicts(suite, back))
    pairs = {(r["chosen_label"], r["rejected_label"]) for r in rows}
    slow, same, mid, fast, wrong = (f"m#{i}" for i in range(5))
    assert (fast, slow) in pairs and (fast, wrong) in pairs and (slow, wrong) in pairs
    # two texts of one program differ only by noise: neither is chosen over the other
    assert (slow, same) not in pairs and (same, slow) not in pairs and left_out >= 2
    assert not any(r["chosen_label"] == wrong for r in rows)  # an incorrect one is never chosen
    measured = next(r for r in rows if (r["chosen_label"], r["rejected_label"]) == (fast, slow))
    assert measured["evidence"] == "significant" and measured["margin"] > 3
    written = write_dataset(rows, tmp_path, "dpo")
    assert load_dataset(written, ["prompt", "chosen", "rejected"]).to_list() == rows


def test_sft_from_results_keeps_only_significant_speedups(judged):
    suite, _, verdicts = judged
    rows = sft_rows(suite, entries_from_verdicts(suite, verdicts))
    assert rows and all(r["evidence"] == "significant" and r["speedup"] > 1 for r in rows)
    assert not any({r["slower"], r["faster"]} == {"m#0", "m#1"} for r in rows)


def test_bad_input_is_named(judged, train_suite, tmp_path):
    suite, path, verdicts = judged
    other = [v.model_copy(update={"suite": "perfgym-core"}) for v in verdicts]
    with pytest.raises(ConfigError, match="for suite 'perfgym-core'"):
        entries_from_verdicts(suite, other)
    stray = [verdicts[0].model_copy(update={"task_id": "nope"})]
    with pytest.raises(ConfigError, match="task 'nope' is not in suite"):
        entries_from_verdicts(suite, stray)
    rows = grpo_rows(suite, "train")
    written = write_dataset([{k: v for k, v in r.items() if k != "task_id"} for r in rows],
                            tmp_path, "bad")  # fmt: skip
    with pytest.raises(ConfigError, match="lacks the column task_id"):
        load_dataset(written, GRPO_COLUMNS)
    mixed = suite.model_copy(update={"tasks": [*suite.tasks,
        suite.get("sum-c").model_copy(update={"id": "sum-d", "split": Split.TRAIN})]})  # fmt: skip
    with pytest.raises(ConfigError, match="family 'c' is in both"):
        check_family_disjoint(mixed)


def test_cli_writes_and_refuses(train_suite, judged, tmp_path):
    from typer.testing import CliRunner

    from perfgym.cli import app

    _, path, _ = judged
    runner = CliRunner()
    ok = runner.invoke(app, ["dataset", "dpo", train_suite, "--results", str(path), "--out-dir",
                             str(tmp_path)])  # fmt: skip
    assert ok.exit_code == 0, ok.output
    assert "dpo-train.parquet" in ok.output and "left out" in ok.output
    bad = runner.invoke(app, ["dataset", "dpo", "perfgym-core", "--results", str(path), "--out-dir",
                              str(tmp_path)])  # fmt: skip
    assert bad.exit_code == 2 and "not 'perfgym-core'" in bad.output
    assert len(bad.output.strip().splitlines()) == 1


@pytest.mark.parametrize("command", ["grpo", "sft", "dpo"])
def test_dataset_commands_have_help_and_flags_as_flags(command):
    from typer.testing import CliRunner

    from perfgym.cli import app

    text = CliRunner().invoke(app, ["dataset", command, "-h"], terminal_width=200).output
    assert "Usage:" in text and "--out" in text and "/--no-" not in text and "<bool>" not in text
