"""Recipes for interpreted languages: Python and JavaScript (Node), with a syntax-check build."""

from __future__ import annotations

from perfgym.tasks.task import Language
from perfgym.toolchains.recipe import ARTIFACT, Recipe

# The "build" is a syntax check, so that a program that does not parse is NC (no build), not a
# runtime error; the artifact is the source itself.

# compile() in an isolated interpreter without `site`: the same check as `-m py_compile` (which
# also writes a .pyc nobody uses: a script's own code is never loaded from one) at a quarter of
# the cost (39 vs 152 ms per candidate in the sandbox, measured under load), printing the
# error as py_compile does. One program serves both places it runs: `python3 -I -S -c CHECK
# main.py` in a fresh sandbox reads the file; in a warm worker (program mode, argv[0]
# '<string>' as under -c) it reads the source on stdin and writes main.py into the run's /tmp,
# so that a SyntaxWarning quotes its line from the file as it does in a build directory (best
# effort: a full /tmp must not turn into a compile error).
# The recursion limit is set so that compile() starts with the budget of a fresh
# `python3 main.py` (limit 1000, nothing on the stack), wherever the checker sits: `room()`
# measures the budget left (0.1 ms). Without it the limit depends on the caller's stack (the
# worker's frames, its exec() call), and nesting near the limit passed one check and failed
# the other, or failed the check although the program runs. Measured in unary minuses:
# `python3 main.py` runs up to 2998; the former check passed up to 2992; counting frames
# instead of room() gave 2995 sandboxed and 2992 in the worker; with room(), 2998 in both.
_PY_SYNTAX_CHECK = (
    "import sys\n"
    "def room(n=0):\n"
    "    try:\n"
    "        return room(n + 1)\n"
    "    except RecursionError:\n"
    "        return n\n"
    "sys.setrecursionlimit(sys.getrecursionlimit() - room() + 1000)\n"
    "if len(sys.argv) > 1:\n"
    "    with open(sys.argv[1], 'rb') as src:\n"
    "        data = src.read()\n"
    "else:\n"
    "    data = sys.stdin.buffer.read()\n"
    "    try:\n"
    "        with open('main.py', 'wb') as out:\n"
    "            out.write(data)\n"
    "    except OSError:\n"
    "        pass\n"
    "try:\n"
    "    compile(data, 'main.py', 'exec', dont_inherit=True)\n"
    "except (SyntaxError, ValueError) as e:\n"
    "    import traceback\n"
    "    sys.stderr.write(''.join(traceback.format_exception_only(type(e), e)))\n"
    "    sys.exit(1)\n"
)

PYTHON = Recipe(
    name="python-cpython",
    language=Language.PYTHON,
    source_name="main.py",
    compiler="python3",
    build=("python3", "-I", "-S", "-c", _PY_SYNTAX_CHECK, "main.py"),
    warm_check=_PY_SYNTAX_CHECK,
    outputs=("main.py",),
    runtime="python3",
    run=("python3", f"{ARTIFACT}/main.py"),
)

JAVASCRIPT = Recipe(
    name="javascript-node",
    language=Language.JAVASCRIPT,
    source_name="main.js",
    compiler="node",
    build=("node", "--check", "main.js"),
    outputs=("main.js",),
    runtime="node",
    run=("node", f"{ARTIFACT}/main.js"),
    # V8 sizes its old generation from physical memory, not from the cgroup: without this a
    # program is OOM-killed by the sandbox instead of V8 collecting harder or failing cleanly.
    # Its young generation too is sized from the memory node sees (the cgroup's limit, where a
    # run could read it; no run reads a cgroup file now): 48 MiB on a 24 GiB host. Both are
    # set from the run's own limit, the same on every machine.
    memory_flag="--max-old-space-size={mb} --max-semi-space-size={young_mb}",
)
