"""Training diagnostics from perfgym's reward records (written by the verl adapter while it
scores) and from TRL's trainer_state.json; `perfgym report` draws them (headless Chromium)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
from train_tasks import FAST_SUM, SLOW_SUM, WRONG_SUM

from perfgym.errors import ConfigError
from perfgym.train import verl as adapter
from perfgym.train.diagnostics import diagnose, ema, ema_peak, read_training_log, select_checkpoint

REPORT_TESTS = Path(__file__).resolve().parents[1] / "report"


def fenced(source: str) -> str:
    return f"```python\n{source}```"


def test_ema_is_tensorboards_debiased_smoothing_and_finds_the_peak():
    xs = [float(min(t, 60 - t)) for t in range(60)]  # rises to step 30, then falls
    alpha = 0.9
    for t, got in enumerate(ema(xs, alpha), 1):
        direct = sum((1 - alpha) * alpha ** (t - k) * xs[k - 1] for k in range(1, t + 1))
        assert got == pytest.approx(direct / (1 - alpha**t))
    peak = ema_peak(list(range(60)), xs, alpha)
    assert peak is not None and 30 < peak < 40  # the EMA lags the raw peak
    assert ema([3.0], 0.99) == [pytest.approx(3.0)]  # debiased: no pull towards 0
    assert select_checkpoint(33, [10, 20, 30, 40]) == 30
    assert select_checkpoint(35, [30, 40]) == 30 and select_checkpoint(None, [1]) is None
    with pytest.raises(ConfigError, match="alpha"):
        ema([1.0], 1.0)


@pytest.fixture(scope="module")
def records(train_suite, tmp_path_factory):
    """Two steps scored by the verl adapter: group sum-a varied, group sum-b all identical."""
    path = tmp_path_factory.mktemp("records") / "rewards.jsonl"
    group_a = [fenced(SLOW_SUM), fenced(FAST_SUM), fenced(WRONG_SUM), "no code"]
    group_b = [fenced(FAST_SUM)] * 4
    for _ in range(2):
        adapter.compute_score_batch([train_suite] * 8, group_a + group_b,
                                    ["sum-a"] * 4 + ["sum-b"] * 4, [{}] * 8,
                                    records=str(path), repeats=3)  # fmt: skip
    adapter.reset()
    return path


def test_records_give_zero_variance_noise_and_reward_by_stage(records):
    kind, steps, meta = read_training_log(records)
    assert kind == "records" and [s.step for s in steps] == [0, 1] and meta["reward"] == "rlpf"
    for s in steps:
        # sum-b's four identical fast programs all get the top reward: no advantage there
        assert s.zero_variance_frac == pytest.approx(0.5)
        assert set(s.reward_by_stage) == {"OK", "WO", "NX"}
        assert s.reward_by_stage["OK"] > s.reward_by_stage["WO"] > s.reward_by_stage["NX"]
        assert s.stage_frac["OK"] == pytest.approx(6 / 8)
        assert s.speedup_rel_noise is not None and 0 < s.speedup_rel_noise < 1
    # each line says why a correct program was paid what it was: its verdict's flags
    rows = [json.loads(x) for x in records.read_text().splitlines()[1:]]
    assert rows and all(isinstance(r["flags"], list) and "reason" in r for r in rows)
    diag = diagnose(records, checkpoints=[0, 1])
    assert diag.peak_step in (0, 1) and diag.checkpoint == diag.peak_step
    assert any("tentative" in n for n in diag.notes)


def trl_state(path: Path, rewards: list[float]) -> Path:
    """A trainer_state.json as TRL's GRPOTrainer writes it (log_history keys of trl 1.16)."""
    history = [{"step": i + 1, "epoch": i / len(rewards), "loss": 0.0, "reward": r,
                "reward_std": 0.1, "frac_reward_zero_std": (i % 4) / 4,
                "perfgym_rlpf/stage_OK": 0.5, "perfgym_rlpf/stage_NX": 0.5}
               for i, r in enumerate(rewards)]  # fmt: skip
    history.append({"step": len(rewards), "train_runtime": 1.0, "train_loss": 0.0})
    path.mkdir(parents=True, exist_ok=True)
    state = path / "trainer_state.json"
    state.write_text(json.dumps({"global_step": len(rewards), "log_history": history}))
    for step in (10, 20, 30):
        (path / f"checkpoint-{step}").mkdir()
    return state


def test_trl_log_selects_the_checkpoint_nearest_the_ema_peak(tmp_path):
    rewards = [math.sin(math.pi * t / 40) for t in range(40)]  # peaks at step 21, then falls
    diag = diagnose(trl_state(tmp_path / "run", rewards), alpha=0.8)
    assert diag.kind == "trl" and len(diag.steps) == 40
    assert diag.steps[3].zero_variance_frac == pytest.approx(0.75)
    assert diag.steps[0].stage_frac == {"OK": 0.5, "NX": 0.5}
    assert diag.peak_step is not None and 21 < diag.peak_step < 30
    assert diag.checkpoint == select_checkpoint(diag.peak_step, [10, 20, 30])


def test_bad_logs_are_named(tmp_path):
    bad = tmp_path / "trainer_state.json"
    bad.write_text(json.dumps({"log_history": [{"step": 1, "loss": 0.2}]}))
    with pytest.raises(ConfigError, match="no step with a 'reward'"):
        diagnose(bad)
    rec = tmp_path / "r.jsonl"
    rec.write_text('{"perfgym_reward_records": {}}\n{"step": 0, "reward": 1.0}\n')
    with pytest.raises(ConfigError, match="lacks group"):
        diagnose(rec)


def test_report_draws_the_training_section(records, tmp_path):
    sys.path.insert(0, str(REPORT_TESTS))
    from test_screenshot import CHART_RGB, CHROMIUM, near, screenshot
    from typer.testing import CliRunner

    from perfgym.cli import app

    out = tmp_path / "training.html"
    state = trl_state(tmp_path / "run", [0.1 * t for t in range(25)])
    res = CliRunner().invoke(app, ["report", str(records), str(state), "-o", str(out), "-q"])
    assert res.exit_code == 0, res.output
    text = out.read_text()
    assert text.count('alt="training diagnostics"') == 2 and "EMA peak (α = 0.99)" in text
    assert "checkpoint-20" in text  # rising rewards: the peak is the last step, 20 is nearest
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed")
    pixels = screenshot(out, tmp_path, height=1600)
    assert near(pixels, CHART_RGB["C0"]).sum() > 500  # the reward curves were painted
