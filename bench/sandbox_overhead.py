"""Sandbox overhead, measured in one run on this machine; prints ratios (figures last).

(a) an isolated `python3 -S -c pass` through the warm sandbox (and a fresh bubblewrap per run)
    against the same command through a bare `subprocess.run`, interleaved; target <= 1.1x.
(b) warm Python worker calls/s on a trivial function with full per-call isolation (target
    >= 1,500/s on 2 cores, issue 31) and the ratio to a fresh isolated interpreter per call (>= 8x);
    and the floor of any fork-per-call design on these cores (`FLOOR`: no isolation at all).
(c) a `python3 -S` that reads 2 MiB of stdin: the warm sandbox (stdin handed over as a
    sealed memfd) against the same sandbox inlining stdin in its JSON spec (base64, as it did
    before) and a bare `subprocess.run`, interleaved.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

from targets import at_least, at_most, report

from perfgym.machine import describe
from perfgym.sandbox import BwrapSandbox, RunRequest, SandboxPool, WarmSandbox
from perfgym.sandbox.pyworker import PythonWorkerPool

PY = os.path.realpath(sys.executable)
CMD = [PY, "-S", "-c", "pass"]
FUNC = "def add(a, b):\n    return a + b\n"


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def spawn_overhead(reps: int) -> dict[str, float]:
    """(a): the warm sandbox against bare runs interleaved with it; then, in a phase of its own,
    a fresh bubblewrap per run against bare runs interleaved with that. A fresh bubblewrap's
    teardown (its namespaces and mounts, finished by the kernel after the process is gone)
    holds locks the next run's mounts need, so interleaving it with the warm runs would charge
    the warm sandbox for the cold one's cleanup."""
    warm, cold = WarmSandbox(), BwrapSandbox()
    for _ in range(3):  # warm-up: launcher start, page cache
        warm.run(CMD)
        cold.run(CMD)
        subprocess.run(CMD, check=True)
    bare, w = [], []
    for _ in range(reps):  # interleaved so drift hits both alike
        bare.append(timed(lambda: subprocess.run(CMD, check=True)))
        w.append(timed(lambda: warm.run(CMD)))
    bare_c, c = [], []
    for _ in range(max(10, reps // 3)):
        bare_c.append(timed(lambda: subprocess.run(CMD, check=True)))
        c.append(timed(lambda: cold.run(CMD)))
    warm.close()
    cold.close()
    ratios = [wi / bi for wi, bi in zip(w, bare, strict=True)]
    return {
        "bare_median_ms": statistics.median(bare) * 1e3,
        "warm_median_ms": statistics.median(w) * 1e3,
        "bwrap_median_ms": statistics.median(c) * 1e3,
        "warm_vs_bare": statistics.median(w) / statistics.median(bare),
        "warm_vs_bare_paired_median": statistics.median(ratios),
        "bwrap_vs_bare": statistics.median(c) / statistics.median(bare_c),
    }


def stdin_overhead(reps: int, size: int = 2 << 20) -> dict[str, float]:
    """(c): a program that reads `size` bytes of stdin, through the memfd hand-over and inline."""
    data = bytes(range(256)) * (size // 256)
    cmd = [PY, "-S", "-c", "import sys; sys.stdin.buffer.read()"]
    by_fd, inline = WarmSandbox(), WarmSandbox()
    inline.stdin_by_fd = False
    for _ in range(3):
        by_fd.run(cmd, stdin=data)
        inline.run(cmd, stdin=data)
    bare, fd_s, inline_s = [], [], []
    for _ in range(reps):
        bare.append(timed(lambda: subprocess.run(cmd, input=data, check=True)))
        fd_s.append(timed(lambda: by_fd.run(cmd, stdin=data)))
        inline_s.append(timed(lambda: inline.run(cmd, stdin=data)))
    by_fd.close()
    inline.close()
    return {
        "stdin_bytes": len(data),
        "bare_median_ms": statistics.median(bare) * 1e3,
        "memfd_median_ms": statistics.median(fd_s) * 1e3,
        "inline_median_ms": statistics.median(inline_s) * 1e3,
        "memfd_vs_bare": statistics.median(fd_s) / statistics.median(bare),
        "inline_vs_memfd": statistics.median(inline_s) / statistics.median(fd_s),
    }


def _usage(pool: PythonWorkerPool) -> dict[str, int]:
    """The pool's workers' cgroup counters summed (one any worker lacks is left out)."""
    # (a perfgym from before `PythonWorker.usage` has none: this bench also measures "before")
    each = [w.usage() if hasattr(w, "usage") else {} for w in pool.workers]
    return {
        k: sum(u[k] for u in each) for k in ("cpu_ns", "page_faults") if all(k in u for u in each)
    }


#: The floor of any design that forks a process per call from a warm interpreter: a parent with
#: the worker's preloaded modules forks a child per call, which runs the module's code, calls
#: the function and writes its JSON result to a pipe; no sandbox, no isolation, no metering.
FLOOR = """
import builtins, json, marshal, os, sys, time, gc
import bisect, collections, functools, heapq, itertools, math, operator, re, string, typing
code = marshal.dumps(compile(sys.argv[2], "solution.py", "exec"))
gc.freeze()
t = time.perf_counter()
for i in range(int(sys.argv[1])):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        ns = {"__name__": "solution", "__builtins__": builtins}
        exec(marshal.loads(code), ns)
        os.write(w, json.dumps({"value": ns["add"](i, 1)}).encode())
        os._exit(0)
    os.close(w)
    json.loads(os.read(r, 4096))
    os.close(r)
    os.waitpid(pid, 0)
print(time.perf_counter() - t)
"""


def fork_floor(calls: int, cores: int) -> float:
    """Calls/s of `FLOOR` in one process per core, all at once."""
    each = max(1, calls // cores)
    procs = [subprocess.Popen([PY, "-S", "-c", FLOOR, str(each), FUNC], stdout=subprocess.PIPE)
             for _ in range(cores)]  # fmt: skip
    took = [float(p.communicate()[0]) for p in procs]
    return each * cores / max(took)


def worker_throughput(calls: int, fresh_calls: int) -> dict[str, float]:
    cores = len(os.sched_getaffinity(0))
    with PythonWorkerPool(size=cores) as pool:
        pool.map([(FUNC, "add", [1, 2])] * (cores * 4))  # warm-up: compile cache
        before, host0 = _usage(pool), resource.getrusage(resource.RUSAGE_SELF)
        t = timed(lambda: pool.map([(FUNC, "add", [i, 1]) for i in range(calls)]))
        after, host1 = _usage(pool), resource.getrusage(resource.RUSAGE_SELF)
        sample = pool.call(FUNC, "add", [2, 3])
        restarted = pool.stats()["restarts"] > 0
        loop = getattr(pool.workers[0], "zygote_loop", "python")
    assert sample.value == 5, sample
    warm_rate = calls / t
    host_s = host1.ru_utime + host1.ru_stime - host0.ru_utime - host0.ru_stime
    # CPU and page faults per call, this host process and every process of the workers: what
    # a loaded machine stretches least (its time is the calls' and its tenants' alike).
    per_call = {
        f"{k}_per_call": (after[k] - before[k]) / calls
        for k in ("cpu_ns", "page_faults")
        if k in before and k in after and not restarted
    }
    cpu_us = per_call.get("cpu_ns_per_call", float("nan")) / 1e3 + host_s / calls * 1e6
    script = FUNC + "import sys\nprint(add(int(sys.argv[1]), 1))\n"
    sb = WarmSandbox()
    reqs = [RunRequest(command=[PY, "main.py", str(i)], files={"main.py": script.encode()})
            for i in range(fresh_calls)]  # fmt: skip
    with SandboxPool(sb, concurrency=cores) as p:
        p.run_many(reqs[:cores])
        t_fresh = timed(lambda: p.run_many(reqs))
    sb.close()
    fresh_rate = fresh_calls / t_fresh
    floor = fork_floor(calls, cores)
    return {
        "cores": cores,
        "zygote_loop": loop,
        "warm_calls_per_s": warm_rate,
        "fork_floor_calls_per_s": floor,
        "warm_vs_floor": warm_rate / floor,
        "cpu_us_per_call": cpu_us,
        "host_cpu_us_per_call": host_s / calls * 1e6,
        "worker_page_faults_per_call": per_call.get("page_faults_per_call", float("nan")),
        "fresh_interpreter_calls_per_s": fresh_rate,
        "warm_vs_fresh": warm_rate / fresh_rate,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reps", type=int, default=60)
    ap.add_argument("--calls", type=int, default=4000)
    ap.add_argument("--fresh-calls", type=int, default=200)
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--realtime",
        action="store_true",
        help="Run the bench (and so every process it starts: bare children, the sandbox "
        "launcher, supervisors, programs) under SCHED_FIFO, shielding both sides alike from "
        "other tenants' load on a shared machine (root only).",
    )
    args = ap.parse_args()
    if args.realtime:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
    a = spawn_overhead(args.reps)
    c = stdin_overhead(max(10, args.reps // 2))
    b = worker_throughput(args.calls, args.fresh_calls)
    result = {"machine": describe(), "args": vars(args), "spawn": a, "stdin": c, "workers": b}
    targets = [
        at_most("isolated-run overhead vs bare subprocess", a["warm_vs_bare"], 1.1, "x"),
        at_least("warm worker calls/s", b["warm_calls_per_s"], 1500),
        at_least("warm worker vs a fresh interpreter per call", b["warm_vs_fresh"], 8, "x"),
    ]
    if args.json:
        result["targets"] = [{"name": t.name, "met": t.met} for t in targets]
        print(json.dumps(result, indent=2))
        return 0 if all(t.met for t in targets) else 1
    print(f"machine: {result['machine']}; load average {os.getloadavg()[0]:.1f}; "
          f"scheduling {'SCHED_FIFO (--realtime)' if args.realtime else 'normal'}")  # fmt: skip
    print(f"(a) bare subprocess.run  median {a['bare_median_ms']:.2f} ms")
    print(f"    warm sandbox          median {a['warm_median_ms']:.2f} ms")
    print(f"    fresh bwrap per run   median {a['bwrap_median_ms']:.2f} ms "
          f"({a['bwrap_vs_bare']:.2f}x bare)")  # fmt: skip
    print(f"(c) {c['stdin_bytes'] >> 20} MiB stdin: bare {c['bare_median_ms']:.2f} ms, "
          f"warm (memfd) {c['memfd_median_ms']:.2f} ms, warm (inline) {c['inline_median_ms']:.2f} ms")  # fmt: skip
    print(
        f"(b) warm worker calls/s {b['warm_calls_per_s']:.0f} on {b['cores']} cores; "
        f"fresh isolated interpreter per call {b['fresh_interpreter_calls_per_s']:.0f}/s; "
        f"per call: {b['cpu_us_per_call']:.0f} us of CPU (host {b['host_cpu_us_per_call']:.0f}), "
        f"{b['worker_page_faults_per_call']:.0f} page faults in the workers; zygote loop "
        f"in {b['zygote_loop']}"
    )
    print(
        f"    floor of a fork per call (same preloads, no isolation, no metering): "
        f"{b['fork_floor_calls_per_s']:.0f} calls/s; the warm worker is "
        f"{b['warm_vs_floor']:.2f} of it"
    )
    print(
        f"RESULT isolated-run overhead: {a['warm_vs_bare']:.2f}x bare subprocess (target <= 1.1x)"
    )
    print(
        f"RESULT large stdin: warm sandbox {c['memfd_vs_bare']:.2f}x bare subprocess; "
        f"inlining it in the spec {c['inline_vs_memfd']:.2f}x the memfd hand-over"
    )
    print(
        f"RESULT warm worker: {b['warm_calls_per_s']:.0f} calls/s (target >= 1500), "
        f"{b['warm_vs_fresh']:.1f}x a fresh interpreter per call (target >= 8x)"
    )
    return report(targets)


if __name__ == "__main__":
    sys.exit(main())
