"""examples/train_grpo_trl.py runs: --help, a --dry-run with RLPF's settings and DMC-Optim's
knobs (as a script, and in-process), and a bad setup as one line with exit status 2."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "train_grpo_trl.py"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("train_grpo_trl", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_help(script, capsys):
    with pytest.raises(SystemExit) as done:
        script.run(["--help"])
    assert done.value.code == 0
    assert "--scale-rewards" in capsys.readouterr().out


def test_dry_run_as_a_script_has_rlpf_settings_and_dmc_knobs():
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, str(EXAMPLE), "--dry-run", "--scale-rewards", "none",
                          "--num-generations", "16"], capture_output=True, text=True, env=env,
                         timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr
    setup = json.loads(out.stdout)
    assert setup["lora"]["r"] == 32 and setup["lora"]["lora_alpha"] == 64
    assert setup["grpo"]["max_completion_length"] == 768
    assert setup["grpo"]["scale_rewards"] == "none" and setup["grpo"]["num_generations"] == 16
    assert "alpha_f=0.16, alpha_r=0.1" in setup["reward"] and setup["prompts"] > 0


def test_rlpf_defaults(script, capsys):
    assert script.run(["--dry-run"]) == 0
    setup = json.loads(capsys.readouterr().out)
    assert setup["grpo"]["num_generations"] == 8 and setup["grpo"]["scale_rewards"] == "group"


def test_bad_setup_is_one_line(script, capsys):
    assert script.run(["--dry-run", "--backend", "service"]) == 2
    err = capsys.readouterr().err
    assert "needs url" in err and len(err.strip().splitlines()) == 1
