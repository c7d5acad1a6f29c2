"""Service test helpers: a function task, programs, and finding a service's worker processes."""

from __future__ import annotations

import json
import os

from perfgym.tasks.task import Language, Oracle, Solution, Task, TaskKind, TestCase

ADD = "def add(a, b):\n    return a + b\n"


def add_task(task_id: str = "add") -> Task:
    """A Python FUNCTION task: cheap enough to judge thousands of times."""
    return Task(
        id=task_id,
        family="arith",
        language=Language.PYTHON,
        kind=TaskKind.FUNCTION,
        entry_point="add",
        goal="Return a + b.",
        baseline=Solution(label="baseline", source=ADD),
        references=[Solution(label="reference", source=ADD)],
        tests=[TestCase(id="t1", args=[1, 2], expected=3)],
        workloads=[TestCase(id="w1", args=[5, 6])],
        oracle=Oracle(kind="exact"),
    )


def task_json(task: Task) -> dict:
    return json.loads(task.model_dump_json())


def sleeper(seconds: float) -> str:
    return f"import time, sys\ntime.sleep({seconds})\nd = sys.stdin.read().split()\nprint(sum(map(int, d[1:])))\n"


def children(pid: int) -> list[int]:
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(name))
    return out


def descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        for c in children(todo.pop()):
            found.append(c)
            todo.append(c)
    return found


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def worker_pids(service_pid: int) -> list[int]:
    return [p for p in children(service_pid) if "perfgym.service.workers.worker_main" in cmdline(p)]


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""


def uid_of(pid: int) -> int | None:
    """The real uid of a process, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("Uid:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def kill_if_root(pid: int) -> bool:
    """SIGKILL `pid` only while it has uid 0 (one of perfgym's own processes, never a
    program's). It is stopped first, waited for until the kernel says it is stopped (the stop
    is asynchronous: a process still running could drop to the program's uid after the look),
    and its uid read again; a process that is no longer root is let go on (SIGCONT)."""
    import signal
    import time

    try:
        os.kill(pid, signal.SIGSTOP)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + 1.0
    while (state := _state(pid)) not in ("T", "t", "Z", "X", "") and time.monotonic() < deadline:
        time.sleep(0.0005)
    if state not in ("T", "t") or uid_of(pid) != 0:
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
        return False
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return False
    return True
