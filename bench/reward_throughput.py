"""Reward throughput, measured in one run on this machine; prints ratios (figures last).

Judge + RLPF reward for a GRPO-sized batch (64 candidates x the task's tests and workloads) on
perfgym-core Python tasks, through
  (a) the local pool (`Judge`: warm sandbox, all cores, runs pinned one per core),
  (b) the service (`perfgym serve` on loopback, reward computed by the service),
  (c) Ray on this machine (a local cluster, one node actor),
  (d) a naive sequential harness: one fresh `python3` process per test and per timed run, no
      pooling, no isolation (what a hand-rolled reward function does); also as `naive-S`, the
      same with `python3 -S`, which skips the host's site-packages start-up hooks (a `.pth` on
      this project's VMs imports certifi: ~27 ms per start) as the sandbox does, so a reader
      sees the ratio a harness on a host without such hooks would give,
and prints candidates/s for each, per task and overall, and its ratio to (d). Targets: (a)
>= 5x (d); (b) and (c) within 25 % of (a). Every backend judges the same candidates with the
same settings; each backend gets its own distinct copy of them in every round (as an
RL step's rollouts are new), so no build cache answers for a run another backend paid for.
(a)-(c) are long-lived, as in a training run: warmed on a few candidates of every task before
the clock starts (sandboxes, workers, the reference's expected outputs).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Keep a locally started Ray cluster on loopback (must be set before ray is imported).
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

from targets import Target, at_least
from targets import report as report_targets

from perfgym.judge import Candidate, Judge, JudgeConfig, Stage, Verdict  # noqa: E402
from perfgym.judge.oracle import check  # noqa: E402
from perfgym.judge.verdict import TestResult, Timing  # noqa: E402
from perfgym.machine import describe  # noqa: E402
from perfgym.rewards import get_reward  # noqa: E402
from perfgym.sandbox.execution import Status  # noqa: E402
from perfgym.service.client import ServiceClient  # noqa: E402
from perfgym.service.config import ServiceConfig  # noqa: E402
from perfgym.service.models import RewardSpec  # noqa: E402
from perfgym.service.server.process import ServiceProcess  # noqa: E402
from perfgym.tasks import load_suite, materialize  # noqa: E402
from perfgym.tasks.task import Task  # noqa: E402

PY = os.path.realpath(sys.executable)


def batch(task: Task, n: int, labels: list[str] | None = None, tag: str = "") -> list[Candidate]:
    """n candidates cycling through the task's own solutions (those with `labels`, default
    all), each a distinct program (an assignment of its own, not a comment: the judge judges
    one program once, `perfgym.judge.twins`), so no cache anywhere can answer for another."""
    sols = [s for s in task.solutions() if not labels or s.label in labels]
    return [
        Candidate(task, source=f"{sols[k % len(sols)].source}\n_candidate = '{k} {tag}'\n",
                  model="bench", sample=k)
        for k in range(n)
    ]  # fmt: skip


# -- (d) the naive harness -----------------------------------------------------------------------
def _run(
    path: str, stdin: str, limit: float, flags: tuple[str, ...] = ()
) -> tuple[str | None, float]:
    t0 = time.perf_counter()
    try:
        p = subprocess.run(
            [PY, *flags, path], input=stdin, capture_output=True, text=True, timeout=limit
        )
    except subprocess.TimeoutExpired:
        return None, limit
    return (p.stdout if p.returncode == 0 else None), time.perf_counter() - t0


def naive(
    cands: list[Candidate], config: JudgeConfig, flags: tuple[str, ...] = ()
) -> list[Verdict]:
    """The same work as the judge (tests, workload output checks, `repeats` timed runs of every
    workload for each candidate, the baseline and the reference), one `python3 *flags` process
    per run."""
    task = cands[0].task
    limit = task.time_limit_s or config.time_limit_s
    tests = [materialize(task, t) for t in task.tests]
    workloads = [materialize(task, w) for w in task.workloads]
    tmp = Path(tempfile.mkdtemp(prefix="naive-"))

    def timing(path: str) -> Timing | None:
        totals = []
        for _ in range(config.repeats):
            total = 0.0
            for w in workloads:
                out, dt = _run(path, w.stdin, limit, flags)
                if out is None:
                    return None
                total += dt
            totals.append(total)
        return Timing(estimate_s=statistics.median(totals), samples_s=totals, clock="wall")

    refs = {}
    expected: dict[str, str | None] = {}
    for label, sol in (("baseline", task.baseline), ("reference", task.reference)):
        assert sol is not None
        path = tmp / f"{label}.py"
        path.write_text(sol.source)
        refs[label] = timing(str(path))
        if label == "reference":
            for w in workloads:
                expected[w.id] = _run(str(path), w.stdin, limit, flags)[0]
    verdicts = []
    for c in cands:
        path = tmp / f"c{c.sample}.py"
        path.write_text(c.source or "")
        stage, results = Stage.OK, []
        for case in tests + workloads:
            out, dt = _run(str(path), case.stdin, limit, flags)
            want = case.expected if case.expected is not None else expected.get(case.id)
            ok = out is not None and check(task.oracle, case, want, out)[0]
            results.append(TestResult(id=case.id, passed=ok, status=Status.OK, wall_s=dt))
            if not ok:
                stage = Stage.NR if out is None else Stage.WO
                break
        verdicts.append(Verdict(task_id=task.id, model=c.model, sample=c.sample, stage=stage,
                                language="python", tests=results,
                                candidate=timing(str(path)) if stage is Stage.OK else None,
                                baseline=refs["baseline"], reference=refs["reference"]))  # fmt: skip
    return verdicts


def startup(runs: int = 20) -> None:
    """Print what one interpreter start costs each side: the naive harness's host `python3`
    (which runs the host's site-packages start-up hooks) and a sandboxed one (which does not;
    docs/sandbox.md), interleaved, so a reader can tell how much of a ratio is start-up."""
    from perfgym.sandbox import make_sandbox

    host, boxed = [], []
    with make_sandbox() as sb:
        for _ in range(runs):
            t0 = time.perf_counter()
            subprocess.run([PY, "-c", "pass"], check=True)
            host.append(time.perf_counter() - t0)
            boxed.append(sb.run([PY, "-c", "pass"]).measurement.wall_s)
    print(f"interpreter start-up, median of {runs}: host python3 -c pass "
          f"{statistics.median(host) * 1e3:.1f} ms (naive harness, host start-up hooks run), "
          f"sandboxed {statistics.median(boxed) * 1e3:.1f} ms (hooks masked)", flush=True)  # fmt: skip


# -- the backends ----------------------------------------------------------------------------------
def run_judge(cands: list[Candidate], judge: Judge) -> list[float | None]:
    return get_reward("rlpf")(judge.judge_many(cands))


def run_ray(cands: list[Candidate], judge) -> list[float | None]:  # type: ignore[no-untyped-def]
    return get_reward("rlpf")(judge.judge_many(cands))


def run_service(cands: list[Candidate], client: ServiceClient) -> list[float | None]:
    from perfgym.service.client import judge_request

    view = client.judge_batch(judge_request(cands, job_id=f"bench-{time.time_ns()}",
                                            reward=RewardSpec(name="rlpf")))  # fmt: skip
    return [i.reward.value if i.reward else None for i in sorted(view.items, key=lambda i: i.index)]


DEFAULT_TASKS = ["py-lis-dp", "py-csv-groupby", "py-bfs-grid"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", nargs="*", default=DEFAULT_TASKS,
                    help="perfgym-core Python tasks (default: a DP, a parsing and a graph task).")  # fmt: skip
    ap.add_argument("--candidates", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument(
        "--skip", nargs="*", default=[], choices=["local", "service", "ray", "naive", "naive-S"]
    )
    ap.add_argument("--rounds", type=int, default=2, help="Interleaved rounds (median reported).")
    ap.add_argument("--solutions", nargs="*", default=None,
                    help="Cycle only these solution labels (e.g. reference: fast, correct runs).")  # fmt: skip
    ap.add_argument("--hidden", action="store_true",
                    help="Decide on hidden workloads, fresh per batch (training's default).")  # fmt: skip
    args = ap.parse_args()
    suite = load_suite("perfgym-core")
    tasks = [suite.get(t) for t in args.tasks]
    config = JudgeConfig(repeats=args.repeats, hidden_workloads=args.hidden)
    n = args.candidates
    seconds: dict[str, dict[str, list[float]]] = {}
    correct: dict[str, dict[str, int]] = {}
    runners: dict[str, object] = {}

    def timed(name: str, fn, r: int) -> None:  # type: ignore[no-untyped-def]
        for task in tasks:
            cands = batch(task, n, args.solutions, tag=f"{name} round {r}")
            t0 = time.perf_counter()
            rewards = fn(cands)
            took = time.perf_counter() - t0
            seconds.setdefault(name, {}).setdefault(task.id, []).append(took)
            good = sum(x is not None and x >= 0.15 for x in rewards)  # RLPF: correct >= floor
            correct.setdefault(name, {})[task.id] = good
            print(f"  {name:8s} {task.id:16s} {took:7.1f} s  ({good}/{n} scored as correct)",
                  flush=True)  # fmt: skip

    def warm(fn) -> None:  # type: ignore[no-untyped-def]
        for task in tasks:  # workers up, expected outputs known, before the clock starts
            fn(batch(task, 2, args.solutions, tag="warm-up"))

    print(f"reward throughput: {n} candidates per task on {', '.join(args.tasks)}, "
          f"repeats={args.repeats}, {describe()}", flush=True)  # fmt: skip
    startup()
    with contextlib.ExitStack() as stack:
        if "naive" not in args.skip:
            runners["naive"] = lambda b: get_reward("rlpf")(naive(b, config))
        if "naive-S" not in args.skip:
            runners["naive-S"] = lambda b: get_reward("rlpf")(naive(b, config, ("-S",)))
        if "local" not in args.skip:
            judge = stack.enter_context(Judge(config))
            runners["local"] = lambda b: run_judge(b, judge)
            warm(runners["local"])
        if "service" not in args.skip:
            state = Path(tempfile.mkdtemp(prefix="bench-service-"))
            svc_cfg = ServiceConfig(port=0, state_dir=str(state), judge=config, lease_size=64)
            svc = stack.enter_context(ServiceProcess(svc_cfg, log=state / "service.log"))
            client = stack.enter_context(ServiceClient(svc.url))
            runners["service"] = lambda b: run_service(b, client)
            warm(runners["service"])
        if "ray" not in args.skip:
            from perfgym.service.ray_backend import RayJudge

            rj = stack.enter_context(RayJudge(config))
            runners["ray"] = lambda b: run_ray(b, rj)
            warm(runners["ray"])
        # Interleaved rounds: on a shared machine the load drifts, and must hit all alike.
        for r in range(args.rounds):
            print(f"round {r + 1}/{args.rounds}, load average {os.getloadavg()[0]:.1f}", flush=True)
            for name, fn in runners.items():
                timed(name, fn, r)
    rates = report(seconds, correct, n, [t.id for t in tasks], args.rounds)
    return report_targets(targets(rates))


def targets(rates: dict[str, dict[str, float]]) -> list[Target]:
    """(a) local >= 5x the naive harness; (b) service and (c) Ray within 25 % of local
    (overall candidates/s); a backend skipped leaves its target out."""
    out = []
    local = rates.get("local", {}).get("overall")
    if local is not None and "naive" in rates:
        out.append(at_least("(a) local / naive harness", local / rates["naive"]["overall"], 5, "x"))
    for label, name in (("(b)", "service"), ("(c)", "ray")):
        if local is not None and name in rates:
            out.append(
                at_least(f"{label} {name} / local", rates[name]["overall"] / local, 0.75, "x")
            )
    return out


def report(seconds: dict[str, dict[str, list[float]]], correct: dict[str, dict[str, int]],
           n: int, task_ids: list[str], rounds: int) -> dict[str, dict[str, float]]:  # fmt: skip
    """Candidates/s per backend, per task and overall (median over rounds), and the ratios."""
    print(json.dumps({"candidates_per_task": n, "seconds": seconds, "correct": correct}))
    print(
        f"load average at the end {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus "
        "(others' work on a shared machine slows every backend alike only when interleaved)"
    )
    rates: dict[str, dict[str, float]] = {}
    for name, per_task in seconds.items():
        rates[name] = {t: n / statistics.median(v) for t, v in per_task.items()}
        totals = [sum(per_task[t][r] for t in task_ids) for r in range(rounds)]
        rates[name]["overall"] = n * len(task_ids) / statistics.median(totals)
    for scope in [*task_ids, "overall"]:
        print(f"-- {scope}")
        for name, by in rates.items():
            rate = by[scope]
            ratios = [f"{rate / ref:5.2f}x {other}" for other in ("naive", "naive-S", "local")
                      if (ref := rates.get(other, {}).get(scope))]  # fmt: skip
            print(f"   {name:8s} {rate:7.2f} candidates/s  " + "  ".join(ratios))
    return rates


if __name__ == "__main__":
    sys.exit(main())
