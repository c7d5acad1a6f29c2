"""Red team, round 7: can a Python harness candidate be OK without the work, or be failed for
honest work, through the guard of perfgym_guard.py (the solution on a thread of its own, plain
results, the audit hook; since replaced by the solution's process of its own, perfgym_split.py)?

Each attack goes through the real judge (sandbox on) on small harness tasks shared with round 5;
a test asserts the SAFE behaviour, and `xfail(strict=True)` marks a hole still open. Found on
380585e (branch redteam7). Figures: stage, rlpf reward (the honest reference: see the tests).

Every OPEN route below is CLOSED since the solution runs in a process of its own
(perfgym_split.py, a fresh interpreter; the harness's process is not dumpable): the harness
module, json, sys and builtins it patches are its own process's, and the nonce is in no memory
it can read. Kept as found, for the record; each test asserts the safe behaviour.

  test_python_harness_module_globals_forge_the_line[globals_range]        OPEN (OK, no work,
      rlpf 1.26 vs the honest reference's and the baseline's 0.15; repeats=3: harness time
      2.2 ms vs the reference's 6.8 ms, no flag).
  test_python_harness_module_globals_forge_the_line[globals_squares]      OPEN (OK, no work,
      `checked: actual_checksum, expected_checksum`, rlpf 1.26 vs 0.15 at repeats=3, no flag;
      at repeats=1 here 0.15, a tie). PY_MAIN_GLOBALS, one source for both tasks: at import
      (on its own thread) the solution rebinds names in the HARNESS MODULE's globals,
      `sys.modules["__main__"]`: `json` (a namespace whose `dumps` sets "ok" true and copies each
      expected_X into actual_X), `sys` (a copy whose `exit` is `int`: `sys.exit(1)` returns,
      the harness ends normally) and `SystemExit` (a subclass whose code is always 0, raised by
      the harness's own code object in its own globals). The wrapper compares the json
      MODULE's functions, builtins.print and sys.stdout, never the harness module's globals;
      the guard does not see a write to a module dict. The published
      python_log_match_checksum_v2700_061 has the same shape (`json.dumps`, `raise
      SystemExit(1)`). Rebinding a harness helper (`expected_checksum`) the same way is caught
      only where the line carries an answer the reference's run agrees on.
  test_python_in_place_patches_forge_the_line[in_place_range, in_place_squares] OPEN (OK, no
      work; answers "checked" on squares). PY_IN_PLACE writes no name of the harness's module
      (so snapshotting the harness's globals would not close it): `json.dumps.__code__` is
      replaced by a forging function's (the function object the wrapper compares by identity
      stays; the audit hook refuses __code__ writes only on the guard's own functions), its
      helper stashed in json's module dict; `sys.exit = int` in the sys module; and
      `builtins.SystemExit` a subclass of code 0 (the wrapper's own `except SystemExit` looks
      the name up in builtins too, and the raise is the harness's own frame).
  test_the_forgeries_on_a_published_task[globals, in_place]               OPEN (both OK, no work,
      "checked: actual_checksum, expected_checksum" on the published
      python_log_match_checksum_v2700_061, `checksum` renamed `run`; skipped without
      PERFGYM_PERFCODEBENCH).
  test_python_nonce_read_from_its_own_memory_is_not_ok                     OPEN (OK, no work,
      "not checked" on py_range_sums). PY_PROC_MEM: at import, every readable anonymous
      mapping of /proc/self/maps is read from /proc/self/mem; exactly one run of 32 lowercase
      hex digits is there, the nonce `_end_mark` read (a local of the wrapper's frame, alive
      until the mark is written); the call prints `{"ok": true, ...}` and `PERFGYM_HARNESS_END
      <nonce> ok`, then os._exit(0). No audit event covers a file read of one's own memory.
      On an answer-checked task this alone does not give the answer fields (the line must
      carry the reference's expected_X); combined with the forgeries above it is not needed.
  test_python_patched_perf_counter_is_not_the_harnesss_clock              CLOSED (correct, the
      baseline's loop, `time.perf_counter_ns` at 1/20: flagged, scored the floor 0.15; since
      the split its patch is its own process's, and it scores the baseline's 0.15 unflagged).
  test_python_forged_lines_and_odd_results_are_not_ok[os_exit]             CLOSED (a forged line
      then os._exit(0): no end mark).
  test_python_forged_lines_and_odd_results_are_not_ok[atexit]              CLOSED (the harness
      exits 1 first: no mark, WO).
  test_python_forged_lines_and_odd_results_are_not_ok[cyclic]              CLOSED (a list that
      holds itself: the coercion recurses until RecursionError; not OK).

False NR / WO (honest, correct programs the guard now fails; each passes without the guard,
checked by running the harness directly with `python3 -S`):
  test_honest_numpy_scalars_are_not_refused                                CLOSED (was WO, "harness:
      exit code 1": a list of numpy.int64, equal to the harness's ints, is replaced by the
      refusal string; np.int64 is no int subclass).
  test_honest_signal_setup_at_import_is_not_a_crash                        CLOSED (the import
      runs off the main thread, where `signal.signal(SIGPIPE, SIG_DFL)` raised ValueError: NR;
      SIG_DFL/SIG_IGN set while the solution is imported are forwarded to the harness's thread).
  test_honest_solutions_importing_threading_finish[threads, queue, multiprocessing] CLOSED
      (multiprocessing raised PermissionError in the sandbox: /dev/shm, where its SemLocks
      live, was not writable; it is each run's own tmpfs now). Was (NR,
      TIMEOUT: the line is printed and marked, then the process never exits. `threading`, first
      imported on the solution's thread (ThreadPoolExecutor; multiprocessing.Pool imports it),
      records that thread as its main thread; the interpreter's exit (threading._shutdown)
      waits for it, and the guard's loop never returns. Any solution importing threading,
      queue (a BFS's queue.Queue), logging, subprocess, concurrent.futures or multiprocessing
      hangs (checked with `python3 -S`: numpy, heapq, collections, decimal, dataclasses,
      typing do not import threading).)
  test_honest_ordinary_solutions_pass[recursion, generator]                CLOSED
      (sys.setrecursionlimit with 20,000 Python frames; a generator: OK).

Not tried (time): threading.excepthook, __index__/__hash__ during coercion
(exact builtins only reach the harness), a result slow to coerce (the coercion runs inside the
harness's clock).

Run: PYTHONPATH=src python3 -m pytest -q tests/security/test_redteam_round7.py
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from squares_task import SQUARES_BASELINE, SQUARES_HARNESS, SQUARES_INSTANCE, SQUARES_REFERENCE

from perfgym.judge import Candidate, Judge, JudgeConfig, Stage
from perfgym.rewards import get_reward
from perfgym.tasks import load_suite

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures/perfcodebench/executable_tasks"


# -- attacks: no work ---------------------------------------------------------------------------
#: Rebinds the harness module's own global names at import time (the solution's thread).
PY_MAIN_GLOBALS = """import json as _json, sys as _sys, types as _types
_harness = _sys.modules["__main__"]
def _dumps(obj, *args, **kwargs):
    if isinstance(obj, dict) and "ok" in obj:
        obj = dict(obj, ok=True)
        for key in list(obj):
            if key.startswith("actual_") and "expected_" + key[7:] in obj:
                obj[key] = obj["expected_" + key[7:]]
    return _json.dumps(obj, *args, **kwargs)
