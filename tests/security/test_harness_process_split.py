"""The attack surface of a Python harness task whose solution runs in a process of its own
(trailer_src/perfgym_guard.py, perfgym_solution_process.py; docs/security.md, section 6b).

The solution's process is the harness process's child, under the same uid, in the same
sandbox. What it could try, each through the real judge (sandbox on):

  test_the_solution_cannot_reach_the_harnesss_process      the parent's /proc/PID/mem (read and
      write), environ, maps, fds (its stdout, to write a line and a mark), ptrace attach,
      process_vm_readv and pidfd_getfd (the parent's stdout): every one refused (the harness process is non-dumpable), and the probe
      then kills the harness: NR, never OK.
  test_killing_the_harness_is_not_ok[SIGKILL, SIGTERM, SIGINT]   no work, the harness killed or
      interrupted at the first call: no end mark, never OK.
  test_a_reply_that_runs_code_when_unpickled_is_not_ok       the solution replaces its process's
      reply with a pickle whose __reduce__ would run `exec` in the harness's process (forging
      the harness module's json, sys and SystemExit, round 7's PY_MAIN_GLOBALS): the harness
      decodes replies naming no global but `complex`, so the reply is refused (NR).
  test_the_solution_writes_nothing_to_the_runs_stdout        a solution's print goes to the
      run's stderr: its forged line cannot stand before the harness's.

Run: PYTHONPATH=src python3 -m pytest -q -n0 tests/security/test_harness_process_split.py
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from perfgym.judge import Candidate, Judge, JudgeConfig, Stage
from perfgym.tasks import load_suite

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures/perfcodebench/executable_tasks"

#: Tries every way into its parent (the harness's process), says what it reached on stderr (the
#: last line of the run's stderr: it then kills the harness, which so writes nothing after).
PROBE = """import ctypes, os, signal, sys
def range_sums(values, queries):
    ppid, reached = os.getppid(), []
    for name, mode in (("mem", "rb"), ("mem", "r+b"), ("environ", "rb"), ("maps", "rb"),
                       ("fd/1", "ab"), ("fd/0", "rb")):
        try:
            with open(f"/proc/{ppid}/{name}", mode, buffering=0) as f:
                if "r" in mode and name != "mem":  # opened is reached
                    f.read(1)
            reached.append(name + ":" + mode)
        except OSError:
            pass
    try:
        os.listdir(f"/proc/{ppid}/fd")
        reached.append("fd-list")
    except OSError:
        pass
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.ptrace(16, ppid, 0, 0) == 0:  # PTRACE_ATTACH
        reached.append("ptrace")
    pidfd = libc.syscall(434, ppid, 0)  # pidfd_open (one number on every architecture)
    if pidfd >= 0 and libc.syscall(438, pidfd, 1, 0) >= 0:  # pidfd_getfd: its stdout
        reached.append("pidfd_getfd")
    class IOV(ctypes.Structure):
        _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
    buf = ctypes.create_string_buffer(64)
    with open("/proc/self/maps") as f:
        lo = int(f.readline().split("-")[0], 16)
    local, remote = IOV(ctypes.addressof(buf), 64), IOV(lo, 64)
    if libc.process_vm_readv(ppid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0) > 0:
        reached.append("process_vm_readv")
    sys.stderr.write("\\nPERFGYM-PROBE reached: %r\\n" % reached)
    sys.stderr.flush()
    os.kill(ppid, signal.SIGKILL)
    os._exit(0)
"""

#: No work: the harness's process is sent `SIG` at the first call.
KILL = """import os, signal, time
def range_sums(values, queries):
    os.kill(os.getppid(), signal.SIG)
    time.sleep(5)
    return [0] * len(queries)
"""

#: No work: its process's reply is replaced by a pickle that, loaded with pickle.loads, would run
#: round 7's forgery of the harness module's globals in the harness's process.
EVIL_REPLY = '''import builtins, os, pickle, sys
_FORGE = """import json as _json, sys as _sys, types as _types
_harness = _sys.modules["__main__"]
def _dumps(obj, *args, **kwargs):
    if isinstance(obj, dict) and "ok" in obj:
        obj = dict(obj, ok=True)
    return _json.dumps(obj, *args, **kwargs)
_harness.json = _types.SimpleNamespace(dumps=_dumps)
_fake_sys = _types.ModuleType("sys")
_fake_sys.__dict__.update(vars(_sys))
_fake_sys.exit = int
_harness.sys = _fake_sys
"""
class _Run:
    def __reduce__(self):
        return (builtins.exec, (_FORGE, {}))
def _send(what, value=None, kept=False):
    data = pickle.dumps((what, _Run() if what == "value" else value, False), 5)
    data = len(data).to_bytes(8, "little") + data
    os.write(4, data)
sys.modules["__main__"]._send = _send  # the solution process's own reply function
def range_sums(values, queries):
    return [0] * len(queries)
'''

#: Wrong (zeros), and prints a forged line of its own before the harness's.
PRINTS = """import sys
def range_sums(values, queries):
    print('{"ok": true, "elapsed_ns": 5000, "queries": 300}', flush=True)
    return [0] * len(queries)
"""

PROGRAMS = {
    "probe": PROBE,
    "evil_reply": EVIL_REPLY,
    "prints": PRINTS,
    **{f"kill_{s}": KILL.replace("SIG)", s + ")") for s in ("SIGKILL", "SIGTERM", "SIGINT")},
}


@pytest.fixture(scope="module")
def verdicts():
    # Not under pytest's tmp_path: its 0700 parents keep the sandbox's user out of the tasks.
    path = Path(tempfile.mkdtemp(prefix="perfgym-split-"))
    path.chmod(0o755)
    try:
        shutil.copytree(FIXTURES / "py_range_sums", path / "py_range_sums")
        task = load_suite(path).get("py_range_sums")
        names = [*PROGRAMS, "reference"]
        assert task.reference is not None
        cands = [Candidate(task, source=src, model=n) for n, src in PROGRAMS.items()]
        cands.append(Candidate(task, source=task.reference.source, model="honest"))
        with Judge(JudgeConfig(repeats=1)) as judge:
            yield dict(zip(names, judge.judge_many(cands), strict=True))
    finally:
        shutil.rmtree(path, ignore_errors=True)


def test_the_reference_is_ok(verdicts):
    assert verdicts["reference"].stage is Stage.OK, verdicts["reference"].reason


def test_the_solution_cannot_reach_the_harnesss_process(verdicts):
    v = verdicts["probe"]
    assert v.stage is Stage.NR, (v.stage, v.reason)
    assert "PERFGYM-PROBE reached: []" in v.reason, v.reason


@pytest.mark.parametrize("sig", ["SIGKILL", "SIGTERM", "SIGINT"])
def test_killing_the_harness_is_not_ok(verdicts, sig):
    v = verdicts[f"kill_{sig}"]
    assert v.stage is not Stage.OK, (v.stage, v.reason)


def test_a_reply_that_runs_code_when_unpickled_is_not_ok(verdicts):
    v = verdicts["evil_reply"]
    assert v.stage is not Stage.OK, (v.stage, v.harness_end_mark)
    assert "names builtins.exec" in v.reason, v.reason


def test_the_solution_writes_nothing_to_the_runs_stdout(verdicts):
    v = verdicts["prints"]
    assert v.stage is Stage.WO, (v.stage, v.reason)
    assert "forged" not in v.reason and "more than one" not in v.reason, v.reason
