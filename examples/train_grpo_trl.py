"""GRPO with TRL on perfgym's reward: RLPF's recipe by default, TRL's own options as flags.

The flags are TRL's (`TrlParser`): every `GRPOConfig` option (--max_steps, --bf16 false,
--per_device_train_batch_size, --num_generations, --scale_rewards...), every `ModelConfig`
option (--model_name_or_path, --dtype, --use_peft, --lora_r...), --config recipe.yaml (CLI flags
override it), and perfgym's own (--suite, --split, --dataset, --limit, --reward, --alpha_f,
--alpha_r, --backend, --url, --token, --address, --reward_timeout, --prompts_per_step,
--dry_run). Dashes and underscores are both accepted (--max-steps == --max_steps).

Defaults where the user gives none: RLPF (paper 000): G = 8 completions per prompt, 4 prompts
per device step, LoRA rank 32 / alpha 64 on all linear layers of a frozen base, completions up
to 768 tokens, the rlpf reward with alpha_F = 0.16 and alpha_R = 0.10, five epochs. DMC-Optim
(paper 003, section 5) is a few flags away: --num_generations 16, --prompts_per_step,
--scale_rewards none (percentile_qp needs a pool column and declared workloads: see
docs/training.md). Precision and device come from the machine: bf16
(and bf16 weights) only on a CUDA device that supports it, float32 on the CPU (use_cpu).

The reward is judged where --backend says: 'local' (this machine), 'service' (a `perfgym serve`
at --url) or 'ray' (a cluster at --address). --dry_run builds the real GRPOTrainer (model
loaded, reward functions, dataset), prints the setup as JSON and exits without training, so a
precision, device or option error shows there. A bad option is one line and exit status 2.

    python examples/train_grpo_trl.py --model Qwen/Qwen3-8B --backend service \\
        --url http://cpu-box:8321 --output_dir runs/rlpf --max_steps 500
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Literal, NoReturn

from perfgym.errors import ConfigError, PerfgymError
from perfgym.tasks.suite import Suite, load_suite
from perfgym.train.prompt import rlpf_messages
from perfgym.train.trl import reward_funcs

PROG = "train_grpo_trl"

#: RLPF's settings, as GRPOConfig / ModelConfig defaults (a --config file or a flag overrides).
RECIPE: dict[str, Any] = {
    "output_dir": "runs/grpo-perfgym",
    "num_generations": 8,
    "per_device_train_batch_size": 32,  # 4 prompts x G = 8 completions
    "max_completion_length": 768,
    "scale_rewards": "group",
    "loss_type": "dapo",
    "learning_rate": 1e-5,
    "num_train_epochs": 5.0,
    "logging_steps": 1,
    "log_completions": True,
    "report_to": "none",
    "use_peft": True,
    "lora_r": 32,
    "lora_alpha": 64,
    "lora_target_modules": ["all-linear"],
}


@dataclass
class PerfgymArguments:
    """perfgym's own options, beside TRL's GRPOConfig and ModelConfig."""

    model: str | None = field(default=None, metadata={"help": "Same as --model_name_or_path."})
    suite: str = field(default="perfgym-core", metadata={"help": "A perfgym suite (name or path)."})
    split: str = field(default="train", metadata={"help": "The suite split to train on."})
    dataset: str | None = field(
        default=None,
        metadata={"help": "A GRPO parquet file (prompt, task_id) instead of the split."},
    )
    limit: int | None = field(default=None, metadata={"help": "Train on the first N prompts only."})
    reward: str = field(default="rlpf", metadata={"help": "A registered perfgym reward."})
    alpha_f: float = field(default=0.16, metadata={"help": "rlpf: weight of FBR."})
    alpha_r: float = field(default=0.10, metadata={"help": "rlpf: weight of RBR."})
    backend: Literal["local", "service", "ray"] = field(
        default="local", metadata={"help": "Where the reward is judged."}
    )
    url: str | None = field(default=None, metadata={"help": "--backend service: the serve URL."})
    token: str | None = field(
        default_factory=lambda: os.environ.get("PERFGYM_TOKEN"),
        metadata={"help": "--backend service: its bearer token (default: $PERFGYM_TOKEN)."},
    )
    address: str | None = field(default=None, metadata={"help": "--backend ray: the cluster."})
    reward_timeout: float = field(
        default=900.0, metadata={"help": "Seconds one batch may take to judge (then None)."}
    )
    prompts_per_step: int | None = field(
        default=None,
        metadata={"help": "Prompts per device step: sets per_device_train_batch_size to P x G."},
    )
    dry_run: bool = field(
        default=False, metadata={"help": "Build the trainer, print the setup, do not train."}
    )


def machine_defaults() -> dict[str, Any]:
    """Precision and device from this machine: bf16 only where CUDA supports it."""
    import torch

    if torch.cuda.is_available():
        bf16 = torch.cuda.is_bf16_supported()
        return {"bf16": bf16, "fp16": False, "use_cpu": False,
                "dtype": "bfloat16" if bf16 else "float32"}  # fmt: skip
    mps = getattr(torch.backends, "mps", None)
    on_mps = bool(mps and mps.is_available())
    return {"bf16": False, "fp16": False, "use_cpu": not on_mps, "dtype": "float32"}


def make_parser() -> Any:
    """TRL's parser over perfgym's options, GRPOConfig and ModelConfig; its errors are one line."""
    from trl import GRPOConfig, ModelConfig, TrlParser

    class Parser(TrlParser):
        def error(self, message: str) -> NoReturn:
            raise ConfigError(message)

    parser = Parser((PerfgymArguments, GRPOConfig, ModelConfig), prog=PROG, allow_abbrev=False,
                    description=__doc__.splitlines()[0])  # fmt: skip
    parser.set_defaults(**RECIPE, **machine_defaults())
    return parser


def parse(argv: list[str] | None = None) -> tuple[PerfgymArguments, Any, Any]:
    """(perfgym's options, GRPOConfig, ModelConfig) from the flags and an optional --config."""
    argv = list(sys.argv[1:] if argv is None else argv)
    # TrlParser reads `--config PATH` only; `--config=PATH` is the same option.
    argv = [w for a in argv for w in (a.split("=", 1) if a.startswith("--config=") else [a])]
    if "--config" in argv and argv.index("--config") == len(argv) - 1:
        raise ConfigError("--config needs a YAML file")
    try:
        script, grpo, model = make_parser().parse_args_and_config(argv)
        if script.prompts_per_step is not None:
            if script.prompts_per_step < 1:
                raise ConfigError("--prompts_per_step must be at least 1")
            # GRPOConfig derives its generation batch from this: parse again with it as a flag.
            per_step = script.prompts_per_step * grpo.num_generations
            argv += ["--per_device_train_batch_size", str(per_step)]
            script, grpo, model = make_parser().parse_args_and_config(argv)
    except ConfigError:
        raise
    except (ValueError, OSError) as exc:  # TrlParser / GRPOConfig / TrainingArguments checks
        raise ConfigError(one_line(exc)) from exc
    if script.limit is not None and script.limit < 1:
        raise ConfigError("--limit must be at least 1")
    model.model_name_or_path = script.model or model.model_name_or_path
    return script, grpo, model


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def rows(suite: Suite, limit: int | None = None) -> dict[str, list[Any]]:
    """TRL's dataset columns: RLPF's chat prompt and the task id the reward looks up."""
    tasks = suite.tasks[:limit] if limit else suite.tasks
    return {"prompt": [rlpf_messages(t) for t in tasks], "task_id": [t.id for t in tasks]}


def reward_params(script: PerfgymArguments) -> dict[str, float]:
    return {"alpha_f": script.alpha_f, "alpha_r": script.alpha_r} if script.reward == "rlpf" else {}


def lora_config(model: Any) -> Any:
    """ModelConfig's LoRA as PEFT takes it ('all-linear' is PEFT's shorthand, a string)."""
    if not model.use_peft:
        return None
    from peft import LoraConfig

    targets = model.lora_target_modules
    if targets == ["all-linear"]:
        targets = "all-linear"
    return LoraConfig(r=model.lora_r, lora_alpha=model.lora_alpha, target_modules=targets,
                      lora_dropout=model.lora_dropout, task_type=model.lora_task_type,
                      bias="none", use_rslora=model.use_rslora,
                      use_dora=model.use_dora)  # fmt: skip


def dataset(script: PerfgymArguments, suite: Suite) -> Any:
    from datasets import Dataset

    if script.dataset:
        data = Dataset.from_parquet(script.dataset)
        return data.select(range(min(script.limit, len(data)))) if script.limit else data
    return Dataset.from_dict(rows(suite.split(script.split), script.limit))


def build(script: PerfgymArguments, grpo: Any, model: Any, funcs: list[Any]) -> Any:
    """The real GRPOTrainer: model loaded (in the machine's dtype), reward functions, dataset."""
    from trl import GRPOTrainer

    if not model.model_name_or_path:
        raise ConfigError("--model (or --model_name_or_path) is required")
    kwargs = {"revision": model.model_revision, "dtype": model.dtype,
              "attn_implementation": model.attn_implementation,
              **(grpo.model_init_kwargs or {})}  # fmt: skip
    grpo.model_init_kwargs = {k: v for k, v in kwargs.items() if v is not None}
    data = dataset(script, funcs[0].scorer.suite)
    try:
        return GRPOTrainer(model=model.model_name_or_path, reward_funcs=funcs, args=grpo,
                           train_dataset=data, peft_config=lora_config(model))  # fmt: skip
    except (ValueError, OSError) as exc:  # a model that is not there, a batch G does not divide
        raise ConfigError(one_line(exc)) from exc


def setup(script: PerfgymArguments, grpo: Any, model: Any, trainer: Any) -> dict[str, Any]:
    """What --dry_run prints: the dataset, the reward, the trainer as built, the LoRA."""
    peft = lora_config(model)
    params = sum(p.numel() for p in trainer.model.parameters())
    trainable = sum(p.numel() for p in trainer.model.parameters() if p.requires_grad)
    scorer = trainer.reward_funcs[0].scorer
    return {
        "suite": scorer.suite.name, "split": script.split, "dataset": script.dataset,
        "prompts": len(trainer.train_dataset), "reward": repr(scorer.reward),
        "backend": script.backend, "reward_funcs": [f.__name__ for f in trainer.reward_funcs],
        "model": {"name": model.model_name_or_path, "dtype": str(trainer.model.dtype),
                  "device": str(trainer.model.device), "parameters": params,
                  "trainable": trainable},
        "grpo": {k: getattr(grpo, k) for k in (
            "output_dir", "num_generations", "per_device_train_batch_size",
            "max_completion_length", "scale_rewards", "loss_type", "learning_rate",
            "num_train_epochs", "max_steps", "bf16", "fp16", "use_cpu", "use_vllm",
            "logging_steps", "report_to")} | {"device": str(grpo.device)},
        "lora": None if peft is None else {"r": peft.r, "lora_alpha": peft.lora_alpha,
                                           "target_modules": model.lora_target_modules},
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    script, grpo, model = parse(argv)
    suite = load_suite(script.suite)
    funcs = reward_funcs(suite, script.reward, backend=script.backend,
                         reward_params=reward_params(script), url=script.url, token=script.token,
                         address=script.address, timeout_s=script.reward_timeout)  # fmt: skip
    try:
        trainer = build(script, grpo, model, funcs)
        if script.dry_run:
            print(json.dumps(setup(script, grpo, model, trainer), indent=2, default=str))
            return 0
        trainer.train(resume_from_checkpoint=grpo.resume_from_checkpoint)
        trainer.save_model(grpo.output_dir)
        trainer.state.save_to_json(os.path.join(grpo.output_dir, "trainer_state.json"))
    finally:
        funcs[0].scorer.close()
    return 0


def run(argv: list[str] | None = None) -> int:
    """main(), with a configuration error as one line and exit status 2."""
    try:
        return main(argv)
    except PerfgymError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(run())
