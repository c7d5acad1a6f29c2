"""The warm worker's zygote rehearses a call's code paths: it must work (its failures are
swallowed in the worker, so only a test sees one), leave no descriptor open, and leave nothing a
call can tell apart from an unrehearsed zygote (the environment included)."""

import subprocess
import sys

from perfgym.sandbox import Status
from perfgym.sandbox.pyworker import PythonWorker
from perfgym.sandbox.view import INSIDE, program_env

# The rehearsal run as the worker runs it (a plain script beside its siblings, `-I -S`), with
# each path raising instead of being swallowed, twice, counting open descriptors around it.
_PROBE = """
import os, sys
sys.path.insert(0, sys.argv[1])
import worker_rehearsal
before = sorted(os.listdir('/proc/self/fd'))
worker_rehearsal._once()
worker_rehearsal._once()
worker_rehearsal._module_lookups()
after = sorted(os.listdir('/proc/self/fd'))
print(before == after, len(before), len(after))
"""


def test_rehearsal_runs_and_leaves_no_descriptor():
    out = subprocess.run(
        [sys.executable, "-I", "-S", "-c", _PROBE, str(INSIDE)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] == "True", out.stdout


def test_calls_see_the_programs_environment_alone():
    # The worker's interpreter starts with LD_BIND_NOW (its zygote binds every symbol once);
    # a call's os.environ, and a process it starts, see the programs' default environment only.
    src = (
        "import os, subprocess, sys\n"
        "def f():\n"
        "    child = subprocess.run([sys.executable, '-S', '-c', "
        "'import os; print(sorted(os.environ))'], capture_output=True, text=True).stdout\n"
        "    return dict(os.environ), child.strip()\n"
    )
    w = PythonWorker()
    try:
        r = w.call(src, "f")
    finally:
        w.close()
    assert r.status is Status.OK, r.error
    env, child = r.value
    assert "LD_BIND_NOW" not in env and "LD_BIND_NOW" not in child
    assert child == str(sorted(env))  # what it starts inherits no more than it has
    env.pop("PWD", None)  # bubblewrap's own, as before
    assert env == program_env(None)
