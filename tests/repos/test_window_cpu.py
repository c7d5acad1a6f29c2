"""The workload timer's `window_cpu_s`: the CPU of the workload's processes over the counted
time (R -> H), whichever process did it (a thread, a reaped, live, undumpable, auto-reaped or
orphaned child) and whatever the run did after. Counted in CPU, so the
assertions hold on a loaded machine (a busy core stretches the wall, not the CPU)."""

from __future__ import annotations

from pathlib import Path

import pytest
from repo_cache import repo_cache_dir

from perfgym.repos.copy import make_copy
from perfgym.repos.runner import run_workload
from perfgym.repos.task import RepoTask, Workload
from perfgym.sandbox import cgroups

BURN = (
    "import os, threading, time\n"
    "def burn(s):\n"
    "    t = time.process_time()\n"
    "    while time.process_time() - t < s:\n"
    "        pass\n"
    "def burn_then_say(s, w):\n"  # a byte down the pipe once s seconds of CPU are spent
    "    burn(s)\n"
    "    os.write(w, b'x')\n"
)
# The call returns only once a helper has spent its CPU (a pipe, not a sleep: on a loaded
# machine a sleeping parent may return before a helper has run at all).
CASES = {
    # half the work in a forked child reaped inside the call: the reaper's cutime holds it
    "forked-child": "def work():\n    pid = os.fork()\n    if pid == 0:\n        burn(0.3)\n"
                    "        os._exit(0)\n    burn(0.05)\n    os.waitpid(pid, 0)\n    return 1\n",
    # a live child made undumpable first (its /proc files then belong to root)
    "undumpable-live-child": "def work():\n    r, w = os.pipe()\n    if os.fork() == 0:\n"
                             "        import ctypes\n        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)\n"
                             "        burn_then_say(0.3, w)\n        burn(10)\n        os._exit(0)\n"
                             "    os.read(r, 1)\n    return 1\n",
    # a child the kernel reaps itself (SIGCHLD ignored): no process's cutime ever holds it
    "auto-reaped-child": "import signal\ndef work():\n    signal.signal(signal.SIGCHLD, "
                         "signal.SIG_IGN)\n    r, w = os.pipe()\n    if os.fork() == 0:\n"
                         "        burn_then_say(0.3, w)\n        os._exit(0)\n"
                         "    os.read(r, 1)\n    return 1\n",
    # a grandchild orphaned at once: reaped by the sandbox's init
    "orphan": "def work():\n    r, w = os.pipe()\n    pid = os.fork()\n    if pid == 0:\n"
              "        if os.fork() == 0:\n            burn_then_say(0.3, w)\n"
              "            os._exit(0)\n        os._exit(0)\n"
              "    os.waitpid(pid, 0)\n    os.read(r, 1)\n    return 1\n",
    # a thread of the workload process
    "thread": "def work():\n    t = threading.Thread(target=burn, args=(0.3,))\n    t.start()\n"
              "    t.join()\n    return 1\n",
    # a child still running when the answer is ready: its CPU so far is its own
    "live-child": "def work():\n    r, w = os.pipe()\n    if os.fork() == 0:\n"
                  "        burn_then_say(0.3, w)\n        burn(10)\n        os._exit(0)\n"
                  "    os.read(r, 1)\n    return 1\n",
}
WORKLOAD = "import lib\n\ndef experiment():\n    return lib.work()\n"


@pytest.fixture()
def repo_cache(tmp_path: Path):
    with repo_cache_dir("window", "/var/tmp/perfgym-test-repos") as root:
        yield root


def _run(tmp_path: Path, lib: str, repeats: int = 0):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "lib.py").write_text(BURN + lib)
    (tmp_path / "wl.py").write_text(WORKLOAD)
    task = RepoTask(id="window", repo="repo", workloads=(Workload(name="w", script="wl.py"),),
                    folder=tmp_path)  # fmt: skip
    copy = make_copy(task.repo, folder=tmp_path)
    try:
        return run_workload(task, copy, task.workloads[0], repeats=repeats)
    finally:
        copy.remove()


@pytest.mark.parametrize("case", sorted(CASES))
def test_work_of_any_process_of_the_workload_in_the_counted_time_is_counted(
    tmp_path: Path, repo_cache: Path, case: str
) -> None:
    run = _run(tmp_path, CASES[case])
    assert run.ok, run.error
    if cgroups.detect() is not None:
        assert run.window_cpu_from == "cgroup", run
    elif case in ("auto-reaped-child", "orphan"):
        pytest.skip("without a cgroup, /proc cannot see a process nobody waited for")
    assert run.window_cpu_s is not None and run.window_cpu_s >= 0.2, run


def test_work_after_the_answer_is_not_in_the_window(tmp_path: Path, repo_cache: Path) -> None:
    # The first call is cheap; the two repeat calls (after H) burn 0.3 s each.
    lib = "CALLS = []\ndef work():\n    CALLS.append(1)\n    if len(CALLS) > 1:\n" \
          "        burn(0.3)\n    return 1\n"  # fmt: skip
    run = _run(tmp_path, lib, repeats=2)
    assert run.ok, run.error
    assert run.child_cpu_s >= 0.5, run  # the process did the work...
    assert run.window_cpu_s is not None and run.window_cpu_s < 0.2, run  # ...after the window


def test_the_timer_reads_only_a_run_cgroups_counter() -> None:
    """Outside a run cgroup of its own (a machine without cgroups, a systemd scope) the counter
    /proc/self/cgroup names holds other processes' CPU: the timer falls back to /proc."""
    import importlib.util

    from perfgym.repos.runner import TIMER

    spec = importlib.util.spec_from_file_location("workload_timer_under_test", TIMER)
    assert spec is not None and spec.loader is not None
    timer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(timer)
    v1 = "4:memory:/perfgym/run-7-0\n2:cpuacct:/perfgym/run-7-0\n1:cpu:/perfgym-run-7-0\n0::/\n"
    assert timer.counter_file(v1) == ("/sys/fs/cgroup/cpuacct/perfgym/run-7-0/cpuacct.usage", "v1")
    comounted = "3:cpu,cpuacct:/perfgym/run-7-0\n"
    assert timer.counter_file(comounted)[0] == (
        "/sys/fs/cgroup/cpu,cpuacct/perfgym/run-7-0/cpuacct.usage")
    assert timer.counter_file("0::/perfgym/run-7-0\n") == (
        "/sys/fs/cgroup/perfgym/run-7-0/cpu.stat", "v2")
    for elsewhere in ("2:cpuacct:/\n1:cpu:/\n0::/\n", "0::/user.slice/run-u5.scope\n", ""):
        assert timer.counter_file(elsewhere) is None, elsewhere
