"""Issue 13, hole 2: time that cannot be hidden.

A program's CPU is counted for every process its run ever had (the run's cgroup), cross-checked
against the main process's rusage and wall x cores; a run that hides CPU (an auto-reaped child)
or leaves processes behind its main process is flagged and its timing degraded; a pinned run
cannot put any of its processes on another core. Every test runs real programs in the real
sandbox (and the real judge + reward for the "can a cheaper program score higher?" tests).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from perfgym.judge import Candidate, Judge, JudgeConfig
from perfgym.judge.verdict import Stage, TimingStatus
from perfgym.rewards import get_reward
from perfgym.sandbox.base import SandboxConfig
from perfgym.sandbox.bwrap import BwrapSandbox
from perfgym.sandbox.conformance import check_sandbox
from perfgym.sandbox.execution import Execution, Status
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.pool import usable_cores
from perfgym.sandbox.warm import WarmSandbox
from perfgym.tasks.native import load_task_dir

PY = os.path.realpath(sys.executable)
CORE = Path(__file__).resolve().parents[2] / "suites" / "perfgym-core"
WORK_S = 0.6  # CPU seconds of work the attack programs do (or hide)

# A Python program whose parent ignores SIGCHLD (its children are reaped by the kernel, so their
# CPU never reaches any wait4 rusage) and lets a forked child do the work; the parent only
# waits for the child's end on a pipe. Measured on d1bff82: 0.004 s CPU for ~WORK_S of work.
PY_SIG_IGN = f"""
import os, signal, time
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    t = time.process_time()
    while time.process_time() - t < {WORK_S}:
        pass
    print('child done', flush=True)
    os._exit(0)
os.close(w)
os.read(r, 1)
while True:  # until the kernel has reaped it: nothing is left when main exits
    try:
        os.kill(pid, 0)
        time.sleep(0.001)
    except ProcessLookupError:
        break
print('parent done')
"""

# The same in C, with SA_NOCLDWAIT on a real handler instead of SIG_IGN (also auto-reaps).
C_NOCLDWAIT = r"""
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static void on_chld(int s) { (void)s; }
static double cpu(void) {
    struct timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}
int main(void) {
    struct sigaction sa; memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_chld; sa.sa_flags = SA_NOCLDWAIT;
    sigaction(SIGCHLD, &sa, NULL);
    int p[2]; if (pipe(p)) return 1;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        volatile unsigned long x = 0; double t = cpu();
        while (cpu() - t < WORK) x++;
        printf("child done\n"); fflush(stdout); _exit(0);
    }
    close(p[1]);
    char c; while (read(p[0], &c, 1) < 0) {}
    while (kill(pid, 0) == 0) usleep(1000);
    printf("parent done\n");
    return 0;
}
""".replace("WORK", str(WORK_S))

# A middle process hides its child: main waits for the middle process (so the middle's own
# rusage is counted), but the middle ignores SIGCHLD, so the worker below it is auto-reaped.
PY_NESTED = f"""
import os, signal, time
pid = os.fork()
if pid == 0:
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    r, w = os.pipe()
    worker = os.fork()
    if worker == 0:
        os.close(r)
        t = time.process_time()
        while time.process_time() - t < {WORK_S}:
            pass
        os._exit(0)
    os.close(w)
    os.read(r, 1)
    while True:
        try:
            os.kill(worker, 0)
            time.sleep(0.001)
        except ProcessLookupError:
            break
    os._exit(0)
os.waitpid(pid, 0)
print('parent done')
"""

# A double-forked, setsid'd daemon that keeps running after the main process exits.
PY_DAEMON = """
import os, time
r, w = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.write(w, b'x')
        while True:
            pass
    os._exit(0)
os.wait()
os.read(r, 1)
time.sleep(0.05)
print('parent done')
"""

# Spinners that try to move themselves off the run's core (sched_setaffinity to every core),
# then report every core they were seen on.
PY_MOVER = """
import os, time
cores = set(range(os.cpu_count() or 1))
seen, moved = set(), []
def spin():
    try:
        os.sched_setaffinity(0, cores)
        moved.append(sorted(os.sched_getaffinity(0)))
    except OSError as e:
        moved.append(f'refused {e.errno}')
    t = time.monotonic()
    while time.monotonic() - t < 0.4:
        with open('/proc/self/stat') as f:
            seen.add(int(f.read().rsplit(')', 1)[1].split()[36]))
