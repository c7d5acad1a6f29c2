"""The Python harness guard (trailer_src/perfgym_guard.py): plain results, the solution's own
thread, and the audit hook, run directly through the wrapper (no sandbox: fast). The same
attacks through the real judge are in tests/security/test_redteam_round5.py."""

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


def _guard():
    spec = importlib.util.spec_from_file_location(
        "perfgym_guard_under_test", SRC / "perfgym_guard.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # defines only: install() is what adds the hook
    return module


class _Yes(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


class _Own:
    def __eq__(self, other):
        return True

    __hash__ = None


def test_plain_keeps_builtins_and_rebuilds_or_refuses_the_rest():
    g = _guard()
    plain = g._plain
    same = [1, [1, 2], (1, "x"), {"a": 1.5}, {1, 2}, None, True, b"x"]
    for value in same:
        assert plain(value, plain) is value
    point = namedtuple("point", "x y")
    for value, want in ((_Yes(3), 3), ([1, _Yes(2)], [1, 2]), (point(1, 2), (1, 2)),
                        (Counter("aab"), {"a": 2, "b": 1}), ({"k": [_Yes(1)]}, {"k": [1]})):  # fmt: skip
        got = plain(value, plain)
        assert got == want and type(got) is type(want), (value, got)
        assert not isinstance(got, (_Yes, point, Counter))
    for value in (_Own(), [_Own()]):
        got = plain(value, plain)
        refused = got if type(got) is str else got[0]
        assert type(refused) is str and "refused" in refused


def _run(
    tmp_path: Path, solution: str, *flags: str, harness: str = HARNESS
) -> tuple[int, str, str]:
    (tmp_path / "w").mkdir(exist_ok=True)
    for name in ("perfgym_trailer.py", "perfgym_guard.py", "perfgym_solution.py"):
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


@pytest.mark.parametrize("attack", ["frame_walk", "tamper"])
def test_an_attack_on_the_solutions_thread_is_a_wrong_answer(tmp_path, attack):
    source = {"frame_walk": FRAME_WALK, "tamper": TAMPER}[attack]
    rc, out, err = _run(tmp_path, source)
    assert rc == 1, (out, err)
    assert _line(out)["ok"] is False


def test_frames_taken_on_the_harnesss_thread_end_the_run(tmp_path):
    rc, out, err = _run(tmp_path, DEL_ON_HARNESS_THREAD)
    assert rc == 86, (out, err)
    assert "sys._getframe on the harness's thread" in err
    assert '"ok": true' not in out


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


def _made_plain(g, value):
    """The guard's conversion, its numpy job run here as on the solution's thread."""
    calls = []

    def on_worker(what, a):
        calls.append(what)
        return g._numpy_values(a, g._numpy_values)

    got = g._made_plain(value, on_worker, g._plain)
    assert set(calls) <= {"numpy"}
    return got


def test_numpy_values_reach_the_harness_as_plain_builtins(tmp_path):
    # Red team round 7: a list of numpy.int64 (no int subclass) was refused, an honest WO.
    np = pytest.importorskip("numpy")
    g = _guard()
    for value, want in ((np.int64(7), 7), ([np.int64(1), np.float64(0.5)], [1, 0.5]),
                        (np.arange(3), [0, 1, 2]), (np.bool_(True), True)):  # fmt: skip
        got = _made_plain(g, value)
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

    g = _guard()
    got = _made_plain(g, Fake())
    assert type(got) is str and "refused" in got
    # the harness's thread's own pass never calls it: the value goes back to the solution's
    called = []
    Fake.tolist = lambda self: called.append(1)  # type: ignore[method-assign]
    with pytest.raises(g._TO_LIST):
        g._plain(Fake(), g._plain)
    assert called == []


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


#: Swaps the code of `on_worker`, the hand-off the harness's thread runs, reached through the
#: shim the harness keeps in a global: the next call would run the solution's code on the
#: harness's thread (a signal handler set there, fired and removed within one call, gets its
#: frame: the answer). Refused at the swap.
CODE_SWAP = """import sys
def _mine(what, a, b=None, c=None, *rest):
    return [0]
def run(values):
    state = sys.modules["__main__"].solution.__getattr__.__self__
    on_worker = next(x for x in state if type(x) is type(_mine) and x.__name__ == "on_worker")
    on_worker.__code__ = _mine.__code__
    return [0]
"""


def test_the_guards_own_functions_cannot_be_changed(tmp_path):
    rc, out, err = _run(tmp_path, CODE_SWAP)
    assert rc == 86, (out, err)
    assert "__code__ of the guard's own function" in err


#: `signal.signal(SIGPIPE, SIG_DFL)` at import, common in competitive programming: CPython
#: refuses it off the main thread, and the solution is imported on its own (red team round 7,
#: an honest NR). It is forwarded to the harness's thread while the solution is imported.
SIGNALS = """import signal
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
try:
    signal.signal(signal.SIGALRM, lambda num, frame: None)  # would run on the harness's thread
    HANDLER = "set"
except ValueError as exc:
    HANDLER = "refused" if "SIG_DFL or SIG_IGN" in str(exc) else str(exc)
_later = signal.signal
def run(values):
    assert HANDLER == "refused", HANDLER
    try:
        _later(signal.SIGPIPE, signal.SIG_IGN)  # after the import: CPython's refusal again
    except ValueError:
        pass
    else:
        raise AssertionError("set after the import")
    assert signal.getsignal(signal.SIGPIPE) == signal.SIG_DFL
    sums = [0, *itertools.accumulate(values)]
    return [sums[k] for k in range(0, 20000, 2000)]
"""


def test_sig_dfl_and_sig_ign_are_set_at_import_only(tmp_path):
    rc, out, err = _run(tmp_path, "import itertools\n" + SIGNALS)
    assert rc == 0, (out, err)  # every assertion in `run` held
    assert _line(out)["ok"] is True


#: A collector's __del__ on the harness's thread keeps a traceback (reading no `tb_frame`
#: there); the next call, on the solution's thread, reads it and walks up to `expected`
#: (helper-48: the hook refused frame reads by the reading thread only).
GC_HANDOFF = """import gc, threading
gc.set_threshold(1)
_kept = []
class _Cycle:
    def __init__(self):
        self.me = self
    def __del__(self):
        if threading.get_ident() == threading.main_thread().ident:
            try:
                raise KeyError
            except KeyError as e:
                _kept.append(e.__traceback__)
        else:
            _Cycle()
_Cycle()
def run(values):
    for _ in range(200):
        for tb in _kept:
            f = tb.tb_frame
            while f is not None:
                if "expected" in f.f_locals:
                    return f.f_locals["expected"]
                f = f.f_back
        _Cycle()
    return []
"""


def test_a_frame_of_the_harnesss_thread_is_refused_on_any_thread(tmp_path):
    rc, out, err = _run(tmp_path, GC_HANDOFF)
    assert rc == 86, (out, err)  # 5 of 5 runs here; OK with the answer before
    assert "tb_frame: a frame of the harness's thread" in err
    assert '"ok": true' not in out, err


#: Where the solution's own result is let go, and what its `signal.signal` stand-in holds:
#: helper-48 reached the stand-in's request list and locks through its __defaults__, put an
#: object with a __del__ there, and the harness's thread dropped it (its __del__ ran there).
WHERE = """import itertools, signal, sys, threading
HELD = sorted({type(d).__name__ for d in signal.signal.__defaults__})
def _thread_name():
    return "harness" if threading.get_ident() == threading.main_thread().ident else "solution"
class Sums(list):
    def __del__(self):
        sys.stderr.write("Sums.__del__ on the " + _thread_name() + " thread\\n")
def run(values):
    assert not set(HELD) & {"list", "dict", "set", "lock", "RLock"}, HELD
    sums = [0, *itertools.accumulate(values)]
    return Sums(sums[k] for k in range(0, 20000, 2000))
"""


def test_the_solutions_objects_are_let_go_and_converted_on_its_own_thread(tmp_path):
    rc, out, err = _run(tmp_path, WHERE)
    assert rc == 0, (out, err)
    assert _line(out)["ok"] is True
    assert "on the harness thread" not in err, err
    assert "Sums.__del__ on the solution thread" in err or "Sums.__del__" not in err, err


#: helper-49: `_plain` hashed each value's type on the harness's thread, so a metaclass
#: `__hash__` ran there; it resumed a generator whose frame was taken on the solution's thread,
#: and that frame's `f_back` (not audited) led to the harness's `expected`, written into the
#: very list being converted. A class of a metaclass of its own is refused now, untouched.
METACLASS = """import sys, threading
_frame = []
def _gen():
    _frame.append(sys._getframe())
    while True:
        f = _frame[0].f_back
        while f is not None and "expected" not in f.f_locals:
            f = f.f_back
        yield None if f is None else f.f_locals["expected"]
_g = _gen()
next(_g)
_result = []
class Meta(type):
    def __hash__(cls):
        if threading.get_ident() == threading.main_thread().ident:
            sys.stderr.write("metaclass code on the harness's thread\\n")
            exp = next(_g)
            if exp is not None:
                _result[:] = list(exp)
        return 12345
    def __eq__(cls, other):
        return cls is other
class Evil(metaclass=Meta):
    pass
def run(values):
    _result[:] = [Evil()]
    return _result
"""


def test_a_class_of_its_own_metaclass_is_refused_untouched(tmp_path):
    rc, out, err = _run(tmp_path, METACLASS)
    assert rc == 1, (out, err)
    assert _line(out)["ok"] is False
    assert "on the harness's thread" not in err, err


def test_an_audit_hook_of_the_solutions_own_ends_the_run(tmp_path):
    # it would run on the harness's thread at the harness's next audited event (an open())
    source = "import sys\nsys.addaudithook(lambda event, args: None)\n" + HONEST
    rc, out, err = _run(tmp_path, source)
    assert rc == 86, (out, err)
    assert "sys.addaudithook" in err


def test_an_intenum_result_is_an_int(tmp_path):
    g = _guard()
    import enum

    class Small(enum.IntEnum):
        ONE = 1

    got = g._plain([Small.ONE], g._plain)
    assert got == [1] and type(got[0]) is int


#: The shim is a module the harness holds; a harness that keeps it in a global lets the
#: solution set a name on it at import, and the harness then calls the solution's own function
#: directly, on its thread, its result never made plain. Module attributes are not audited,
#: and a class of the shim's own could be changed unaudited too: the designed fix is the
#: harness in a process of its own (docs/security.md, section 6b).
SHIM_SET = """import sys
class _Any(list):
    def __eq__(self, other):
        return True
def _mine(values):
    return _Any()
_shim = getattr(sys.modules["__main__"], "solution", None)
if _shim is not None:
    _shim.run = _mine
def run(values):
    return []
"""


@pytest.mark.xfail(strict=True, reason="a name set on the shim module at import (helper-49): "
                   "the harness calls the solution's own function directly")  # fmt: skip
def test_a_name_set_on_the_shim_is_not_called(tmp_path):
    rc, out, err = _run(tmp_path, SHIM_SET)
    assert rc != 0 and '"ok": true' not in out, (out, err)


EXPECTS_VALUEERROR = HARNESS.replace(
    "    actual = solution.run(values)\n",
    "    try:\n        solution.run(None)\n    except ValueError as exc:\n"
    "        assert str(exc) == 'no values', exc\n"
    "    else:\n        raise SystemExit(2)\n"
    "    actual = solution.run(values)\n",
)


def test_a_builtin_exception_reaches_the_harness_as_its_type(tmp_path):
    # helper-49: a harness expecting the solution's ValueError got a RuntimeError
    assert EXPECTS_VALUEERROR != HARNESS
    source = HONEST.replace(
        "def run(values):\n",
        "def run(values):\n    if values is None:\n        raise ValueError('no values')\n",
    )
    rc, out, err = _run(tmp_path, source, harness=EXPECTS_VALUEERROR)
    assert rc == 0, (out, err)
    assert _line(out)["ok"] is True