_harness.json = _types.SimpleNamespace(dumps=_dumps)
_fake_sys = _types.ModuleType("sys")
_fake_sys.__dict__.update(vars(_sys))
_fake_sys.exit = int
_harness.sys = _fake_sys
class _Zero(SystemExit):
    def __init__(self, *args):
        SystemExit.__init__(self, 0)
_harness.SystemExit = _Zero
def range_sums(values, queries):
    return [0] * len(queries)
def checksum(values):
    return 0
"""
#: The same without writing one name of the harness's module: json.dumps's code replaced in
#: place (the function object the wrapper compares by identity stays), `sys.exit` rebound in the
#: sys module, `SystemExit` in builtins (the wrapper's own `except SystemExit` then catches it).
PY_IN_PLACE = """import builtins, json, sys
def _pg_forge(obj):
    if isinstance(obj, dict) and "ok" in obj:
        obj = dict(obj, ok=True)
        for key in list(obj):
            if key.startswith("actual_") and "expected_" + key[7:] in obj:
                obj[key] = obj["expected_" + key[7:]]
    return json.JSONEncoder().encode(obj)
json._pg_forge = _pg_forge
def _dumps(obj, *, skipkeys=False, ensure_ascii=True, check_circular=True, allow_nan=True,
           cls=None, indent=None, separators=None, default=None, sort_keys=False, **kw):
    return _pg_forge(obj)
