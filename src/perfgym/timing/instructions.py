"""Deterministic mode: instruction counts of a whole run, for every language.

Hardware counters are used where the kernel allows them (the sandbox fills
`Measurement.instructions`). Elsewhere each run is wrapped in Valgrind, following every child
process; the wrapper sums the per-process totals Valgrind writes and hands them back through a
collected file. Python hash randomisation is pinned (PYTHONHASHSEED=0), since dict and set
layouts otherwise move the count by ~1-3 %.

Cost (measured by bench/timing_stability.py, figure (e)): ~5-10x for native programs and
~20-60x for Python, Node and the JVM, plus a fixed start-up of 0.3-2 s per interpreter process.
The total is written after Valgrind exits, so a program cannot forge it directly; but a
program can write into the per-process files Valgrind leaves (same user, same /tmp), e.g.
delete the file of a child that did the work. Only gross cases are refused (a total far below
what the run's CPU time allows, MIN_RATE); hardware counters are the tamper-proof path.
"""

from __future__ import annotations

import functools
import json
import os
import shlex
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from perfgym.sandbox._inside import valuecodec
from perfgym.sandbox.base import Bind, Sandbox
from perfgym.sandbox.counters import instructions_unavailable_reason
from perfgym.sandbox.execution import Execution, Status
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.run_request import Pin

TOTAL_FILE = ".perfgym-instructions"
_OUT_DIR = "/tmp/.perfgym-vg"
_BIN_DIR = "/tmp/.perfgym-bin"
#: Fewer instructions than this per CPU second under Valgrind cannot be a real count (Valgrind
#: retires 1e8-2e9 guest instructions per second): the program tampered with Valgrind's files.
MIN_RATE = 5e6
_STARTUP_S = 0.5
#: Interpreter names resolved past version-manager shims (a pyenv shim is a bash script that
#: would otherwise run ~40 traced processes before the interpreter).
_SHIMMED = ("python3", "python")
_NODE_FLAGS = ("--hash-seed=1", "--random-seed=1", "--single-threaded")

_SCRIPT = """\
mkdir -p {out} {bin} || exit 125
{links}export PATH={bin}:"$PATH" PYTHONHASHSEED=0 JAVA_TOOL_OPTIONS=-Xbatch
{valgrind} -q --trace-children=yes {tool_args} "$@"
s=$?
sed -n 's/^summary: *\\([0-9][0-9]*\\).*/\\1/p' {out}/out.* > {out}.sums 2> /dev/null
t=0
n=0
while read -r v; do
  t=$((t + v))
  n=$((n + 1))
done < {out}.sums
echo "$t $n" > /tmp/{total}
exit $s
"""

_FUNCTION_DRIVER = """\
import json, sys
sys.path.insert(0, "/tmp")
import valuecodec
req = json.load(open("/tmp/call.json"))
ns = {"__name__": "solution", "__builtins__": __builtins__}
exec(compile(open("/tmp/solution.py").read(), "solution.py", "exec"), ns)
if req["entry"]:
    value = ns[req["entry"]](*valuecodec.decode(req["args"]))
    sys.stdout.flush()
    sys.__stdout__.write("\\nperfgym-value:" + json.dumps(valuecodec.encode(value)) + "\\n")
    sys.__stdout__.flush()
"""


#: The start of a function driver's last line, which holds the call's value (encoded).
RESULT_TAG = "perfgym-value:"
assert RESULT_TAG in _FUNCTION_DRIVER


def returned_value(stdout: bytes) -> Any:
    """The value a function driver's run returned (its last line), decoded; ValueError when
    the run did not end with one (the program wrote after it, or stopped before)."""
    text = stdout.decode("utf-8", "replace").rstrip("\n")
    last = text.rsplit("\n", 1)[-1]
    if not last.startswith(RESULT_TAG):
        raise ValueError("the counted call did not end with its value")
    try:
        return valuecodec.decode(json.loads(last[len(RESULT_TAG) :]))
    except Exception as exc:  # noqa: BLE001 - any malformed value is the program's
        raise ValueError(f"the counted call's value could not be read: {exc}") from None


def backend() -> tuple[str | None, str]:
    """('hardware' | 'valgrind' | None, why): how instructions are counted on this host."""
    why = instructions_unavailable_reason()
    if why is None:
        return "hardware", ""
    if shutil.which("valgrind") is None:
        return None, f"{why}; and Valgrind is not installed"
    return "valgrind", why


@functools.cache
def shim_targets() -> dict[str, str]:
    """Command name -> real executable, for names that resolve to a version-manager shim."""
    out: dict[str, str] = {}
    pyenv = shutil.which("pyenv")
    for name in _SHIMMED:
        path = shutil.which(name)
        if path is None or "/shims/" not in path or pyenv is None:
            continue
        try:
            real = subprocess.run([pyenv, "which", name], capture_output=True, text=True,
                                  timeout=20, check=True).stdout.strip()  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            continue
        if real and os.path.isfile(real):
            out[name] = os.path.realpath(real)
    return out


