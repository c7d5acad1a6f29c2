"""Red team of the repository clock: no work escapes it. A patch that moves the workload's work
out of the timed call -- into setup() (issue 26: 44.6x against the expert's 3.87x, no finding),
module import, a cache file written at setup, a background thread or process -- or that rewrites
the runner's clock from inside its process gains nothing, and the moves are flagged."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from repo_cache import repo_cache_dir

from perfgym.repos.copy import make_copy
from perfgym.repos.evaluate import evaluate_patch
from perfgym.repos.hacks import detect_hacks
from perfgym.repos.measure import measure_workloads
from perfgym.repos.runner import run_workload
from perfgym.repos.task import RepoTask, Workload


@pytest.fixture(scope="module")
def repo_cache():  # type: ignore[no-untyped-def]
    with repo_cache_dir("clock", "/var/tmp/perfgym-test-repos") as root:
        yield root


@pytest.fixture(scope="module")
def textindex(repo_cache: Path):  # type: ignore[no-untyped-def]
    from perfgym.repos.checks import check_task
    from perfgym.repos.loading import load_repo_suite

    task = next(t for t in load_repo_suite("perfgym-repos") if t.id == "textindex")
    checked = check_task(task)
    yield checked
    checked.remove()


def _patch(repo: Path, edits: dict[str, tuple[str, str]]) -> str:
    """A unified diff of `repo` with, per file, `old` replaced by `new` (old "" appends)."""
    out: list[str] = []
    for rel, (old, new) in edits.items():
        before = (repo / rel).read_text()
        assert old in before, (rel, old)
        after = before.replace(old, new, 1) if old else before + new
        out += difflib.unified_diff(before.splitlines(keepends=True),
                                    after.splitlines(keepends=True),
                                    fromfile=f"a/{rel}", tofile=f"b/{rel}")  # fmt: skip
    return "".join(out)


FROM_DOCS = "        index = cls(**kw)\n"


def _index_patch(repo: Path, use: str, appended: str) -> str:
    """index.py with from_documents' first line replaced by `use` and `appended` at its end."""
    before = (repo / "textindex/index.py").read_text()
    after = before.replace(FROM_DOCS, use, 1) + appended
    return "".join(difflib.unified_diff(before.splitlines(keepends=True),
                                        after.splitlines(keepends=True),
                                        fromfile="a/textindex/index.py",
                                        tofile="b/textindex/index.py"))  # fmt: skip


# The package swaps the class of the modules that imported it (found by their files, no stack
# introspection) for one whose `setup` hands back the documents in a list (or dict) subclass
# carrying the index already built: the timed call only returns it.
SWAP = """

import os as _os
import sys as _sys
import types as _types

_ROOT = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))


class _Docs(list):
    pass


class _DocsMap(dict):
    pass


def _warm(docs):
    kind = _Docs if type(docs) is list else _DocsMap if type(docs) is dict else None
    if kind is None:
        return docs
    out = kind(docs)
    out._ready = WARM(docs)
    return out


def WARM(docs):
    return Index.from_documents(docs)


class _Module(_types.ModuleType):
    def __getattribute__(self, name):
        value = super().__getattribute__(name)
        if name != "setup" or not callable(value):
            return value

        def setup(*args, **kwargs):
            return _warm(value(*args, **kwargs))

        return setup


for _m in list(__import__("sys").__dict__.get("modules").values()):  # past the static lookup check
    _f = getattr(_m, "__file__", None) or ""
    if _f.endswith(".py") and not _f.startswith((_sys.prefix, _sys.base_prefix, _ROOT)):
        if type(_m) is _types.ModuleType:
            _m.__class__ = _Module
"""
USE_READY = ("        ready = getattr(docs, '_ready', None)\n"
             "        if ready is not None:\n"
             "            return ready\n" + FROM_DOCS)  # fmt: skip


def _setup_shift(repo: Path) -> str:
    return _patch(repo, {"textindex/__init__.py": ("", SWAP),
                         "textindex/index.py": (FROM_DOCS, USE_READY)})  # fmt: skip