json.dumps.__code__ = _dumps.__code__
sys.exit = int
_Exit = SystemExit
class _Zero(_Exit):
    def __init__(self, *args):
        _Exit.__init__(self, 0)
builtins.SystemExit = _Zero
def range_sums(values, queries):
    return [0] * len(queries)
def checksum(values):
    return 0
"""
#: No work: at import it reads its own memory (/proc/self/maps, /proc/self/mem) for the one
#: run of 32 lowercase hex digits there, the nonce the wrapper read before the harness ran; then
#: a line and the run's mark, and os._exit(0).
PY_PROC_MEM = """import os, re, sys
def _scan():
    found = set()
    with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", 0) as mem:
        for line in maps:
            parts = line.split()
            if "r" not in parts[1] or (len(parts) > 5 and parts[5].startswith("/")):
                continue
            if len(parts) > 5 and parts[5] in ("[vvar]", "[vsyscall]"):
                continue
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            try:
                mem.seek(lo)
                data = mem.read(hi - lo)
            except (OSError, ValueError, OverflowError):
                continue
            found.update(re.findall(rb"(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])", data))
    return found
_cands = _scan()
def range_sums(values, queries):
    nonce = next(iter(_cands)).decode() if len(_cands) == 1 else "?"
    line = '{"ok": true, "elapsed_ns": 5000, "queries": 300}'
    sys.stdout.write(line + '\\nPERFGYM_HARNESS_END %s ok\\n' % nonce)
    sys.stdout.flush()
    os._exit(0)
"""
#: Correct (the baseline's loop); the harness's clock runs at a twentieth of its speed.
PY_SLOW_CLOCK = (
    """import time as _time
_real = _time.perf_counter_ns
_time.perf_counter_ns = lambda: _real() // 20
"""
    + SQUARES_BASELINE
)
PY_OS_EXIT = """import os, sys
def checksum(values):
    sys.stdout.write('{"ok": true, "elapsed_ns": 5000, "expected_checksum": 1, '
                     '"actual_checksum": 1}\\n')
    sys.stdout.flush()
    os._exit(0)
"""
PY_ATEXIT = """import atexit, sys
def _forge():
    sys.stdout.write('{"ok": true, "elapsed_ns": 5000, "queries": 300}\\n')
    sys.stdout.flush()
atexit.register(_forge)
def range_sums(values, queries):
    return [0] * len(queries)
"""
PY_CYCLIC = """def range_sums(values, queries):
    a = []
    a.append(a)
    return a
"""

# -- honest programs ----------------------------------------------------------------------------
PY_NUMPY_SCALARS = """import numpy as np
def range_sums(values, queries):
    prefix = np.concatenate(([0], np.cumsum(np.asarray(values, dtype=np.int64))))
    return [prefix[hi] - prefix[lo] for lo, hi in queries]
"""
PY_SIGNAL_IMPORT = """import signal
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
def range_sums(values, queries):
    prefix = [0]
    for v in values:
        prefix.append(prefix[-1] + v)
    return [prefix[hi] - prefix[lo] for lo, hi in queries]
"""
_PREFIX = """def _answer(values, queries):
    prefix = [0]
    for v in values:
        prefix.append(prefix[-1] + v)
    return [prefix[hi] - prefix[lo] for lo, hi in queries]
"""
HONEST = {
    "recursion": """import sys
sys.setrecursionlimit(100_000)
def _prefix(values, i, acc, out):
    if i == len(values):
        return out
    out.append(acc + values[i])
    return _prefix(values, i + 1, acc + values[i], out)
def range_sums(values, queries):
    prefix = [0] + _prefix(values, 0, 0, [])
    return [prefix[hi] - prefix[lo] for lo, hi in queries]
""",
    "generator": """def _running(values):
    total = 0
    yield total
    for v in values:
        total += v
        yield total
def range_sums(values, queries):
    prefix = list(_running(values))
    return [sum(prefix[hi] - prefix[lo] for _ in (0,)) for lo, hi in queries]
""",
}

#: Honest, and they import `threading` (a thread pool; multiprocessing's Pool imports it): the
#: first import of threading on the solution's thread makes that thread threading's "main
#: thread", and the interpreter's exit waits for it forever (the guard's loop never returns).
HANGS = {
    "threads": _PREFIX
    + """from concurrent.futures import ThreadPoolExecutor
