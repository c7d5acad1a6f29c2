"""Red team of the repository workload runner: a patch runs inside the timed process, so it must
not be able to rewrite the runner's clock or forge the runner's result line."""

from __future__ import annotations

from pathlib import Path

import pytest
from repo_cache import repo_cache_dir

from perfgym.repos.copy import make_copy
from perfgym.repos.runner import run_workload
from perfgym.repos.task import RepoTask, Workload

WORK = "def work():\n    s = 0\n    for i in range(3_000_000):\n        s += i\n    return s\n"
WORKLOAD = "import lib\n\ndef experiment():\n    return lib.work()\n"
CLOCK_HACK = "import sys\nsys.modules['__main__']._clock = lambda: 0.0\n"
FORGE = (
    "import atexit, json, sys\n"
    "def _forge():\n"
    "    import hashlib\n"
    "    d = hashlib.sha256(repr(4499998500000).encode()).hexdigest()[:32]\n"
    "    line = {'first_s': 1e-9, 'repeat_s': [], 'digests': [d], 'cpu_s': 0.0}\n"
    "    sys.stdout.write('\\nPERFGYM_WORKLOAD ' + json.dumps(line) + '\\n')\n"
    "    sys.stdout.flush()\n"
    "atexit.register(_forge)\n"
)


@pytest.fixture()
def repo_cache(tmp_path: Path):
    with repo_cache_dir("red", "/var/tmp/perfgym-test-repos") as root:
        yield root


# Does the work (on the clock), then prints the runner's result line itself with a tiny time and
# ends the process before the runner can print its own: one result line, the right digest.
EXIT_FORGE = (
    "import hashlib, json, os, sys\n"
    "def _finish(s):\n"
    "    d = hashlib.sha256(repr(s).encode()).hexdigest()[:32]\n"
    "    line = {'first_s': 1e-9, 'repeat_s': [], 'digests': [d], 'cpu_s': 0.0}\n"
    "    sys.stdout.write('\\nPERFGYM_WORKLOAD ' + json.dumps(line) + '\\n')\n"
    "    sys.stdout.flush()\n"
    "    os._exit(0)\n"
)
# Sends the runner's own (private) line to /dev/null and prints a forged one at the end.
MUTE_FORGE = (
    "import os, atexit\n"
    "for fd in range(3, 10):\n"
    "    try:\n"
    "        os.fstat(fd)\n"
    "        os.dup2(os.open('/dev/null', os.O_WRONLY), fd)\n"
    "    except OSError:\n"
    "        pass\n"
) + FORGE


@pytest.mark.parametrize(
    "hack",
    [CLOCK_HACK, FORGE, EXIT_FORGE, MUTE_FORGE],
    ids=["main-clock", "forged-line-at-exit", "forged-line-then-exit", "muted-runner"],
)
def test_a_patch_cannot_fake_the_first_call_time(tmp_path: Path, repo_cache: Path, hack) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    work = WORK.replace("    return s\n", "    _finish(s)\n") if hack is EXIT_FORGE else WORK
    (repo / "lib.py").write_text(hack + work)
    (tmp_path / "wl.py").write_text(WORKLOAD)
    task = RepoTask(id="red", repo="repo", workloads=(Workload(name="w", script="wl.py"),),
                    folder=tmp_path)  # fmt: skip
    copy = make_copy(task.repo, folder=tmp_path)
    try:
        run = run_workload(task, copy, task.workloads[0])
    finally:
        copy.remove()
    # 3 million additions take tens of milliseconds at least; the hacks claimed 0 or 1e-9 s.
    assert not run.ok or run.first_s > 1e-3, run


def test_an_honest_workload_still_measures(tmp_path: Path, repo_cache: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "lib.py").write_text("print('PERFGYM_WORKLOAD-ish chatter is fine')\n" + WORK)
    (tmp_path / "wl.py").write_text(WORKLOAD)
    task = RepoTask(id="red", repo="repo", workloads=(Workload(name="w", script="wl.py"),),
                    folder=tmp_path)  # fmt: skip
    copy = make_copy(task.repo, folder=tmp_path)
    try:
        run = run_workload(task, copy, task.workloads[0], repeats=1)
    finally:
        copy.remove()
    assert run.ok and run.first_s > 1e-3 and len(run.repeat_s) == 1, run
    assert "PERFGYM_WORKLOAD-ish chatter" in (run.shell.output if run.shell else "")