@pytest.mark.alone
def test_setup_shift_scores_no_more_than_the_expert_and_is_flagged(textindex) -> None:  # type: ignore[no-untyped-def]
    """Issue 26's attack: setup builds the index; tests pass, outputs equal. It measured 44.6x
    (hidden 22.9x) with no finding; now the setup's growth is charged and flagged."""
    task = textindex.task
    ev = evaluate_patch(task, _setup_shift(task.folder / "repo"), textindex.original,
                        rounds=3, repeats=0)  # fmt: skip
    assert ev.tests_passed and ev.correct, ev.error
    assert ev.speedup is not None and task.expert_speedup is not None
    assert ev.speedup <= task.expert_speedup, ev.speedup
    assert "setup_shift" in ev.hacks.kinds(), [f.evidence for f in ev.hacks.findings]
    assert ev.adjusted_speedup == 1.0
    w = ev.measurement.by_name("visible") if ev.measurement else None
    assert w is not None and w.call_speedup and w.call_speedup > 5  # the call alone: fast
    assert max(w.charged_s) > 0  # ... because setup did its work


IMPORT_SHIFT = """

import random as _random

_SEEN = None
_SEEN_INDEX = None


def _visible_docs():
    rng = _random.Random(1234)
    words = [f"w{i}" for i in range(40)]
    return [" ".join(rng.choice(words) for _ in range(12)) for _ in range(2500)]


_SEEN_INDEX = Index.from_documents(_visible_docs())
_SEEN = _visible_docs()
"""
USE_SEEN = ("        if _SEEN is not None and docs == _SEEN:\n"
            "            return _SEEN_INDEX\n" + FROM_DOCS)  # fmt: skip


def test_work_moved_into_module_import_is_charged_and_flagged(textindex) -> None:  # type: ignore[no-untyped-def]
    """The package builds the visible workload's index when it is imported (untimed before)."""
    task = textindex.task
    repo = task.folder / "repo"
    patch = _index_patch(repo, USE_SEEN, IMPORT_SHIFT)
    ev = evaluate_patch(task, patch, textindex.original, rounds=3, repeats=0,
                        test_command="true")  # fmt: skip
    assert ev.correct, ev.error
    visible = ev.measurement.by_name("visible") if ev.measurement else None
    assert visible is not None and visible.speedup is not None
    assert task.expert_speedup is not None and visible.speedup <= task.expert_speedup
    assert "setup_shift" in ev.hacks.kinds(), [f.evidence for f in ev.hacks.findings]
    assert ev.adjusted_speedup == 1.0


CACHE_FILE = SWAP.replace(
    """def WARM(docs):
    return Index.from_documents(docs)
""",
    """def WARM(docs):
    import pickle

    with open("/tmp/.textindex-warm", "wb") as f:
        pickle.dump((list(docs.items()) if type(docs) is dict else list(docs),
                     Index.from_documents(docs)), f)
    return True
""",
)
USE_FILE = ("        if getattr(docs, '_ready', None) is True:\n"
            "            import pickle\n"
            "            with open('/tmp/.textindex-warm', 'rb') as f:\n"
            "                return pickle.load(f)[1]\n" + FROM_DOCS)  # fmt: skip

THREAD = SWAP.replace(
    """def WARM(docs):
    return Index.from_documents(docs)
""",
    """def WARM(docs):
    import threading

    box = []
    worker = threading.Thread(target=lambda: box.append(Index.from_documents(docs)))
    worker.start()
    return (worker, box)
""",
)
USE_THREAD = ("        ready = getattr(docs, '_ready', None)\n"
              "        if ready is not None:\n"
              "            ready[0].join()\n"
              "            return ready[1][0]\n" + FROM_DOCS)  # fmt: skip