def range_sums(values, queries):
    with ThreadPoolExecutor(2) as pool:
        half = len(queries) // 2
        a, b = pool.map(lambda q: _answer(values, q), [queries[:half], queries[half:]])
    return a + b
""",
    "queue": _PREFIX
    + """import queue
def range_sums(values, queries):
    pending = queue.Queue()
    for q in queries:
        pending.put(q)
    return _answer(values, [pending.get() for _ in queries])
""",
    "multiprocessing": _PREFIX
    + """import multiprocessing
def range_sums(values, queries):
    half = len(values) // 2
    with multiprocessing.get_context("fork").Pool(2) as pool:
        total = sum(pool.map(sum, [values[:half], values[half:]]))
    answer = _answer(values, queries)
    assert total == sum(values)
    return answer
""",
}

ATTACKS = {
    "globals_range": ("py_range_sums", PY_MAIN_GLOBALS),
    "globals_squares": ("py_square_checksum", PY_MAIN_GLOBALS),
    "in_place_range": ("py_range_sums", PY_IN_PLACE),
    "in_place_squares": ("py_square_checksum", PY_IN_PLACE),
    "proc_mem": ("py_range_sums", PY_PROC_MEM),
    "slow_clock": ("py_square_checksum", PY_SLOW_CLOCK),
    "os_exit": ("py_square_checksum", PY_OS_EXIT),
    "atexit": ("py_range_sums", PY_ATEXIT),
    "cyclic": ("py_range_sums", PY_CYCLIC),
    "numpy_scalars": ("py_range_sums", PY_NUMPY_SCALARS),
    "signal_import": ("py_range_sums", PY_SIGNAL_IMPORT),
    **{f"honest_{k}": ("py_range_sums", src) for k, src in HONEST.items()},
    **{f"hang_{k}": ("py_range_sums_hang", src) for k, src in HANGS.items()},
}


def _suite_dir(root: Path) -> Path:
    shutil.copytree(FIXTURES / "py_range_sums", root / "py_range_sums")
    # The same task with a 1 s limit (a 10 s wall backstop): for the programs that hang at exit.
    hang = root / "py_range_sums_hang"
    shutil.copytree(FIXTURES / "py_range_sums", hang)
    instance = json.loads((hang / "instance.json").read_text())
    instance.update(task_id="py_range_sums_hang", benchmark_timeout_sec=1.0)
    (hang / "instance.json").write_text(json.dumps(instance))
    squares = root / "py_square_checksum"
    for part, text in (("harness/bench.py", SQUARES_HARNESS),
                       ("baseline/solution.py", SQUARES_BASELINE),
                       ("reference/solution.py", SQUARES_REFERENCE)):  # fmt: skip
        (squares / part).parent.mkdir(parents=True, exist_ok=True)
        (squares / part).write_text(text)
    (squares / "instance.json").write_text(json.dumps(SQUARES_INSTANCE))
    return root


@pytest.fixture(scope="module")
def suite():
    # Not under pytest's tmp_path: its 0700 parents keep the sandbox's user out of the tasks.
    path = Path(tempfile.mkdtemp(prefix="perfgym-redteam7-"))
    path.chmod(0o755)
    try:
        yield load_suite(_suite_dir(path))
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def verdicts(suite):
    """Every program, and each task's reference, judged in one batch (no A/A band: no speed is
    decided, so an attack scores below the honest reference only by failing a stage)."""
    names = list(ATTACKS)
    cands = [Candidate(suite.get(t), source=src, model=n) for n, (t, src) in ATTACKS.items()]
    for tid in ("py_range_sums", "py_square_checksum"):
        task = suite.get(tid)
        assert task.reference is not None
        names.append(f"{tid}:reference")
        cands.append(Candidate(task, source=task.reference.source, model="honest"))
    with Judge(JudgeConfig(repeats=1, noise_rounds=0)) as judge:
        got = judge.judge_many(cands)
    return dict(zip(names, got, strict=True))


def _no_work_is_not_ok(v) -> None:
    assert v.stage is not Stage.OK, (
        f"a program that does no work is OK ({v.harness_end_mark}; {v.harness_answer})"
    )


def test_the_references_are_ok(verdicts):
    for tid in ("py_range_sums", "py_square_checksum"):
        v = verdicts[f"{tid}:reference"]
        assert v.stage is Stage.OK, v.reason
    sq = verdicts["py_square_checksum:reference"]
    assert sq.harness_answer == "checked: actual_checksum, expected_checksum"


@pytest.mark.parametrize("name", ["globals_range", "globals_squares"])
def test_python_harness_module_globals_forge_the_line(verdicts, name):
    _no_work_is_not_ok(verdicts[name])


@pytest.mark.parametrize("name", ["in_place_range", "in_place_squares"])
def test_python_in_place_patches_forge_the_line(verdicts, name):
    _no_work_is_not_ok(verdicts[name])


def test_python_nonce_read_from_its_own_memory_is_not_ok(verdicts):
    _no_work_is_not_ok(verdicts["proc_mem"])


@pytest.mark.parametrize("name,tid", [("globals_range", "py_range_sums"),
                                      ("globals_squares", "py_square_checksum")])  # fmt: skip
def test_python_harness_module_globals_score_below_the_reference(verdicts, name, tid):
    got, ref = get_reward("rlpf")([verdicts[name], verdicts[f"{tid}:reference"]])
    assert got is not None and ref is not None
    assert got < ref, (name, got, ref)


def test_python_patched_perf_counter_is_not_the_harnesss_clock(verdicts):
    """The patch is the solution's process's own: the harness times the baseline's loop with
    its own clock, and the program is timed as the baseline it is (was: flagged, the floor).
    Its clock runs 20x slow: through to the harness, its time would be 1/20 of the baseline's.
    Asserted on that order of magnitude, not on the reward: this task's reference is only
    ~1.3x faster than its baseline, so one run each (repeats=1) on a loaded machine sometimes
    ranks the baseline's loop first and pays it 1.26 (full65, full69: the candidate at 0.13 s
    against the reference's 0.14 s is noise, not the patch)."""
    v = verdicts["slow_clock"]
    assert v.stage is Stage.OK, v.reason  # correct: it does the work
    assert v.candidate is not None and v.baseline is not None, v.flags
    assert v.candidate.estimate_s >= 0.4 * v.baseline.estimate_s, (v.candidate, v.baseline)


