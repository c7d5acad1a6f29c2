"""examples/train_grpo_trl.py runs on TRL's own options: --help, a --dry_run that builds the
real GRPOTrainer with RLPF's settings and DMC-Optim's knobs (as a script and in-process), a
--config YAML, precision and device from the machine, every bad option as one line with exit
status 2, and 2 real GRPO steps on CPU whose rewards perfgym judged."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("trl")
pytest.importorskip("peft")

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "train_grpo_trl.py"


def cuda() -> bool:
    import torch

    return torch.cuda.is_available()


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("train_grpo_trl", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass resolves its annotations there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def tiny(tiny_model_factory, tokenizer, tmp_path_factory):
    """The conftest's tiny Qwen2 and tokenizer, saved as a local model folder."""
    folder = tmp_path_factory.mktemp("tiny-model")
    tiny_model_factory().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


@pytest.fixture
def dry(script, tiny, tmp_path, capsys):
    """Runs a --dry_run in-process on the tiny model; returns the printed setup."""

    def go(*flags: str) -> dict:
        argv = ["--dry_run", "--model", tiny, "--output_dir", str(tmp_path / "out"), *flags]
        assert script.run(argv) == 0, capsys.readouterr().err
        return json.loads(capsys.readouterr().out)

    return go


def one_line_error(script, capsys, argv: list[str]) -> str:
    assert script.run(argv) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("train_grpo_trl: "), err
    assert captured.out == ""
    return err


def test_help(script, capsys):
    with pytest.raises(SystemExit) as done:
        script.run(["--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    for flag in ("--scale_rewards", "--max_steps", "--bf16", "--suite", "--dry_run", "--lora_r"):
        assert flag in out


def test_dry_run_as_a_script_has_rlpf_settings_and_dmc_knobs(tiny, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, str(EXAMPLE), "--dry-run", "--model", tiny,
                          "--output_dir", str(tmp_path / "out"), "--scale-rewards", "none",
                          "--num-generations", "16"], capture_output=True, text=True, env=env,
                         timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr
    setup = json.loads(out.stdout)
    assert setup["lora"]["r"] == 32 and setup["lora"]["lora_alpha"] == 64
    assert setup["grpo"]["max_completion_length"] == 768
    assert setup["grpo"]["scale_rewards"] == "none" and setup["grpo"]["num_generations"] == 16
    assert "alpha_f=0.16, alpha_r=0.1" in setup["reward"] and setup["prompts"] > 0
    # The trainer was built: the model is loaded with LoRA adapters (a fraction trainable).
    assert 0 < setup["model"]["trainable"] < setup["model"]["parameters"]


def test_rlpf_defaults(dry, tmp_path):
    setup = dry()
    assert not (tmp_path / "out" / "adapter_model.safetensors").exists()  # built, not trained
    grpo = setup["grpo"]
    assert grpo["num_generations"] == 8 and grpo["scale_rewards"] == "group"
    assert grpo["per_device_train_batch_size"] == 32 and grpo["loss_type"] == "dapo"
    assert grpo["num_train_epochs"] == 5.0 and grpo["learning_rate"] == 1e-5
    assert setup["reward_funcs"] == ["perfgym_rlpf"] and setup["backend"] == "local"


@pytest.mark.skipif("cuda()", reason="the CPU case")
def test_cpu_machine_gets_fp32_on_cpu_not_bf16(dry):
    """Issue 30: bf16 was hard-coded; on CPU TRL's own default (bf16 unless fp16) fails too."""
    setup = dry()
    assert setup["grpo"]["bf16"] is False and setup["grpo"]["fp16"] is False
    assert setup["grpo"]["use_cpu"] is True and setup["grpo"]["device"] == "cpu"
    assert setup["model"]["dtype"] == "torch.float32" and setup["model"]["device"] == "cpu"


def test_trl_flags_reach_the_trainer(dry):
    setup = dry("--max_steps", "3", "--bf16", "false", "--num_generations", "4",
                "--per_device_train_batch_size", "8", "--lora_r", "8", "--limit", "2")  # fmt: skip
    grpo = setup["grpo"]
    assert grpo["max_steps"] == 3 and grpo["bf16"] is False and grpo["num_generations"] == 4
    assert grpo["per_device_train_batch_size"] == 8 and setup["lora"]["r"] == 8
    assert setup["prompts"] == 2


def test_prompts_per_step_sets_the_batch(dry):
    setup = dry("--prompts_per_step", "2", "--num_generations", "4")
    assert setup["grpo"]["per_device_train_batch_size"] == 8


def test_config_yaml_under_the_command_line(dry, tmp_path):
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text("max_steps: 3\nnum_generations: 4\nper_device_train_batch_size: 8\n"
                      "lora_r: 8\nscale_rewards: none\nalpha_f: 0.2\n")  # fmt: skip
    setup = dry("--config", str(recipe), "--max_steps", "5")
    assert setup["grpo"]["max_steps"] == 5  # the flag wins over the file
    assert setup["grpo"]["num_generations"] == 4 and setup["grpo"]["scale_rewards"] == "none"
    assert setup["lora"]["r"] == 8 and "alpha_f=0.2," in setup["reward"]
    assert dry(f"--config={recipe}")["grpo"]["max_steps"] == 3


def test_bad_setup_is_one_line(script, tiny, capsys):
    err = one_line_error(script, capsys, ["--dry-run", "--model", tiny, "--backend", "service"])
    assert "needs url" in err


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--no_such_flag", "1"], "no_such_flag"),
        (["--max_steps", "two"], "max_steps"),
        (["--bf16", "maybe"], "bf16"),
        (["--backend", "gpu"], "backend"),
        (["--max_step", "2"], "max_step"),  # no silent abbreviation of TRL's flags
        (["--config"], "--config"),
        (["--config", "/nonexistent/recipe.yaml"], "recipe.yaml"),
        (["--num_generations", "3", "--per_device_train_batch_size", "4"], "num_generations"),
        (["--limit", "0"], "limit"),
        (["--prompts_per_step", "0"], "prompts_per_step"),
    ],
)
def test_malformed_option_is_one_line(script, capsys, argv, words):
    assert words in one_line_error(script, capsys, ["--dry_run", *argv])