r, w = os.pipe()
kids = []
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        os.close(r)
        spin()
        os.write(w, repr((sorted(seen), moved)).encode() + b'\\n')
        os._exit(0)
    kids.append(pid)
os.close(w)
for pid in kids:
    os.waitpid(pid, 0)
print(os.read(r, 65536).decode().strip().replace('\\n', ' | '))
"""


@pytest.fixture(scope="module", params=["warm", "warm-fork", "bwrap"])
def sandbox(request):
    """Each local backend (warm-fork: the exec stub's Python fallback)."""
    if request.param == "bwrap":
        sb = BwrapSandbox()
    else:
        sb = WarmSandbox(SandboxConfig(exec_stub=request.param == "warm"))
    yield sb
    sb.close()


def _run_py(sb, code: str, **kw) -> Execution:
    return sb.run([PY, "prog.py"], files={"prog.py": code}, limits=Limits(wall_s=20), **kw)


def _check_flagged(ex: Execution, flag: str, work_s: float = WORK_S) -> None:
    assert ex.status is Status.OK, (ex.status, ex.reason, ex.stderr_text[-300:])
    m = ex.measurement
    assert m is not None
    # The hidden work is counted: the CPU figure is at least most of it (an order of
    # magnitude above the 0.004 s the original rusage-only clock reported).
    assert m.cpu_s >= 0.75 * work_s, (m.cpu_s, m.cpu_user_s, m.cpu_system_s, m.mechanisms["cpu"])
    assert flag in m.flags, (m.flags, m.cpu_s, m.mechanisms.get("cpu"))


@pytest.fixture(scope="module")
def cc_binary(tmp_path_factory):
    import shutil
    import subprocess

    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    d = tmp_path_factory.mktemp("hide")
    src = d / "hide.c"
    src.write_text(C_NOCLDWAIT)
    subprocess.run([cc, "-O1", "-o", str(d / "hide"), str(src)], check=True)
    return (d / "hide").read_bytes()


# -- the sandbox: hidden CPU is counted and flagged --------------------------------------------
def test_sig_ign_child_cpu_is_counted_and_flagged(sandbox):
    """Hole 2 itself: SIGCHLD ignored, a forked child does the work."""
    ex = _run_py(sandbox, PY_SIG_IGN)
    assert b"child done" in ex.stdout and b"parent done" in ex.stdout
    _check_flagged(ex, "hidden_cpu")


def test_sa_nocldwait_child_cpu_is_counted_c(sandbox, cc_binary):
    """Further attack: SA_NOCLDWAIT with a handler (not SIG_IGN), in C."""
    ex = sandbox.run(["./hide"], files={"hide": cc_binary}, limits=Limits(wall_s=20))
    assert b"parent done" in ex.stdout, ex.stderr_text
    _check_flagged(ex, "hidden_cpu")


def test_nested_auto_reaped_grandchild_is_counted(sandbox):
    """Further attack: the main process waits honestly; a middle process hides the worker."""
    ex = _run_py(sandbox, PY_NESTED)
    assert b"parent done" in ex.stdout
    _check_flagged(ex, "hidden_cpu")


def test_daemon_outliving_main_is_flagged(sandbox):
    """Further attack: a setsid'd double-forked daemon still running when main exits."""
    ex = _run_py(sandbox, PY_DAEMON)
    assert ex.status is Status.OK and b"parent done" in ex.stdout, ex.reason
    assert ex.measurement is not None
    assert "outlived_main" in getattr(ex.measurement, "flags", []), ex.measurement


PY_TAMPER = (
    """
import glob, os
paths = [l.split(':', 2) for l in open('/proc/self/cgroup').read().splitlines()]
done = []
for _h, ctrl, path in paths:
    for c in ctrl.split(','):
        base = f'/sys/fs/cgroup/{c}'
        for name, value in (('cpuacct.usage', '0'), ('cpu.stat', '0'), ('cpuset.cpus', '0-63')):
            try:
                with open(base + path + '/' + name, 'w') as f:
                    f.write(value)
                done.append(f'{c}:{name}')
            except OSError:
                pass
        for procs in glob.glob(base + '/cgroup.procs') + glob.glob(base + '/*/cgroup.procs'):
            try:
                with open(procs, 'w') as f:
                    f.write(str(os.getpid()))
                done.append(procs)
            except OSError:
                pass
print('TAMPERED', done, flush=True)
"""
    + PY_SIG_IGN
)


def test_cgroup_counter_and_membership_cannot_be_tampered(sandbox):
    """Further attack on the fix itself: reset the cgroup's CPU counter, widen its cpuset, or
    move to another cgroup before hiding the work. All refused (uid 65534, root-owned files)."""
    ex = _run_py(sandbox, PY_TAMPER, cpu=usable_cores()[0])
    assert "TAMPERED []" in ex.stdout_text, ex.stdout_text
    _check_flagged(ex, "hidden_cpu")


def test_honest_programs_are_not_flagged(sandbox):
    """A program that waits for its children, a threaded one and a plain one: no flag, and
    the CPU figure is not inflated (a flag would take a fair candidate's reward away)."""
    waits = (
        "import subprocess, sys\n"
        "subprocess.run([sys.executable, '-c', 'sum(range(3_000_000))'], check=True)\n"
    )
    threads = (
        "import threading\n"
        "ts = [threading.Thread(target=lambda: sum(range(2_000_000))) for _ in range(3)]\n"
        "[t.start() for t in ts]\n[t.join() for t in ts]\n"
    )
    for code in (waits, threads, "print(sum(range(1000)))\n"):
        ex = _run_py(sandbox, code)
        assert ex.status is Status.OK, ex.reason
        m = ex.measurement
        assert m is not None and m.flags == [], (code, m.flags, m.cpu_s, m.cpu_cgroup_s)
        rusage = m.cpu_user_s + m.cpu_system_s
        assert m.cpu_s <= rusage * 1.5 + 0.05, (m.cpu_s, rusage)


def test_mechanism_is_named(sandbox):
    ex = _run_py(sandbox, "pass\n")
    m = ex.measurement
    assert m is not None
    assert "cgroup" in m.mechanisms["cpu"] and "rusage" in m.mechanisms["cpu"], m.mechanisms


def test_without_cgroups_hidden_cpu_still_counted_and_said():
    """No cgroup: the fallback (rusage and sampled /proc of every process seen) still counts
    the hidden child, flags it, and the mechanism says which figure it is."""
    sb = WarmSandbox(SandboxConfig(use_cgroups=False))
    try:
        ex = _run_py(sb, PY_SIG_IGN)
        _check_flagged(ex, "hidden_cpu")
        assert ex.measurement is not None
        assert "no cgroup" in ex.measurement.mechanisms["cpu"], ex.measurement.mechanisms
    finally:
        sb.close()


# -- the measuring core is exclusive ---------------------------------------------------------------
@pytest.mark.skipif(len(usable_cores()) < 2, reason="needs two cores")
def test_pinned_run_cannot_move_to_another_core(sandbox):
    """With clock='wall', spinners on the other core slowed the baseline's and reference's
    concurrent runs; now a pinned run's processes cannot leave its core."""
    core = usable_cores()[-1]
    ex = _run_py(sandbox, PY_MOVER, cpu=core)
    assert ex.status is Status.OK, (ex.reason, ex.stderr_text[-300:])
    out = ex.stdout_text
    assert out.count(f"([{core}], ") == 2, out
    core_how = ex.measurement.mechanisms.get("core", "")
    assert "cpuset holding only core" in core_how, ex.measurement.mechanisms


@pytest.mark.alone
@pytest.mark.skipif(len(usable_cores()) < 2, reason="needs two cores")
def test_without_cpuset_a_pinned_run_leaving_its_core_is_flagged():
    """No cgroups (so no cpuset): the pin is sched_setaffinity only, the mechanism says so, and
    a run that moves two spinning processes onto every core is flagged cpu_over_wall."""
    code = (
        "import os, time\n"
        "os.sched_setaffinity(0, set(range(os.cpu_count() or 1)))\n"
        "kids = []\n"
        "for _ in range(2):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        t = time.process_time()\n"
        "        while time.process_time() - t < 0.5: pass\n"
        "        os._exit(0)\n"
        "    kids.append(pid)\n"
        "for pid in kids: os.waitpid(pid, 0)\n"
    )
    sb = WarmSandbox(SandboxConfig(use_cgroups=False))
    try:
        ex = _run_py(sb, code, cpu=usable_cores()[-1])
        assert ex.status is Status.OK, ex.reason
        m = ex.measurement
        assert m is not None and "sched_setaffinity" in m.mechanisms["core"], m.mechanisms
        over = m.cpu_s > 1.05 * m.wall_s + 0.01  # it got more than its core's worth
        print(f"cpu {m.cpu_s:.3f} s, wall {m.wall_s:.3f} s, flags {m.flags}")
        assert ("cpu_over_wall" in m.flags) == over, (m.flags, m.cpu_s, m.wall_s)
    finally:
        sb.close()


def test_conformance_new_checks(sandbox):
    check_sandbox(sandbox, only=["hidden_cpu_counted", "pinned_core_exclusive"])


# -- the judge and the reward: can a cheaper program score higher? ---------------------------------
def _small(task, sizes):
    wl = [w.model_copy(update={"size": s}) for w, s in zip(task.workloads, sizes, strict=False)]
    return task.model_copy(update={"workloads": wl})


def _hide_python(src: str) -> str:
    return (
        "import os as _os, signal as _signal, sys as _sys\n"
        "_signal.signal(_signal.SIGCHLD, _signal.SIG_IGN)\n"
        "_r, _w = _os.pipe()\n"
        "_pid = _os.fork()\n"
        "if _pid != 0:\n"
        "    _os.close(_w)\n"
        "    _os.read(_r, 1)\n"
        "    while True:\n"
        "        try:\n"
        "            _os.kill(_pid, 0)\n"
        "            _os.sched_yield()\n"
        "        except ProcessLookupError:\n"
        "            _os._exit(0)\n"
        "_os.close(_r)\n" + src + "\n_sys.stdout.flush()\n_os._exit(0)\n"
    )


def _hide_c(src: str) -> str:
    assert "int main(void)" in src
    body = src.replace("int main(void)", "static int real_main(void)")
    return (
        "#include <sched.h>\n#include <signal.h>\n#include <stdio.h>\n#include <sys/types.h>\n#include <unistd.h>\n"
        + body
        + "\nint main(void) {\n"
        "    signal(SIGCHLD, SIG_IGN);\n"
        "    int p[2]; if (pipe(p)) return 1;\n"
        "    pid_t pid = fork();\n"
        "    if (pid == 0) { close(p[0]); int rc = real_main(); fflush(stdout); _exit(rc); }\n"
        "    close(p[1]); char c; while (read(p[0], &c, 1) < 0) {}\n"
        "    while (kill(pid, 0) == 0) sched_yield();\n"
        "    return 0;\n}\n"
    )


def _rewards(task, hider: str):
    config = JudgeConfig(repeats=3, max_repeats=None, drift=None)
    with Judge(config) as judge:
        honest, hidden = judge.judge_many(
            [
                Candidate(task, source=task.baseline.source, sample=0),
                Candidate(task, source=hider, sample=1),
            ]
        )
    rlpf = get_reward("rlpf")
    floor = get_reward("rlpf", on_missing_timing="floor")
    return honest, hidden, rlpf, floor


@pytest.mark.parametrize(
    ("task_id", "sizes", "hide"),
    [
        ("c-substring-count", [300_000, 400_000], _hide_c),
        ("py-substring-count", [20_000, 30_000], _hide_python),
    ],
)
def test_hiding_baseline_scores_no_higher_than_baseline(task_id, sizes, hide):
    """Must show: a baseline-speed candidate that hides its work in an auto-reaped child scores
    at most the plain baseline's RLPF reward (on d1bff82 the C one scored 1.260 > 1.159)."""
    task = _small(load_task_dir(CORE / task_id), sizes)
    honest, hidden, rlpf, floor = _rewards(task, hide(task.baseline.source))
    assert honest.stage is Stage.OK and hidden.stage is Stage.OK, (honest.reason, hidden.reason)
    r_honest, r_hidden = rlpf([honest, hidden])
    f_honest, f_hidden = floor([honest, hidden])
    print(
        f"{task_id}: rlpf honest {r_honest} hidden {r_hidden}; floor-policy {f_honest} {f_hidden}"
    )
    # A hider gets a number (the correctness floor, every correct program's minimum), never None.
    assert r_hidden is not None, "a hider must be scored, not dropped as None"
    assert r_honest is None or r_hidden <= r_honest, (r_hidden, r_honest)
    assert f_hidden is not None and f_honest is not None and f_hidden <= f_honest
    # hidden_cpu, or outlived_main when the hidden child was still exiting as main ended.
    assert {"hidden_cpu", "outlived_main"} & set(hidden.flags), hidden.flags
    assert hidden.candidate is not None and hidden.candidate.status is TimingStatus.DEGRADED
    # Never cheaper than its cgroup says: the hider's measured CPU is of the baseline's order.
    assert honest.candidate is not None and honest.candidate.estimate_s is not None
    samples = [s for v in hidden.candidate.per_workload_samples_s.values() for s in v]
    assert samples and min(samples) > 0.2 * min(
        s for v in honest.candidate.per_workload_samples_s.values() for s in v
    )
