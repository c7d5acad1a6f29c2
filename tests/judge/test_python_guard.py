"""The Python harness guard (trailer_src/perfgym_guard.py, perfgym_solution_process.py): the
solution in a process of its own, plain results, replies decoded without running code, run
directly through the wrapper (no sandbox: fast). The same attacks through the real judge are in
tests/security/test_redteam_round5.py, round7.py and test_harness_process_split.py."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections import Counter, namedtuple
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src/perfgym/judge/trailer_src"

#: A harness that keeps the solution's module in a global (as many published ones do), computes
#: its answer before calling, and prints one line.
HARNESS = """import importlib.util, json, os, sys
spec = importlib.util.spec_from_file_location("perfcodebench_solution",
                                              os.environ["PERFCODEBENCH_SOLUTION"])
solution = importlib.util.module_from_spec(spec)
spec.loader.exec_module(solution)
def main():
    values = [(i * 7919) % 1009 for i in range(20000)]
    expected = [sum(values[:k]) for k in range(0, 20000, 2000)]
    actual = solution.run(values)
    print(json.dumps({"ok": actual == expected, "elapsed_ns": 1}))
    if actual != expected:
        raise SystemExit(1)
main()
"""
HONEST = """import itertools
def run(values):
    sums = [0, *itertools.accumulate(values)]
    return [sums[k] for k in range(0, 20000, 2000)]
"""
#: Reaches the guard through the harness's global and tries to switch its conversion off.
TAMPER = """import sys
class _Any(list):
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
def run(values):
    shim = sys.modules["__main__"].solution
    bound = shim.__getattr__
    for f in (bound.__func__, *[x for x in bound.__self__ if callable(x)]):
        g = getattr(f, "__globals__", {})
        for name in list(g):
            if name.startswith("_plain"):
                g[name] = lambda x, rec=None: x
        kw = getattr(f, "__kwdefaults__", None)
        if kw:
            kw.update({k: (lambda x, rec=None: x) for k in kw if "plain" in k})
    return _Any()
"""
DEL_ON_HARNESS_THREAD = """import gc, sys
gc.set_threshold(1)
_kept = []
class _Cycle:
    def __init__(self):
        self.me = self
    def __del__(self):
        f = sys._getframe(1)
        while f is not None:
            _kept.append(f)
            f = f.f_back
        _Cycle()
_Cycle()
def run(values):
    for f in _kept:
        if "expected" in f.f_locals:
            return f.f_locals["expected"]
"""
FRAME_WALK = """import sys
def run(values):
    f = sys._getframe(1)
    while f is not None:
        if "expected" in f.f_locals:
            return f.f_locals["expected"]
        f = f.f_back
"""


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"{name}_under_test", SRC / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # defines only: install() / main() is what acts
    return module


def _guard():
    return _module("perfgym_guard")


def _plain():
    return _module("perfgym_solution_process").plain


_Pair = namedtuple("_Pair", "x y")


class _Yes(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


class _Own:
    def __eq__(self, other):
        return True

    __hash__ = None


def test_plain_keeps_builtins_and_rebuilds_or_refuses_the_rest():
    plain = _plain()
    same = [1, [1, 2], (1, "x"), {"a": 1.5}, {1, 2}, None, True, b"x"]
    for value in same:
        assert plain(value) is value
    point = namedtuple("point", "x y")
    for value, want in ((_Yes(3), 3), ([1, _Yes(2)], [1, 2]), (point(1, 2), (1, 2)),
                        (Counter("aab"), {"a": 2, "b": 1}), ({"k": [_Yes(1)]}, {"k": [1]})):  # fmt: skip
        got = plain(value)
        assert got == want and type(got) is type(want), (value, got)
        assert not isinstance(got, (_Yes, point, Counter))
    for value in (_Own(), [_Own()]):
        got = plain(value)
        refused = got if type(got) is str else got[0]
        assert type(refused) is str and "refused" in refused


def _run(tmp_path: Path, solution: str, *flags: str, harness: str = HARNESS
         ) -> tuple[int, str, str]:  # fmt: skip
    (tmp_path / "w").mkdir(exist_ok=True)
    for name in (
        "perfgym_trailer.py",
        "perfgym_guard.py",
        "perfgym_solution.py",
        "perfgym_solution_process.py",
    ):
        (tmp_path / "w" / name).write_text((SRC / name).read_text())
    (tmp_path / "harness.py").write_text(harness)
    sol = tmp_path / "solution.py"
    sol.write_text(solution)
    env = dict(os.environ, PERFCODEBENCH_SOLUTION=str(sol))
    argv = [sys.executable, *flags, str(tmp_path / "w/perfgym_trailer.py"), "--solution", str(sol),
            str(tmp_path / "harness.py")]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
    return done.returncode, done.stdout, done.stderr


def _line(stdout: str) -> dict:
    return json.loads(next(x for x in stdout.splitlines() if x.startswith("{")))


def test_an_honest_solution_passes_through_the_guard(tmp_path):
    rc, out, err = _run(tmp_path, HONEST)
    assert rc == 0, err
    assert _line(out)["ok"] is True


@pytest.mark.parametrize("attack", ["frame_walk", "tamper", "del_on_harness_thread"])
def test_an_attack_from_the_solutions_process_fails_the_run(tmp_path, attack):
    # Its frames, __main__ and collector are its own process's: no harness frame, no shim, no
    # guard to tamper with. The harness's check fails (ok false) or its call raises.
    source = {"frame_walk": FRAME_WALK, "tamper": TAMPER,
              "del_on_harness_thread": DEL_ON_HARNESS_THREAD}[attack]  # fmt: skip
    rc, out, err = _run(tmp_path, source)
    assert rc == 1, (out, err)
    assert '"ok": true' not in out and "PERFGYM_HARNESS_END" not in out


def test_a_numpy_solution_passes_through_the_guard(tmp_path):
    # numpy's import loads a library through ctypes and sets its own functions' defaults: both
    # allowed (published candidates import numpy).
    pytest.importorskip("numpy")
    source = """import numpy as np
