"""GRPO with TRL on perfgym's reward: RLPF's recipe by default, DMC-Optim's knobs as options.

RLPF (paper 000): G = 8 completions per prompt, LoRA rank 32 / alpha 64 on a frozen base,
completions up to 768 tokens, the rlpf reward with alpha_F = 0.16 and alpha_R = 0.10, runtime
measured once per training batch (evaluation takes the median of 3), five epochs.
DMC-Optim (paper 003, section 5): more rollouts per prompt and larger batches
(--num-generations, --prompts-per-step), returns centred without std normalisation
(--scale-rewards none), a percentile reward (--reward percentile_qp ...).

The reward is judged where --backend says: 'local' (this machine), 'service' (a `perfgym serve`
at --url, e.g. on the CPU machines beside a GPU box) or 'ray' (a cluster at --address).
--dry-run builds the dataset, the reward functions and the trainer's configuration, prints
them, and exits before loading any model (no GPU, nothing downloaded).

    python examples/train_grpo_trl.py --model Qwen/Qwen3-8B --backend service \\
        --url http://cpu-box:8321 --output-dir runs/rlpf
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from perfgym.errors import PerfgymError
from perfgym.tasks.suite import Suite, load_suite
from perfgym.train.prompt import rlpf_messages
from perfgym.train.trl import reward_funcs


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 1)[1])  # fmt: skip
    ap.add_argument("--model", help="A causal LM (hub name or local folder).")
    ap.add_argument("--suite", default="perfgym-core", help="A perfgym suite (name or path).")
    ap.add_argument("--split", default="train", help="The suite split to train on.")
    ap.add_argument("--dataset", help="A GRPO parquet file (prompt, task_id) instead of the split.")
    ap.add_argument("--reward", default="rlpf", help="A registered perfgym reward.")
    ap.add_argument("--alpha-f", type=float, default=0.16, help="rlpf: weight of FBR.")
    ap.add_argument("--alpha-r", type=float, default=0.10, help="rlpf: weight of RBR.")
    ap.add_argument("--backend", choices=["local", "service", "ray"], default="local")
    ap.add_argument("--url", help="--backend service: the perfgym serve URL.")
    ap.add_argument("--token", default=os.environ.get("PERFGYM_TOKEN"),
                    help="--backend service: its bearer token (default: $PERFGYM_TOKEN).")  # fmt: skip
    ap.add_argument("--address", help="--backend ray: the cluster address.")
    ap.add_argument("--reward-timeout", type=float, default=900.0,
                    help="Seconds one batch may take to judge before its rewards are None.")  # fmt: skip
    ap.add_argument("--num-generations", type=int, default=8, help="G, completions per prompt.")
    ap.add_argument("--prompts-per-step", type=int, default=4, help="Prompts per device step.")
    ap.add_argument("--max-completion-length", type=int, default=768)
    ap.add_argument("--scale-rewards", choices=["group", "batch", "none"], default="group",
                    help="TRL's std normalisation of advantages; DMC-Optim: none.")  # fmt: skip
    ap.add_argument("--loss-type", default="dapo", help="TRL's loss_type (dapo, grpo, dr_grpo...).")
    ap.add_argument("--lora-rank", type=int, default=32)
    ap.add_argument("--lora-alpha", type=int, default=64)
    ap.add_argument("--learning-rate", type=float, default=1e-5)
    ap.add_argument("--epochs", type=float, default=5.0)
    ap.add_argument("--use-vllm", action="store_true", help="Generate with vLLM (TRL's option).")
    ap.add_argument("--output-dir", default="runs/grpo-perfgym")
    ap.add_argument("--dry-run", action="store_true", help="Print the setup and exit.")
    args = ap.parse_args(argv)
    if not args.dry_run and not args.model:
        ap.error("--model is required (or --dry-run)")
    return args


def rows(suite: Suite) -> dict[str, list[Any]]:
    """TRL's dataset columns: RLPF's chat prompt and the task id the reward looks up."""
    return {"prompt": [rlpf_messages(t) for t in suite.tasks],
            "task_id": [t.id for t in suite.tasks]}  # fmt: skip


def reward_params(args: argparse.Namespace) -> dict[str, float]:
    return {"alpha_f": args.alpha_f, "alpha_r": args.alpha_r} if args.reward == "rlpf" else {}


def trainer_settings(args: argparse.Namespace) -> dict[str, Any]:
    per_step = args.prompts_per_step * args.num_generations
    return {"output_dir": args.output_dir, "num_generations": args.num_generations,
            "per_device_train_batch_size": per_step,
            "max_completion_length": args.max_completion_length,
            "scale_rewards": args.scale_rewards, "loss_type": args.loss_type,
            "learning_rate": args.learning_rate, "num_train_epochs": args.epochs,
            "use_vllm": args.use_vllm, "logging_steps": 1, "log_completions": True,
            "bf16": True, "report_to": "none"}  # fmt: skip


def lora_settings(args: argparse.Namespace) -> dict[str, Any]:
    return {"r": args.lora_rank, "lora_alpha": args.lora_alpha, "target_modules": "all-linear",
            "task_type": "CAUSAL_LM"}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    suite = load_suite(args.suite)
    train = suite if args.dataset else suite.split(args.split)
    funcs = reward_funcs(suite, args.reward, backend=args.backend,
                         reward_params=reward_params(args), url=args.url, token=args.token,
                         address=args.address,
                         timeout_s=args.reward_timeout)  # fmt: skip
    columns = rows(train)
    if args.dry_run:
        print(json.dumps({"suite": suite.name, "split": args.split, "dataset": args.dataset,
                          "prompts": len(columns["prompt"]),
                          "reward": repr(funcs[0].scorer.reward), "backend": args.backend,
                          "reward_funcs": [f.__name__ for f in funcs],
                          "grpo": trainer_settings(args), "lora": lora_settings(args)},
                         indent=2))  # fmt: skip
        funcs[0].scorer.close()
        return 0
    from datasets import Dataset
    from peft import LoraConfig
    from trl import GRPOConfig, GRPOTrainer

    data = Dataset.from_parquet(args.dataset) if args.dataset else Dataset.from_dict(columns)
    trainer = GRPOTrainer(model=args.model, reward_funcs=funcs, train_dataset=data,
                          args=GRPOConfig(**trainer_settings(args)),
                          peft_config=LoraConfig(**lora_settings(args)))  # fmt: skip
    try:
        trainer.train()
        trainer.save_model(args.output_dir)
    finally:
        funcs[0].scorer.close()
    return 0


def run(argv: list[str] | None = None) -> int:
    """main(), with a configuration error as one line and exit status 2."""
    try:
        return main(argv)
    except PerfgymError as exc:
        print(f"train_grpo_trl: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(run())
