"""verl's Ray reward loop (`RewardLoopManager`, real verl code) driving perfgym's reward on a
GRPO-sized batch; prints wall against the floor and agreement with the local backend.

The batch: `--prompts` x 8 completions (default 128 x 8 = 1,024) over perfgym-core's Python
tasks, each group a mixture: the reference (fast), the baseline (slow), a pool solution, a wrong
answer, a program that never ends, a reply without code; every completion a distinct program
(an assignment of its own), so no cache answers for another. The cluster is Ray's own multi-node
test facility (`LocalCluster`, two nodes on their own cores), one verl reward-loop worker per
node, each judging its half of the batch with perfgym's local backend on its node's cores; the
workers are warmed on a small batch before the clock starts (they live for a whole training run).

Figures: wall of `compute_rm_score`; the floor (the sandboxed runs' own seconds, from the local
verdicts of the same completions, over the cores); wall / floor; agreement with the local
backend (stages, speedups within 2x, scores); completions lost or duplicated. Targets: 0 lost,
0 duplicated, 0 infra errors, every stage as local's, >= 95 % of speedups within 2x of local's,
and wall <= 2x the floor. Equal scores are a figure, not a target: a completion as fast as the
baseline or the reference sits on RLPF's beat-the-baseline/reference thresholds, where two
measurements of one program may fall either side (the verdict's noise band decides, not this
bench). The floor counts each task's baseline and reference once; the warmed workers measured
the first tasks' already. Run with `PYTHONPATH=src` (the Ray workers inherit it).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # loopback only
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from ray_multinode import floor_s  # noqa: E402
from targets import at_least, at_most, holds  # noqa: E402
from targets import report as report_targets  # noqa: E402

from perfgym.sandbox.pool import usable_cores  # noqa: E402
from perfgym.tasks import load_suite  # noqa: E402
from perfgym.train.batch import BatchReward, training_judge_config  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "service"))
from test_verl_reward_loop import _tokenizer_dir, loop_config, rollout_batch  # noqa: E402

PARAMS = {"alpha_f": 0.16, "alpha_r": 0.10}
STAGES = {"OK": 4.0, "WO": 3.0, "NR": 2.0, "NC": 1.0, "NX": 0.0}


def completions(prompts: int, tag: str) -> list[tuple[str, str]]:
    """(task id, completion) for `prompts` groups of 8, cycling perfgym-core's Python tasks."""
    core = load_suite("perfgym-core")
    py = [t for t in core.tasks if t.language.value == "python"]
    rows = []
    for p in range(prompts):
        task = py[p % len(py)]
        pool = task.pool[0].source if task.pool else task.baseline.source
        mix = [task.references[0].source, task.baseline.source, pool, "print(0)\n",
               "while True:\n    pass\n", None, task.references[0].source, pool]  # fmt: skip
        for k, src in enumerate(mix):
            mark = f"_candidate = '{tag} {p} {k}'\n"
            text = f"No code, sorry ({mark})." if src is None else f"```python\n{src}\n{mark}```\n"
            rows.append((task.id, text))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=128, help="groups of 8 completions")
    ap.add_argument("--nodes", type=int, default=2)
    args = ap.parse_args()
    import ray
    from transformers import AutoTokenizer
    from verl.experimental.reward_loop.reward_loop import RewardLoopManager

    from perfgym.service.ray_local import LocalCluster

    rows = completions(args.prompts, "bench")
    n, cores = len(rows), len(usable_cores())
    print(f"{n} completions ({args.prompts} perfgym-core Python prompts x 8), {cores} cores, "
          f"{args.nodes} Ray nodes, one reward-loop worker each", flush=True)  # fmt: skip
    kwargs = {"suite": "perfgym-core", "reward": "rlpf", "backend": "local", "window_s": 0.5,
              "max_batch": n, "reward_params": PARAMS}  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp, LocalCluster(nodes=args.nodes) as cluster:
        ray.init(address=cluster.address, log_to_driver=False, configure_logging=False,
                 namespace="perfgym")  # fmt: skip
        try:
            texts = [c for _, c in completions(2, "tok")]
            tok_dir = _tokenizer_dir(texts, Path(tmp) / "tok")
            tok = AutoTokenizer.from_pretrained(tok_dir)
            manager = RewardLoopManager(loop_config(tok_dir, args.nodes, kwargs))
            warm = completions(args.nodes, "warm")
            manager.compute_rm_score(rollout_batch(tok, "perfgym-core", warm))
            data = rollout_batch(tok, "perfgym-core", rows)
            t0 = time.perf_counter()
            out = manager.compute_rm_score(data)
            wall = time.perf_counter() - t0
        finally:
            ray.shutdown()
    got = out.non_tensor_batch
    print(f"verl reward loop: {wall:.1f} s, {n / wall:.1f} completions/s", flush=True)

    with BatchReward(load_suite("perfgym-core"), "rlpf", reward_params=PARAMS,
                     judge_config=training_judge_config()) as local:  # fmt: skip
        t0 = time.perf_counter()
        ref = local.score(rows, {"completions": [c for _, c in rows]})
        local_wall = time.perf_counter() - t0
        floor = floor_s(local.last_verdicts, cores)
    print(f"local backend: {local_wall:.1f} s; floor {floor:.1f} s; verl {wall / floor:.2f}x "
          f"floor, local {local_wall / floor:.2f}x floor", flush=True)  # fmt: skip

    returned = len(got["score"])
    stages = sum(got["stage"][i] == STAGES.get(r.stage or "", math.nan) for i, r in enumerate(ref))
    scores = sum(abs(got["score"][i] - (r.value or 0.0)) < 1e-9 for i, r in enumerate(ref))
    timed = [(got["speedup"][i], r.speedup) for i, r in enumerate(ref) if r.speedup]
    close = sum(1 / 2 <= a / b <= 2 for a, b in timed if not math.isnan(a))
    infra = int(sum(got["infra_error"]))
    print(f"returned {returned}/{n}; stages as local's {stages}/{n}; scores equal {scores}/{n}; "
          f"speedups within 2x {close}/{len(timed)}; infra errors {infra}", flush=True)  # fmt: skip
    return report_targets([
        holds("every completion scored once (0 lost, 0 duplicated)", returned == n),
        at_most("infra errors", infra, 0),
        holds("every stage as the local backend's", stages == n),
        at_least("speedups within 2x of the local backend's", close / max(len(timed), 1), 0.95),
        at_most("verl reward loop wall / floor", wall / floor, 2.0, "x"),
    ])  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