def run(values):
    sums = np.concatenate(([0], np.cumsum(np.asarray(values, dtype=np.int64))))
    return [int(sums[k]) for k in range(0, 20000, 2000)]
"""
    rc, out, err = _run(tmp_path, source)
    assert rc == 0, err
    assert _line(out)["ok"] is True


def test_numpy_values_reach_the_harness_as_plain_builtins(tmp_path):
    # Red team round 7: a list of numpy.int64 (no int subclass) was refused, an honest WO.
    np = pytest.importorskip("numpy")
    plain = _plain()
    for value, want in ((np.int64(7), 7), ([np.int64(1), np.float64(0.5)], [1, 0.5]),
                        (np.arange(3), [0, 1, 2]), (np.bool_(True), True)):  # fmt: skip
        got = plain(value)
        assert got == want and type(got) is type(want), (value, got)
    source = """import numpy as np
def run(values):
    sums = np.concatenate(([0], np.cumsum(np.asarray(values, dtype=np.int64))))
    return [sums[k] for k in range(0, 20000, 2000)]
"""
    rc, out, err = _run(tmp_path, source)
    assert rc == 0, err
    assert _line(out)["ok"] is True


def test_a_class_posing_as_numpy_gets_no_further_than_its_values(tmp_path):
    class Fake:
        __module__ = "numpy"

        def tolist(self):
            return _Own()

    got = _plain()(Fake())
    assert type(got) is str and "refused" in got


def test_a_solution_importing_threading_exits(tmp_path):
    # Red team round 7: threading first imported on the solution's thread took it for the main
    # thread, and the interpreter's exit waited for it forever (NR TIMEOUT for honest work).
    source = (
        HONEST
        + """
from concurrent.futures import ThreadPoolExecutor
with ThreadPoolExecutor(2) as _pool:
    _pool.submit(sum, [1, 2]).result()
"""
    )
    # -S, as the sandbox runs Python: here the site hooks import threading first otherwise
    rc, out, err = _run(tmp_path, source, "-S")
    assert rc == 0, err
    assert _line(out)["ok"] is True


def test_replies_decode_to_plain_values_only():
    import pickle

    g = _guard()
    for value in ([1, 2.5, "x", b"y", None, True], {"a": (1, 2)}, {1, 2}, frozenset({3}),
                  bytearray(b"z"), complex(1, 2), [[1], [2, [3]]]):  # fmt: skip
        got = g.decode(pickle.dumps(value, 5))
        assert got == value and type(got) is type(value)

    class Reduces:
        def __reduce__(self):
            return (os.system, ("true",))

    for bad in (pickle.dumps(Reduces(), 5), pickle.dumps(Counter("ab"), 5),
                pickle.dumps(_Pair(1, 2), 2), b"\x80\x05garbage", b""):  # fmt: skip
        with pytest.raises(RuntimeError, match="not plain values"):
            g.decode(bad)


#: Calls the solution three times with the same arguments: a flat list (sent once, then a fresh
#: copy of the kept one each call), a list of lists (sent every call) and a keyword.
REPEAT_HARNESS = """import importlib.util, json, os, sys
spec = importlib.util.spec_from_file_location("solution", os.environ["PERFCODEBENCH_SOLUTION"])
solution = importlib.util.module_from_spec(spec)
spec.loader.exec_module(solution)
values, rows = list(range(1000)), [[1, 2], [3, 4]]
got = [solution.run(values, rows, scale=2) for _ in range(3)]
want = 2 * (sum(values) + 10)
print(json.dumps({"ok": got == [want] * 3 and values == list(range(1000))
                  and rows == [[1, 2], [3, 4]], "elapsed_ns": 1, "got": got}))