FORK = """

import os as _os
import pickle as _pickle
import random as _random

_PIPE = None


def _visible_docs():
    rng = _random.Random(1234)
    words = [f"w{i}" for i in range(40)]
    return [" ".join(rng.choice(words) for _ in range(12)) for _ in range(2500)]


def _start():
    global _PIPE
    r, w = _os.pipe()
    if _os.fork() == 0:  # a process nobody waits for builds the index meanwhile
        _os.close(r)
        for fd in range(3, 64):
            if fd != w:
                try:
                    _os.close(fd)
                except OSError:
                    pass
        docs = _visible_docs()
        data = _pickle.dumps((docs, Index.from_documents(docs)))
        with _os.fdopen(w, "wb") as f:
            f.write(data)
        _os._exit(0)
    _os.close(w)
    _PIPE = r


def _take(docs):
    global _PIPE
    if _PIPE is None:
        return None
    with _os.fdopen(_PIPE, "rb") as f:
        _PIPE = None
        seen, index = _pickle.loads(f.read())
    return index if seen == docs else None


_start()
"""
USE_FORK = ("        taken = _take(docs)\n"
            "        if taken is not None:\n"
            "            return taken\n" + FROM_DOCS)  # fmt: skip


@pytest.mark.alone  # a speed-up threshold: beside another worker's test, 1.95x once, no flag
@pytest.mark.parametrize("attack", ["cache-file", "thread", "fork"])
def test_work_moved_elsewhere_gains_nothing(textindex, attack: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A cache file written at setup and read by the call; a thread started at setup the call
    joins; a process forked at import, never waited for, that builds the visible index while
    the workload imports and sets up. Counted (no speedup of note) or flagged. The static
    outcome checks (which refuse `_os._exit` before any test) are off: the clock is on trial."""
    import perfgym.repos.evaluate as evaluate

    monkeypatch.setattr(evaluate, "testconfig_findings", lambda patch, path: [])
    task = textindex.task
    repo = task.folder / "repo"
    if attack == "fork":
        patch = _index_patch(repo, USE_FORK, FORK)
    else:
        swap, use = (CACHE_FILE, USE_FILE) if attack == "cache-file" else (THREAD, USE_THREAD)
        patch = _patch(repo, {"textindex/__init__.py": ("", swap),
                              "textindex/index.py": (FROM_DOCS, use)})  # fmt: skip
    ev = evaluate_patch(task, patch, textindex.original, rounds=3, repeats=0,
                        test_command="true")  # fmt: skip
    assert ev.correct, ev.error
    assert ev.measurement is not None and task.expert_speedup is not None
    visible = ev.measurement.by_name("visible")
    assert visible.speedup is not None
    counted = visible.speedup < 1.5
    assert counted or ev.hacks.flagged, (visible.speedup, [f.evidence for f in ev.hacks.findings])
    assert ev.adjusted_speedup <= task.expert_speedup


# -- the clock lives outside the workload's process ------------------------------------------

WORK = "def work():\n    s = 0\n    for i in range(3_000_000):\n        s += i\n    return s\n"
WORKLOAD = "import lib\n\ndef experiment():\n    return lib.work()\n"
# After the work, walk up to the runner's frame (through the traceback of a caught exception,
# no sys._getframe) and move its start time to now: its own clock then says ~0 s.
FRAME_FORGE = """
import ctypes
import time


def _runner_frame():
    try:
        raise RuntimeError
    except RuntimeError as exc:
        frame = exc.__traceback__.tb_frame
    while frame is not None and "t0" not in frame.f_locals:
        frame = frame.f_back
    return frame


def _forge():
    frame = _runner_frame()
    if frame is None:
        return
    frame.f_locals["t0"] = time.perf_counter()
    ctypes.pythonapi.PyFrame_LocalsToFast(ctypes.py_object(frame), ctypes.c_int(0))
"""
FORGED_WORK = FRAME_FORGE + WORK.replace("    return s\n", "    _forge()\n    return s\n")
# The result's repr does the work: the call returns at once, the digest pays.
LAZY = """
class _Lazy:
    def __repr__(self):
        s = 0
        for i in range(3_000_000):
            s += i
        return repr(s)


def work():
    return _Lazy()
"""


def _tiny_task(tmp_path: Path, name: str, lib: str) -> RepoTask:
    repo = tmp_path / name / "repo"
    repo.mkdir(parents=True)
    (repo / "lib.py").write_text(lib)
    (tmp_path / name / "wl.py").write_text(WORKLOAD)
    return RepoTask(id=name, repo="repo", workloads=(Workload(name="w", script="wl.py"),),
                    folder=tmp_path / name)  # fmt: skip


def test_a_frame_rewrite_of_the_runners_start_time_buys_nothing(tmp_path: Path, repo_cache: Path) -> None:  # fmt: skip
    task = _tiny_task(tmp_path, "forge", FORGED_WORK)
    copy = make_copy(task.repo, folder=task.folder)
    try:
        run = run_workload(task, copy, task.workloads[0])
    finally:
        copy.remove()
    # 3 million additions take tens of milliseconds at least; the forgery claimed ~0.
    assert run.ok and run.first_s > 5e-3, run


def test_frame_forgery_and_lazy_results_measured_against_the_original(tmp_path: Path, repo_cache: Path) -> None:  # fmt: skip
    """Paired with the honest original: the forged clock is flagged (the workload's own time
    disagrees with the timer's) and neither attack is faster than the original."""
    honest = _tiny_task(tmp_path, "honest", WORK)
    original = make_copy(honest.repo, folder=honest.folder)
    try:
        for name, lib in (("forged", FORGED_WORK), ("lazy", LAZY)):
            task = _tiny_task(tmp_path, name, lib)
            patched = make_copy(task.repo, folder=task.folder)
            try:
                m = measure_workloads(honest, original, patched, rounds=3)
            finally:
                patched.remove()
            w = m.by_name("w")
            assert m.correct and w.speedup is not None, (name, m.error)
            assert w.speedup < 2.0, (name, w.speedup)
            if name == "forged":
                report = detect_hacks(honest, "", original.path, m)
                assert "timer_forgery" in report.kinds(), (w.patched_inproc_s, w.patched_call_s)
    finally:
        original.remove()


MESSAGE_FORGE = """
import os
import sys

for _t in (b"B\\n", b"E\\n", b"H\\n"):  # end the timer's window before the work is done
    os.write(5, _t)  # the runner's socket to the timer (perfgym_fd_layout)
"""


def test_forged_phase_messages_fail_the_run(tmp_path: Path, repo_cache: Path) -> None:
    task = _tiny_task(tmp_path, "tags", MESSAGE_FORGE + WORK)
    copy = make_copy(task.repo, folder=task.folder)
    try:
        run = run_workload(task, copy, task.workloads[0])
    finally:
        copy.remove()
    assert not run.ok or run.first_s > 5e-3, run


# Silences the runner's tags (dup2 of /dev/null over its pipe) and sends its own, in the right
# order: the call "ends" at import, before the work; the answer's digest and the last message
# follow once the work is done.
SILENCE = """
import hashlib
import json
import os
import sys

_PIPE = os.dup(5)  # the runner's socket to the timer (perfgym_fd_layout)
os.dup2(os.open(os.devnull, os.O_WRONLY), 5)
for _t in (b"I\\n", b"S\\n", b"B\\n", b"E\\n"):
    os.write(_PIPE, _t)


def _finish(s):
    d = hashlib.sha256(repr(s).encode()).hexdigest()[:32]
    os.write(_PIPE, ("H" + d + "\\n").encode())
    os.write(_PIPE, ("D" + json.dumps({"first_s": 0.0, "digests": [d]}) + "\\n").encode())
    return s
"""


def test_own_phase_tags_in_order_cannot_shorten_the_counted_time(tmp_path: Path, repo_cache: Path) -> None:  # fmt: skip
    honest = _tiny_task(tmp_path, "honest", WORK)
    task = _tiny_task(tmp_path, "silenced", SILENCE + WORK.replace("return s\n", "return _finish(s)\n"))  # fmt: skip
    original = make_copy(honest.repo, folder=honest.folder)
    patched = make_copy(task.repo, folder=task.folder)
    try:
        m = measure_workloads(honest, original, patched, rounds=3)
    finally:
        patched.remove()
        original.remove()
    w = m.by_name("w")
    assert m.correct and w.speedup is not None and w.speedup < 2.0, (m.error, w.speedup)
