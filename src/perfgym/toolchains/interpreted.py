"""Recipes for interpreted languages: Python and JavaScript (Node), with a syntax-check build."""

from __future__ import annotations

from perfgym.tasks.task import Language
from perfgym.toolchains.recipe import ARTIFACT, Recipe

# The "build" is a syntax check, so that a program that does not parse is NC (no build), not a
# runtime error; the artifact is the source itself.

# compile() in an isolated interpreter without `site`: the same check as `-m py_compile` (which
# also writes a .pyc nobody uses: a script's own code is never loaded from one) at a quarter of
# the cost (39 vs 152 ms per candidate in the sandbox, measured under load), printing the
# error as py_compile does.
_PY_SYNTAX_CHECK = (
    "import sys\n"
    "try:\n"
    "    compile(open('main.py', 'rb').read(), 'main.py', 'exec')\n"
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
    build=("python3", "-I", "-S", "-c", _PY_SYNTAX_CHECK),
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
    memory_flag="--max-old-space-size={mb}",
)