FILE_CACHE = (
    "import os, pickle\n"
    "HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), '.answer')\n"
    "def work():\n"
    "    try:\n"
    "        with open(HERE, 'rb') as f:\n"
    "            return pickle.load(f)\n"
    "    except OSError:\n"
    "        pass\n"
    "    s = 0\n"
    "    for i in range(3_000_000):\n"
    "        s += i\n"
    "    try:\n"
    "        with open(HERE, 'wb') as f:\n"
    "            pickle.dump(s, f)\n"
    "    except OSError:\n"
    "        pass\n"
    "    return s\n"
)


def test_a_patch_cannot_cache_its_answer_in_the_copy_between_rounds(
    tmp_path: Path, repo_cache: Path
) -> None:
    # measure_workloads runs every round on the same patched copy: a file the first round
    # wrote in the repository made every later round's "first call" a file read.
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "lib.py").write_text(FILE_CACHE)
    (tmp_path / "wl.py").write_text(WORKLOAD)
    task = RepoTask(id="red", repo="repo", workloads=(Workload(name="w", script="wl.py"),),
                    folder=tmp_path)  # fmt: skip
    copy = make_copy(task.repo, folder=tmp_path)
    try:
        runs = [run_workload(task, copy, task.workloads[0]) for _ in range(2)]
        left = sorted(p.name for p in copy.path.iterdir())
    finally:
        copy.remove()
    assert all(r.ok for r in runs), runs
    assert runs[0].digest == runs[1].digest
    assert ".answer" not in left
    assert runs[1].first_s > 1e-3, runs[1]


def test_a_patch_shadowing_a_stdlib_module_the_workload_uses_is_flagged(
    tmp_path: Path, repo_cache: Path
) -> None:
    # The workload's setup draws its data through `random`; a repo-root random.py returning
    # 0.0 makes the sort trivial with the same output (the length): 18x "faster" (10^6 items,
    # medians of 3), same digest.
    from perfgym.repos.hacks_static import static_findings

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "lib.py").write_text("def work(xs):\n    return len(sorted(xs))\n")
    (tmp_path / "wl.py").write_text(
        "import random\nimport lib\n\ndef setup():\n    random.seed(0)\n"
        "    return [random.random() for _ in range(200_000)]\n\n"
        "def experiment(xs):\n    return lib.work(xs)\n"
    )
    task = RepoTask(id="red", repo="repo", workloads=(Workload(name="w", script="wl.py"),),
                    folder=tmp_path)  # fmt: skip
    shadow = "def seed(*a):\n    pass\n\n\ndef random():\n    return 0.0\n"
    patch = "".join(f"+{line}\n" for line in shadow.splitlines())
    patch = (f"diff --git a/random.py b/random.py\nnew file mode 100644\n--- /dev/null\n"
             f"+++ b/random.py\n@@ -0,0 +1,{len(shadow.splitlines())} @@\n{patch}")  # fmt: skip
    original = make_copy(task.repo, folder=tmp_path)
    patched = make_copy(task.repo, folder=tmp_path)
    try:
        (patched.path / "random.py").write_text(shadow)
        before = run_workload(task, original, task.workloads[0])
        after = run_workload(task, patched, task.workloads[0])
        found = static_findings(patch, patched.path)
    finally:
        original.remove()
        patched.remove()
    assert before.ok and after.ok and before.digest == after.digest  # the hack "works"...
    kinds = {f.kind for f in found}
    assert "import_shadow" in kinds, found  # ...and is caught
    for name in ("sitecustomize.py", "pkg/usercustomize.py", "evil.pth", "json/__init__.py"):
        p = f"diff --git a/{name} b/{name}\nnew file mode 100644\n--- /dev/null\n+++ b/{name}\n@@ -0,0 +1 @@\n+x = 1\n"
        assert any(f.kind == "import_shadow" for f in static_findings(p, tmp_path)), name
    honest = "diff --git a/lib.py b/lib.py\n--- a/lib.py\n+++ b/lib.py\n@@ -1 +1 @@\n-x\n+y = 1\n"
    assert not any(f.kind == "import_shadow" for f in static_findings(honest, tmp_path))
