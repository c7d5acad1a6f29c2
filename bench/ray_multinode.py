"""The same GRPO-sized batch on the local judge, 1-node Ray and 2-node Ray on this machine, then on
2-node Ray with the worker node killed at 50 %; prints targets met/missed (exit 1 on a miss).

The batch: `--prompts` prompts x `--per-prompt` completions (default 64 x 8 = 512), each prompt
a distinct task (its own baseline and reference measured, as distinct prompts of a step would
be), each completion a distinct program. `--suite small` (default): a small Python stdio task
(sum n integers; 3 tests, one 20,000-integer workload) with completions cycling fast, slow,
wrong and crashing, so the batch measures scheduling, not the programs; `--suite core`: copies
of perfgym-core's Python tasks cycling their own solutions (~4 core-s per completion here). The Ray clusters are Ray's own multi-node test facility
(`perfgym.service.ray_local.LocalCluster`), each node on its own cores; every backend is warmed
on one prompt before the clock starts.

Figures: wall; the floor (the sandboxed runs' own seconds, from the local verdicts, over the
cores: no scheduler can beat it); wall / floor; Ray's added seconds per task (prompt) against
the local judge. With a node killed: completions scored, infra failures, lost and duplicated
candidates, tasks judged on two nodes, and verdicts taken from the lost node (only those it
finished before it was lost may be). Targets: 0 lost, 0 duplicated, 0 infra failures, every
task on one node, and the batch finishes.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from collections import Counter

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # loopback only

from targets import holds, report  # noqa: E402

from perfgym.judge import Candidate, Judge, JudgeConfig, Verdict  # noqa: E402
from perfgym.sandbox.pool import usable_cores  # noqa: E402
from perfgym.tasks import load_suite  # noqa: E402
from perfgym.tasks.task import Task  # noqa: E402

SUM = "import sys\nd = sys.stdin.read().split()\nprint(sum(map(int, d[1:])))\n"
SLOW = (
    "import sys\nd = sys.stdin.read().split()\nt = 0\nfor x in d[1:]:\n    t += int(x)\nprint(t)\n"
)
SMALL_MIX = [SUM, SLOW, "print(0)\n", "raise SystemExit(3)\n"]
SUITE = "small"


def small_task(k: int) -> Task:
    from perfgym.tasks.task import Language, Oracle, Solution, TaskKind, TestCase

    big = " ".join(str(i % 997) for i in range(20000))
    return Task(id=f"sum~{k}", family="parsing", language=Language.PYTHON, kind=TaskKind.STDIO,
                goal="Print the sum of n integers.", baseline=Solution(label="baseline", source=SLOW),
                references=[Solution(label="reference", source=SUM)],
                tests=[TestCase(id=f"t{i}", stdin=f"3\n{i} 2 3\n", expected=str(i + 5))
                       for i in range(3)],
                workloads=[TestCase(id="w1", stdin=f"20000\n{big}\n")],
                oracle=Oracle(kind="tokens"))  # fmt: skip


def prompts(n: int) -> list[Task]:
    if SUITE == "small":
        return [small_task(k) for k in range(n)]
    py = [t for t in load_suite("perfgym-core").tasks if t.language.value == "python"]
    return [py[k % len(py)].model_copy(update={"id": f"{py[k % len(py)].id}~{k}"})
            for k in range(n)]  # fmt: skip


def batch(tasks: list[Task], per: int, tag: str) -> list[Candidate]:
    out = []
    for t in tasks:
        sols = SMALL_MIX if SUITE == "small" else [s.source for s in t.solutions()]
        for k in range(per):
            src = f"{sols[k % len(sols)]}\n_candidate = '{k} {tag}'\n"
            out.append(Candidate(t, source=src, model="bench", sample=k))
    return out


def floor_s(verdicts: list[Verdict], cores: int) -> float:
    """The sandboxed runs' own seconds over the cores: tests, then every timed sample (the
    baseline's and reference's once per task)."""
    total, seen = 0.0, set()
    for v in verdicts:
        total += sum(t.wall_s or 0.0 for t in v.tests)
        roles = [v.candidate] + ([] if v.task_id in seen else [v.baseline, v.reference])
        seen.add(v.task_id)
        total += sum(sum(t.samples_s) for t in roles if t is not None)
    return total / cores


def essence(v: Verdict) -> tuple[object, ...]:
    """What two backends must agree on (the sources differ: each backend's copies are its own)."""
    return (v.task_id, v.sample, v.stage, v.detail, v.infra_error, [t.passed for t in v.tests])


def nodes_per_task(verdicts: list[Verdict]) -> int:
    by: dict[str, set[str]] = {}
    for v in verdicts:
        by.setdefault(v.task_id, set()).add(v.machine)
    return max(len(m) for m in by.values())


def on_cluster(nodes: int, tasks: list[Task], per: int, config: JudgeConfig,
               kill_at: float | None = None) -> dict[str, object]:  # fmt: skip
    import ray

    from perfgym.service.ray_backend import RayJudge
    from perfgym.service.ray_local import LocalCluster

    with LocalCluster(nodes=nodes) as cluster:
        ray.init(address=cluster.address, log_to_driver=False, configure_logging=False,
                 namespace="perfgym")  # fmt: skip
        try:
            with RayJudge(config, chunk_size=per) as judge:
                warm = prompts(nodes)
                judge.judge_many(batch(warm, 2, "warm"))  # each node's actor, pools, caches
                cands = batch(tasks, per, f"ray{nodes}{kill_at}")
                lost: dict[str, object] = {}
                fired, finished = threading.Event(), threading.Event()
                result: dict[str, object] = {}

                def progress(done: int, total: int) -> None:
                    if kill_at is not None and done >= kill_at * total:
                        fired.set()

                def run() -> None:
                    try:
                        result["verdicts"] = judge.judge_many(cands, progress=progress)
                    finally:
                        result["wall"] = time.perf_counter() - t0
                        finished.set()

                t0 = time.perf_counter()
                batch_thread = threading.Thread(target=run)
                batch_thread.start()
                while not finished.wait(0.05):
                    if fired.is_set() and not lost:  # Ray adds nodes from the main thread only
                        victim = cluster.workers[0]
                        actor = judge.cluster._actors.get(victim.node_id)
                        if actor is not None:
                            lost["machine"] = ray.get(actor.info.remote())["machine"]
                        lost["at"] = time.perf_counter() - t0
                        cluster.remove_node(victim)
                        cluster.add_node(1)  # and one comes back
                batch_thread.join()
                got, wall = result["verdicts"], float(result["wall"])  # type: ignore[arg-type]
                retried = judge.retried
        finally:
            ray.shutdown()
    return {"wall": wall, "verdicts": got, "cands": cands, "lost": lost, "retried": retried}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=64)
    ap.add_argument("--per-prompt", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--suite", choices=["small", "core"], default="small")
    ap.add_argument("--json", default=None, help="Also write the figures here.")
    args = ap.parse_args()
    global SUITE
    SUITE = args.suite
    cores = len(usable_cores())
    config = JudgeConfig(repeats=args.repeats)
    tasks = prompts(args.prompts)
    n = args.prompts * args.per_prompt
    print(f"{n} completions ({args.prompts} {args.suite} prompts x {args.per_prompt}), "
          f"{cores} cores", flush=True)  # fmt: skip

    with Judge(config) as local:
        local.judge_many(batch(prompts(1), 2, "warm"))
        t0 = time.perf_counter()
        base = local.judge_many(batch(tasks, args.per_prompt, "local"))
        local_wall = time.perf_counter() - t0
    floor = floor_s(base, cores)
    figures: dict[str, object] = {"completions": n, "cores": cores, "floor_s": floor}
    print(f"floor {floor:.1f} s; local {local_wall:.1f} s ({local_wall / floor:.2f}x floor, "
          f"{local_wall * cores / n * 1e3:.0f} core-ms per completion)", flush=True)  # fmt: skip
    figures["local_s"] = local_wall
    ok = True
    for nodes in (1, 2):
        r = on_cluster(nodes, tasks, args.per_prompt, config)
        wall = float(r["wall"])  # type: ignore[arg-type]
        got: list[Verdict] = r["verdicts"]  # type: ignore[assignment]
        same = sum(essence(a) == essence(b) for a, b in zip(got, base, strict=True))
        per_task = (wall - local_wall) / args.prompts
        print(f"ray {nodes} node(s): {wall:.1f} s ({wall / floor:.2f}x floor, "
              f"{wall / local_wall:.2f}x local), Ray adds {per_task * 1e3:+.0f} ms per task; "
              f"verdicts as local's {same}/{n}; nodes per task {nodes_per_task(got)}", flush=True)  # fmt: skip
        figures[f"ray{nodes}_s"] = wall
        figures[f"ray{nodes}_added_ms_per_task"] = per_task * 1e3
        figures[f"ray{nodes}_same_as_local"] = same
        ok &= nodes_per_task(got) == 1
    r = on_cluster(2, tasks, args.per_prompt, config, kill_at=0.5)
    got = r["verdicts"]  # type: ignore[assignment]
    cands: list[Candidate] = r["cands"]  # type: ignore[assignment]
    want = Counter((c.task.id, c.sample) for c in cands)
    have = Counter((v.task_id, v.sample) for v in got)
    lost_n = sum((want - have).values())
    dup = sum((have - want).values())
    infra = sum(v.infra_error for v in got)
    scored = sum(not v.infra_error for v in got)
    machine = r["lost"].get("machine")  # type: ignore[attr-defined]
    from_lost = sum(v.machine == machine for v in got)
    split = nodes_per_task(got)
    print(f"ray 2 nodes, worker killed at 50 % (and one added back): {float(r['wall']):.1f} s; "  # type: ignore[arg-type]
          f"scored {scored}/{n}, infra failures {infra}, lost {lost_n}, duplicated {dup}, "
          f"tasks retried {r['retried']}, nodes per task {split}, verdicts from the lost node "
          f"{from_lost} (finished before it was lost)", flush=True)  # fmt: skip
    figures.update({"kill_s": r["wall"], "kill_scored": scored, "kill_infra": infra,
                    "kill_lost": lost_n, "kill_duplicated": dup, "kill_retried": r["retried"],
                    "kill_from_lost_node": from_lost})  # fmt: skip
    targets = {"0 lost": lost_n == 0, "0 duplicated": dup == 0, "0 infra failures": infra == 0,
               "every task on one node": ok and split == 1, "node killed": machine is not None}  # fmt: skip
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=1, default=str)
    return report([holds(name, met) for name, met in targets.items()])


if __name__ == "__main__":
    sys.exit(main())