"""
#: Correct, and empties its arguments in place: each call must still get the harness's values.
MUTATES = """def run(values, rows, *, scale):
    total = scale * (sum(values) + sum(map(sum, rows)))
    values.clear()
    for r in rows:
        r.clear()
    return total
"""


def test_repeated_arguments_reach_each_call_as_sent(tmp_path):
    rc, out, err = _run(tmp_path, MUTATES, harness=REPEAT_HARNESS)
    assert rc == 0, err
    assert _line(out)["ok"] is True, out


def test_an_argument_that_cannot_be_sent_is_an_error_not_an_answer(tmp_path):
    harness = HARNESS.replace("solution.run(values)", "solution.run(lambda: values)")
    rc, out, err = _run(tmp_path, "def run(f):\n    return f()\n", harness=harness)
    assert rc == 1 and "cannot be sent to the solution's process" in err, err
    assert '"ok"' not in out


def test_the_solution_imports_on_its_processs_main_thread(tmp_path):
    # Red team round 7: on a thread, signal.signal at import raised ValueError (an honest NR).
    source = HONEST + "import signal\nsignal.signal(signal.SIGPIPE, signal.SIG_DFL)\n"
    rc, out, err = _run(tmp_path, source)
    assert rc == 0, err
    assert _line(out)["ok"] is True


def test_the_solutions_process_ends_with_the_harness(tmp_path):
    # A thread that never ends keeps its interpreter alive: killed after the grace period, and
    # the mark is still written (the harness finished).
    source = HONEST + (
        "import threading, time\nthreading.Thread(target=time.sleep, args=(600,)).start()\n"
    )
    rc, out, err = _run(tmp_path, source)
    assert rc == 0, err
    assert _line(out)["ok"] is True


def test_only_whole_shallow_copies_are_kept():
    g = _guard()
    whole = g._shallow_copy_is_whole
    for value in (1, "x", (1, (2, "y")), [1, 2.5, None], [(1, 2), (3, 4)], {1: (2,)},
                  {1, 2}, bytearray(b"ab"), frozenset({(1,)})):  # fmt: skip
        assert whole(value), value
    for value in ([[1], [2]], [{1: 2}], {1: [2]}, ([1],), [_Yes(1)], _Yes(1), [bytearray()]):
        assert not whole(value), value


#: Times a no-op call on a large argument with the harness's timer and with a clock the guard
#: does not wrap (CLOCK_MONOTONIC read directly).
CLOCK_HARNESS = """import importlib.util, json, os, sys, time
spec = importlib.util.spec_from_file_location("solution", os.environ["PERFCODEBENCH_SOLUTION"])
solution = importlib.util.module_from_spec(spec)
spec.loader.exec_module(solution)
values = list(range(300_000))
t, r = time.perf_counter_ns(), time.clock_gettime_ns(time.CLOCK_MONOTONIC)
for _ in range(5):
    solution.run(values)
timed = time.perf_counter_ns() - t
real = time.clock_gettime_ns(time.CLOCK_MONOTONIC) - r
print(json.dumps({"ok": True, "elapsed_ns": timed, "real_ns": real}))
"""


def test_the_harnesss_own_share_of_a_call_is_off_its_timers(tmp_path):
    # Pickling 300,000 ints five times (and comparing them with the last call's) is the
    # harness's process's work for the call, not the solution's: its timers do not count it.
    rc, out, err = _run(tmp_path, "def run(values):\n    return 0\n", harness=CLOCK_HARNESS)
    assert rc == 0, err
    line = _line(out)
    assert 0 < line["elapsed_ns"] < line["real_ns"], line


def test_a_harness_opening_the_solutions_file_itself_is_refused(tmp_path):
    # The split holds only for the path the harness was given (argv, PERFCODEBENCH_SOLUTION);
    # a harness loading the file by a path of its own would run it in its own process.
    harness = HARNESS.replace('os.environ["PERFCODEBENCH_SOLUTION"]',
                              'os.path.join(os.path.dirname(sys.argv[0]), "solution.py")')  # fmt: skip
    assert harness != HARNESS
    rc, out, err = _run(tmp_path, HONEST, harness=harness)
    assert rc == 88 and "opened the solution's file itself" in err, (rc, err)
    assert '"ok"' not in out