def test_unknown_key_in_config_is_one_line(script, capsys, tmp_path):
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text("max_steps: 2\nbf17: true\n")
    assert "bf17" in one_line_error(script, capsys, ["--dry_run", "--config", str(recipe)])


def test_config_that_is_not_a_mapping_is_one_line(script, capsys, tmp_path):
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text("- max_steps\n- 2\n")
    assert "mapping" in one_line_error(script, capsys, ["--dry_run", "--config", str(recipe)])


def test_missing_model_is_one_line(script, capsys, tmp_path):
    err = one_line_error(script, capsys, ["--dry_run", "--output_dir", str(tmp_path)])
    assert "--model" in err
    err = one_line_error(script, capsys, ["--dry_run", "--model", str(tmp_path / "nothing"),
                                          "--output_dir", str(tmp_path)])  # fmt: skip
    assert "nothing" in err


@pytest.mark.skipif("cuda()", reason="the CPU case")
def test_forcing_gpu_bf16_on_a_cpu_machine_is_one_line(script, capsys):
    err = one_line_error(script, capsys, ["--dry_run", "--use_cpu", "false", "--bf16", "true"])
    assert "bf16" in err


def test_two_grpo_steps_on_cpu_through_the_example(script, tiny, train_suite, tmp_path, capsys):
    """The example's entry point with TRL's flags: 2 steps on the tiny model, rewards judged by
    perfgym in real sandboxes (its per-stage counters logged), the adapter and state saved."""
    out = tmp_path / "run"
    argv = ["--model", tiny, "--suite", train_suite, "--max_steps", "2", "--bf16", "false",
            "--num_generations", "2", "--per_device_train_batch_size", "4",
            "--max_completion_length", "16", "--learning_rate", "1e-2", "--save_strategy", "no",
            "--log_completions", "false", "--output_dir", str(out)]  # fmt: skip
    assert script.run(argv) == 0, capsys.readouterr().err
    assert (out / "adapter_model.safetensors").is_file() and (out / "adapter_config.json").is_file()
    history = json.loads((out / "trainer_state.json").read_text())["log_history"]
    steps = [h for h in history if "rewards/perfgym_rlpf/mean" in h]
    assert [h["step"] for h in steps] == [1, 2]
    for h in steps:
        assert h["perfgym_rlpf/none_frac"] == 0  # every completion judged, none timed out
        stages = sum(h[f"perfgym_rlpf/stage_{s}"] for s in ("NX", "NC", "NR", "WO", "OK"))
        assert stages == pytest.approx(1.0)
        assert -0.05 - 1e-6 <= h["rewards/perfgym_rlpf/mean"] <= 1.0