@pytest.mark.parametrize("name", ["os_exit", "atexit", "cyclic"])
def test_python_forged_lines_and_odd_results_are_not_ok(verdicts, name):
    _no_work_is_not_ok(verdicts[name])


def test_honest_numpy_scalars_are_not_refused(verdicts):
    v = verdicts["numpy_scalars"]
    assert v.stage is Stage.OK, (v.stage, v.reason)


def test_honest_signal_setup_at_import_is_not_a_crash(verdicts):
    v = verdicts["signal_import"]
    assert v.stage is Stage.OK, (v.stage, v.reason)


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_ordinary_solutions_pass(verdicts, name):
    v = verdicts[f"honest_{name}"]
    assert v.stage is Stage.OK, (v.stage, v.reason)


@pytest.mark.parametrize("name", ["queue", "threads", "multiprocessing"])
def test_honest_solutions_importing_threading_finish(verdicts, name):
    v = verdicts[f"hang_{name}"]
    assert v.stage is Stage.OK, (v.stage, v.detail, v.reason)


PUBLISHED = "python_log_match_checksum_v2700_061"


@pytest.fixture(scope="module")
def published():
    """Both forgeries on the published task, judged in one batch (its runs shared)."""
    data = os.environ.get("PERFGYM_PERFCODEBENCH")
    if not data or not (Path(data) / PUBLISHED).is_dir():
        pytest.skip("PERFGYM_PERFCODEBENCH does not hold " + PUBLISHED)
    path = Path(tempfile.mkdtemp(prefix="perfgym-redteam7-pcb-"))
    path.chmod(0o755)
    try:
        shutil.copytree(Path(data) / PUBLISHED, path / PUBLISHED)
        task = load_suite(path).get(PUBLISHED)
        names = ["globals", "in_place"]
        cands = [
            Candidate(task, source=src.replace("def checksum(values):", "def run(rows):"), model=n)
            for n, src in zip(names, (PY_MAIN_GLOBALS, PY_IN_PLACE), strict=True)
        ]
        with Judge(JudgeConfig(repeats=1, noise_rounds=0)) as judge:
            return dict(zip(names, judge.judge_many(cands), strict=True))
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.mark.parametrize("name", ["globals", "in_place"])
def test_the_forgeries_on_a_published_task(published, name):
    _no_work_is_not_ok(published[name])
