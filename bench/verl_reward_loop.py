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
and wall <= 2x the floor. Both sides judge on the same hidden workloads (`--hidden-seed`, as
`reward_kwargs.hidden_seed`), so a speed-up's two measurements are of the same inputs; with
training's protocol (one timed run each) a speed-up has no CI, so "within noise" is the ratio of
the two measurements inside (1 + band)^2, band the task baseline's A/A noise band (two single
runs of it land within 1 + band). Equal scores are a figure, not a target: a completion as fast
as the baseline or the reference sits on RLPF's beat-the-baseline/reference thresholds, where
two measurements of one program may fall either side (the verdict's noise band decides, not this
bench). The floor counts each task's baseline and reference once; the warmed workers measured
the first tasks' already. The machine's 1-minute load is sampled through both runs (`--json`
keeps it with every completion's two results). Run with `PYTHONPATH=src` (the Ray workers
inherit it).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import tempfile
import threading
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


class LoadSampler:
    """The machine's 1-minute load average every `every_s` seconds, by phase."""

    def __init__(self, every_s: float = 5.0) -> None:
        self.every_s, self.phase = every_s, "setup"
        self.samples: dict[str, list[float]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.setdefault(self.phase, []).append(os.getloadavg()[0])
            self._stop.wait(self.every_s)

    def summary(self, phase: str) -> str:
        xs = self.samples.get(phase) or [math.nan]
        return f"load {min(xs):.1f}-{max(xs):.1f} (median {statistics.median(xs):.1f})"

    def stop(self) -> None:
        self._stop.set()


def within_noise(a: float, b: float, band: float | None) -> bool | None:
    """Two single-run speed-ups of one program on the same inputs: their ratio inside
    (1 + band)^2 (each side's baseline and candidate moved by at most 1 + band). None: no band."""
    if band is None or math.isnan(a) or not b:
        return None
    return 1 / (1 + band) ** 2 <= a / b <= (1 + band) ** 2


def versions() -> dict[str, str]:
    from importlib.metadata import version

    out = {"python": platform.python_version()}
    for name in ("perfgym", "verl", "ray", "torch", "transformers"):
        try:
            out[name] = version(name)
        except Exception:  # noqa: BLE001 - a version we cannot read is recorded as such
            out[name] = "unknown"
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=128, help="groups of 8 completions")
    ap.add_argument("--nodes", type=int, default=2)
    ap.add_argument("--hidden-seed", type=int, default=31,
                    help="the hidden workloads' seed, the same on both sides")  # fmt: skip
    ap.add_argument("--json", type=Path, help="write figures, config and every completion here")
    ap.add_argument("--concurrent", action="store_true",
                    help="judge the local side at the same time as verl's (half the time on a "
                    "machine already oversubscribed; each side's wall then includes the other)")  # fmt: skip
    ap.add_argument("--timeout-s", type=float, default=4 * 3600,
                    help="one batch's bound, both sides (verl's `reward_kwargs.timeout_s`)")  # fmt: skip
    args = ap.parse_args()
    load = LoadSampler()
    import ray
    from transformers import AutoTokenizer
    from verl.experimental.reward_loop.reward_loop import RewardLoopManager

    from perfgym.service.ray_local import LocalCluster

    rows = completions(args.prompts, "bench")
    n, cores = len(rows), len(usable_cores())
    print(f"{n} completions ({args.prompts} perfgym-core Python prompts x 8), {cores} cores, "
          f"{args.nodes} Ray nodes, one reward-loop worker each", flush=True)  # fmt: skip
    kwargs = {"suite": "perfgym-core", "reward": "rlpf", "backend": "local", "window_s": 0.5,
              "max_batch": n, "reward_params": PARAMS, "hidden_seed": args.hidden_seed,
              "timeout_s": args.timeout_s}  # fmt: skip
    config = training_judge_config(hidden_seed=args.hidden_seed)
    local = BatchReward(load_suite("perfgym-core"), "rlpf", reward_params=PARAMS,
                        judge_config=config, timeout_s=args.timeout_s)  # fmt: skip
    side: dict[str, object] = {}

    def judge_locally() -> None:
        t0 = time.perf_counter()
        side["ref"] = local.score(rows, {"completions": [c for _, c in rows]})
        side["wall"] = time.perf_counter() - t0

    alongside = threading.Thread(target=judge_locally)
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
            load.phase = "verl"
            if args.concurrent:
                alongside.start()
            t0 = time.perf_counter()
            out = manager.compute_rm_score(data)
            wall = time.perf_counter() - t0
        finally:
            load.phase = "between"
            ray.shutdown()
    got = out.non_tensor_batch
    print(f"verl reward loop: {wall:.1f} s, {n / wall:.1f} completions/s; "
          f"{load.summary('verl')}", flush=True)  # fmt: skip

    with local:
        load.phase = "local"
        if args.concurrent:
            alongside.join()
        else:
            judge_locally()
        load.phase = "after"
        ref, local_wall = side["ref"], float(side["wall"])  # type: ignore[arg-type]
        verdicts = list(local.last_verdicts)
        floor = floor_s(verdicts, cores)
    load.stop()
    if len(verdicts) != n or floor <= 0:
        print(f"the local backend gave {len(verdicts)} verdicts for {n} completions "
              f"(infrastructure failure: see the warning above)", flush=True)  # fmt: skip
        return 1
    over = (wall - floor) / n
    print(f"local backend: {local_wall:.1f} s, {load.summary('local')}; floor {floor:.1f} s; "
          f"verl {wall / floor:.2f}x floor, local {local_wall / floor:.2f}x floor; verl's "
          f"overhead over the floor {over * 1000:.0f} ms per completion "
          f"({over * cores:.2f} core-s)", flush=True)  # fmt: skip

    returned = len(got["score"])
    stages = sum(got["stage"][i] == STAGES.get(r.stage or "", math.nan) for i, r in enumerate(ref))
    scores = sum(abs(got["score"][i] - (r.value or 0.0)) < 1e-9 for i, r in enumerate(ref))
    timed = [(got["speedup"][i], r.speedup) for i, r in enumerate(ref) if r.speedup]
    close = sum(1 / 2 <= a / b <= 2 for a, b in timed if not math.isnan(a))
    bands = [v.baseline.noise_band if v.baseline else None for v in verdicts]
    noise = [within_noise(float(got["speedup"][i]), r.speedup, bands[i])
             for i, r in enumerate(ref) if r.speedup]  # fmt: skip
    in_band = sum(x is True for x in noise)
    banded = sum(x is not None for x in noise)
    infra = int(sum(got["infra_error"]))
    print(f"returned {returned}/{n}; stages as local's {stages}/{n}; scores equal {scores}/{n}; "
          f"speedups within 2x {close}/{len(timed)}, within the baseline's noise band "
          f"{in_band}/{banded}; infra errors {infra}", flush=True)  # fmt: skip
    if args.json:
        per = [{"task": t, "kind": i % 8, "verl": {k: float(got[k][i]) for k in
                                                   ("score", "stage", "speedup", "infra_error")},
                "local": {"score": r.value, "stage": r.stage, "speedup": r.speedup,
                          "detail": str(verdicts[i].detail), "band": bands[i]}}
               for i, ((t, _), r) in enumerate(zip(rows, ref, strict=True))]  # fmt: skip
        figures = {"completions": n, "cores": cores, "nodes": args.nodes, "wall_s": wall,
                   "local_wall_s": local_wall, "floor_s": floor, "overhead_s_per_completion": over,
                   "returned": returned, "stages_equal": stages, "scores_equal": scores,
                   "speedups_timed": len(timed), "speedups_within_2x": close,
                   "speedups_within_band": in_band, "speedups_banded": banded,
                   "infra_errors": infra, "load": load.samples}  # fmt: skip
        record = {"config": {**vars(args), "reward_kwargs": kwargs,
                             "judge": config.model_dump(mode="json")},
                  "versions": versions(), "figures": figures, "completions": per}  # fmt: skip
        args.json.write_text(json.dumps(record, indent=1, default=str))
    return report_targets([
        holds("every completion scored once (0 lost, 0 duplicated)", returned == n),
        at_most("infra errors", infra, 0),
        holds("every stage as the local backend's", stages == n),
        at_least("speedups within 2x of the local backend's", close / max(len(timed), 1), 0.95),
        at_least("speedups within the baseline's noise band", in_band / max(banded, 1), 0.95),
        at_most("verl reward loop wall / floor", wall / floor, 2.0, "x"),
    ])  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