def real_python() -> str:
    """The interpreter `python3` runs inside a sandbox, past any shim."""
    found = shutil.which("python3")
    return shim_targets().get("python3") or os.path.realpath(found or "python3")


def wrap(argv: Sequence[str], tool: str = "cachegrind") -> list[str]:
    """`argv` run under Valgrind (children followed); the total lands in /tmp/TOTAL_FILE."""
    valgrind = shutil.which("valgrind") or "valgrind"
    if tool == "cachegrind":
        tool_args = f"--tool=cachegrind --cache-sim=no --cachegrind-out-file={_OUT_DIR}/out.%p"
    elif tool == "callgrind":
        tool_args = f"--tool=callgrind --callgrind-out-file={_OUT_DIR}/out.%p"
    else:
        raise ValueError(f"unknown Valgrind tool {tool!r}")
    links = "".join(
        f"ln -sf {shlex.quote(real)} {_BIN_DIR}/{shlex.quote(name)}\n"
        for name, real in shim_targets().items()
    )
    node = shutil.which("node")
    if node is not None:  # V8's hash and random seeds and its background compiler vary counts
        line = f'exec {shlex.quote(os.path.realpath(node))} {" ".join(_NODE_FLAGS)} "$@"'
        links += (f"printf '#!/bin/sh\\n%s\\n' {shlex.quote(line)} > {_BIN_DIR}/node && "
                  f"chmod +x {_BIN_DIR}/node\n")  # fmt: skip
    script = _SCRIPT.format(out=_OUT_DIR, bin=_BIN_DIR, links=links, total=TOTAL_FILE,
                            valgrind=shlex.quote(valgrind), tool_args=tool_args)  # fmt: skip
    return ["sh", "-c", script, "sh", *argv]


def counting_limits(limits: Limits, slowdown: float) -> Limits:
    """Valgrind needs more time and roughly twice the memory of the program it runs."""
    return limits.model_copy(
        update={
            "wall_s": limits.wall_s * slowdown,
            "cpu_s": None,
            "memory_mb": limits.memory_mb * 2 + 256,
        }  # fmt: skip
    )


def function_files(
    source: str, entry: str | None, args: Sequence[Any] | None
) -> tuple[list[str], dict[str, bytes | str]]:
    """argv and files that call `entry(*args)` of `source` once in a fresh interpreter."""
    codec = os.path.join(os.path.dirname(valuecodec.__file__), "valuecodec.py")
    with open(codec) as f:
        codec_source = f.read()
    call = {"entry": entry, "args": valuecodec.encode(list(args or []))}
    files: dict[str, bytes | str] = {
        "driver.py": _FUNCTION_DRIVER,
        "valuecodec.py": codec_source,
        "solution.py": source,
        "call.json": json.dumps(call),
    }
    # Not -I/-E: they would ignore the PYTHONHASHSEED the wrapper pins.
    return [real_python(), "-s", "-S", "/tmp/driver.py"], files


@dataclass
class Counted:
    """One counted run: the execution, its instruction total, and any problem."""

    execution: Execution
    instructions: int | None
    processes: int = 0
    error: str = ""


def count(
    sandbox: Sandbox,
    argv: Sequence[str],
    *,
    limits: Limits,
    stdin: bytes | str = b"",
    binds: Sequence[Bind] = (),
    files: Mapping[str, bytes | str] | None = None,
    cpu: Pin = None,
    tool: str = "cachegrind",
    slowdown: float = 100.0,
) -> Counted:
    """Run `argv` under Valgrind in the sandbox and read its instruction total."""
    ex = sandbox.run(wrap(argv, tool), stdin=stdin, binds=binds, files=files, cpu=cpu,
                     limits=counting_limits(limits, slowdown), collect=[TOTAL_FILE])  # fmt: skip
    if ex.status is not Status.OK:
        return Counted(ex, None, error=f"{ex.status.value}: {ex.reason}".strip())
    raw = ex.files.get(TOTAL_FILE, b"").decode(errors="replace").split()
    if len(raw) != 2 or not all(p.isdigit() for p in raw):
        return Counted(ex, None, error=f"no instruction total from Valgrind: {' '.join(raw)!r}")
    total, procs = int(raw[0]), int(raw[1])
    cpu_s = ex.measurement.cpu_s if ex.measurement else 0.0
    # (The supervisor's process count includes threads, so it cannot bound the count files.)
    # Valgrind spends ~0.3-0.5 s of CPU starting each process whatever it then runs.
    work_s = cpu_s - _STARTUP_S * procs
    if procs == 0 or total <= 0 or (work_s > 1.0 and total / work_s < MIN_RATE):
        return Counted(ex, None, procs, f"implausible count: {total} instructions from {procs} "
                       f"count file(s) for {cpu_s:.2f} s of CPU under Valgrind; its output was "
                       "tampered with")  # fmt: skip
    return Counted(ex, total, procs)
