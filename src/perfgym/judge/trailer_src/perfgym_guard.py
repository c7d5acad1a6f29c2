"""perfgym: the harness's side of a PerfCodeBench Python solution that runs in a process of its
own (docs/security.md, section 6b).

The harness's process holds what decides the run: the harness's inputs and expected answers,
its verdict line, and the wrapper's nonce. The solution never runs in it. When the harness
loads the solution (the shim perfgym_solution.py stands in for it), this module starts a fresh
interpreter (posix_spawn: no copy of this process's memory) running
perfgym_solution_process.py, which imports the solution on ITS main thread, as a program of its
own would (signal handlers, fork pools and threads work as usual). Each name the harness reads
from the shim is asked of that process; calling a callable sends the arguments (pickled) over
a pipe and waits for the result. The solution's process has no descriptor of the run's stdout
(its fd 1 is the run's stderr) and no way into this process's memory: this process makes
itself non-dumpable (prctl PR_SET_DUMPABLE 0) before the solution starts, so another process of
the run's uid can neither read /proc/PID/mem nor its fds, nor ptrace it.

A result comes back as bytes the solution's process wrote: whatever they say, they are decoded
by an unpickler that resolves no global (only `complex`, the one plain builtin pickle names),
so no code of the solution's runs here and only plain builtin values reach the harness. The
solution's process makes its values plain before sending them (a builtin's subclass rebuilt as
the builtin, numpy's values through `tolist()`, any other type refused as a string no harness
expects).

The time the arguments take to cross is inside the harness's clock (the call is one the
harness times). Two things keep it small. Arguments byte-for-byte equal to the previous call's
are not sent again: the solution's process keeps them and hands each call a fresh copy, where
this process found a shallow copy to be a whole one (`_shallow_copy_is_whole`), and says so in
its reply. And this process's own share of sending a call (pickling the arguments, deciding
whether they may be kept, comparing them with the last call's: work of perfgym's code here
that depends on the harness's arguments only) is taken off the harness's timers:
`time.perf_counter`, `perf_counter_ns`, `monotonic`, `monotonic_ns`, `time` and `time_ns` read
in this process less the total of that work so far (`_SPENT`). Decoding the reply stays in the
clock: its cost is the solution's to choose, and a reply can make the decoder do work (a set's
or a dict's items deduplicated as it is built) that would otherwise be the solution's. So do
what the solution's process does for a call (unpickling, copying, its work, pickling the
result) and the pipe's hand-offs.

A harness that ends while the solution's process is still alive closes its pipe; the process
then has `EXIT_GRACE_S` to end before it is killed, so no process of the solution outlives the
harness's own.
"""

import io
import os
import pickle
import sys
import time

#: Nanoseconds of this process's own work for the solution's calls so far (see the docstring).
_SPENT = [0]
_NS = time.perf_counter_ns  # the real clock, bound before the harness's timers are wrapped

#: Exit status of a harness whose solution's process could not be started or reached.
FAILED_EXIT = 87
#: Exit status of a harness that opened the solution's file itself (it would run the solution
#: in its own process, where the split does not hold): refused, never run unguarded.
OPENED_EXIT = 88
#: How long the solution's process has to exit after the harness ended.
EXIT_GRACE_S = 2.0
_HERE = os.path.dirname(os.path.abspath(__file__))
_SERVER = os.path.join(_HERE, "perfgym_solution_process.py")
_HEADER = 8
#: The one global a plain value's pickle names (complex numbers); anything else is refused.
_ALLOWED = {("builtins", "complex"): complex}
_ATOMS = frozenset({int, float, complex, str, bytes, bool, type(None)})


def _frozen(x, depth=0):
    """Whether `x` cannot change: an atom, or a tuple/frozenset of such (not too deep)."""
    t = type(x)
    if t in _ATOMS:
        return True
    if (t is tuple or t is frozenset) and depth < 8:
        return set(map(type, x)) <= _ATOMS or all(_frozen(e, depth + 1) for e in x)
    return False


def _shallow_copy_is_whole(x):
    """Whether a shallow copy of `x` is a whole one (the solution's process may keep `x` and
    hand each call such a copy): `x` cannot change, or is a list, set or dict of such values,
    or a bytearray. Decided here, where its time is taken off the harness's timers."""
    t = type(x)
    if _frozen(x) or t is bytearray:
        return True
    if t is list or t is set:
        return set(map(type, x)) <= _ATOMS or all(_frozen(e) for e in x)
    if t is dict:
        return all(_frozen(k) and _frozen(v) for k, v in x.items())
    return False


class _PlainUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        found = _ALLOWED.get((module, name))
        if found is None:
            raise pickle.UnpicklingError(f"perfgym: the solution's reply names {module}.{name}")
        return found

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("perfgym: the solution's reply holds a persistent id")


def decode(data):
    """A reply's bytes as plain builtin values; never runs code named by the bytes."""
    try:
        return _PlainUnpickler(io.BytesIO(data)).load()
    except Exception as exc:  # noqa: BLE001 - whatever malformed bytes raise
        raise RuntimeError(f"perfgym: the solution's reply is not plain values ({exc})") from None


def make_undumpable():
    """prctl(PR_SET_DUMPABLE, 0): /proc/PID/mem, /proc/PID/fd and ptrace of this process are
    closed to every process without CAP_SYS_PTRACE (the solution's runs as the same uid)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


def _interpreter_flags():
    """The flags this interpreter was started with, for the solution's (same behaviour)."""
    f, out = sys.flags, []
    for flag, opt in (("isolated", "-I"), ("ignore_environment", "-E"),
                      ("no_user_site", "-s"), ("no_site", "-S"),
                      ("dont_write_bytecode", "-B"), ("safe_path", "-P")):  # fmt: skip
        if getattr(f, flag, 0) and not (f.isolated and opt in ("-E", "-s", "-P")):
            out.append(opt)
    out += ["-O"] * f.optimize
    for opt in sys.warnoptions:
        out += ["-W", opt]
    for key, value in getattr(sys, "_xoptions", {}).items():
        out += ["-X", key if value is True else f"{key}={value}"]
    return out


def _widen(fd, size=1 << 20):
    """A 1 MiB pipe (the unprivileged most) where the kernel allows: a large argument crosses
    in fewer hand-offs between the two processes."""
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), size)
    except OSError:
        pass


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_exact(fd, n):
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise RuntimeError("perfgym: the solution's process ended (its output is above)")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


class _Process:
    """The solution's process and the harness's two pipe ends to it."""

    def __init__(self, name, path, harness_argv):
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        for fd in (req_w, rep_w):
            _widen(fd)
        null = os.open(os.devnull, os.O_RDONLY)
        argv = [sys.executable, *_interpreter_flags(), _SERVER, name, path, "--", *harness_argv]
        env = dict(os.environ)
        if env.get("PERFCODEBENCH_SOLUTION", "").endswith("perfgym_solution.py"):
            env["PERFCODEBENCH_SOLUTION"] = path
        # fd 0: nothing; fd 1: the run's stderr (never its stdout); 3, 4: the two pipes. Every
        # other descriptor of this process is close-on-exec (PEP 446).
        actions = [
            (os.POSIX_SPAWN_DUP2, null, 0),
            (os.POSIX_SPAWN_DUP2, 2, 1),
            (os.POSIX_SPAWN_DUP2, req_r, 3),
            (os.POSIX_SPAWN_DUP2, rep_w, 4),
        ]
        try:
            self.pid = os.posix_spawn(sys.executable, argv, env, file_actions=actions)
        finally:
            for fd in (req_r, rep_w, null):
                os.close(fd)
        self.out, self.back = req_w, rep_r
        self.last, self.kept = None, False
        self.ended = False

    def ask(self, message):
        """Send one request (bytes), return the decoded reply."""
        _write_all(self.out, len(message).to_bytes(_HEADER, "little") + message)
        size = int.from_bytes(_read_exact(self.back, _HEADER), "little")
        return decode(_read_exact(self.back, size))

    def reply(self, message):
        try:
            got = self.ask(message)
        except OSError as exc:  # a broken pipe: the process is gone
            raise RuntimeError(f"perfgym: the solution's process ended ({exc})") from None
        if type(got) is not tuple or len(got) != 3 or type(got[0]) is not str:
            raise RuntimeError("perfgym: the solution's process answered out of protocol")
        return got

    def end(self):
        """Close the pipe; give the process EXIT_GRACE_S to end, then kill it."""
        if self.ended:
            return
        self.ended = True
        import time

        for fd in (self.out, self.back):
            try:
                os.close(fd)
            except OSError:
                pass
        deadline = time.monotonic() + EXIT_GRACE_S
        while True:
            try:
                pid, _ = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                return
            if pid or time.monotonic() > deadline:
                break
            time.sleep(0.002)
        if not pid:
            try:
                os.kill(self.pid, 9)
                os.waitpid(self.pid, 0)
            except (OSError, ChildProcessError):
                pass


def _call(proc, name, args, kwargs):
    start = _NS()
    try:
        data = pickle.dumps((args, kwargs), 5)
    except Exception as exc:  # noqa: BLE001 - the harness's own argument
        raise RuntimeError(
            f"perfgym: an argument the harness passes to {name} cannot be sent to the "
            f"solution's process ({type(exc).__name__}: {exc})"
        ) from None
    if proc.kept and data == proc.last:
        request = pickle.dumps(("again", name, None, False), 5)
    else:
        whole = all(map(_shallow_copy_is_whole, args)) and all(
            map(_shallow_copy_is_whole, kwargs.values())
        )
        request = pickle.dumps(("call", name, data, whole), 5)
    _SPENT[0] += _NS() - start
    what, value, kept = proc.reply(request)
    proc.last, proc.kept = data, kept is True
    if what == "error":
        raise RuntimeError(f"perfgym: the solution's {name} raised (its traceback is above)")
    if what != "value":
        raise RuntimeError("perfgym: the solution's process answered out of protocol")
    return value


class _Callable:
    """The harness's handle on one of the solution's callables."""

    __slots__ = ("_proc", "_name")

    def __init__(self, proc, name):
        self._proc, self._name = proc, name

    def __call__(self, *args, **kwargs):
        return _call(self._proc, self._name, args, kwargs)

    def __repr__(self):
        return f"<perfgym: the solution's {self._name}>"


_started: list[_Process] = []


def _load(name, path, harness_argv):
    """The shim's `__getattr__`: each name asked of the solution's process."""
    try:
        proc = _Process(name, path, harness_argv)
    except OSError as exc:
        sys.stderr.write(f"perfgym: the solution's process could not start ({exc})\n")
        os._exit(FAILED_EXIT)
    _started.append(proc)
    what, value, _ = proc.reply(pickle.dumps(("load", name, None, False), 5))
    if what == "error":
        raise RuntimeError("perfgym: the solution failed to import (its traceback is above)")

    def getattr_(attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)  # the import system's own probes: never the solution's
        what, value, _ = proc.reply(pickle.dumps(("attr", attr, None, False), 5))
        if what == "missing":
            raise AttributeError(f"the solution has no {attr!r}")
        if what == "callable":
            return _Callable(proc, attr)
        if what == "value":
            return value
        raise RuntimeError(f"perfgym: reading the solution's {attr} failed (see above)")

    return getattr_


def end_all():
    """After the harness: every solution process it started ends (its CPU is the run's)."""
    while _started:
        _started.pop().end()


def _wrap_timers(spent=_SPENT):
    """time's timers in this process read less `spent` (this process's own work for calls)."""
    for name in ("perf_counter", "monotonic", "time"):
        real, real_ns = getattr(time, name), getattr(time, name + "_ns")
        setattr(time, name, lambda _real=real: _real() - spent[0] / 1e9)
        setattr(time, name + "_ns", lambda _real=real_ns: _real() - spent[0])


def _refuse_opening(solution):
    """An audit hook: this process opening `solution` (a harness that loads the solution by a
    path of its own, not the one it was given) ends the run before any of it runs here."""
    real = os.path.realpath(solution)
    realpath, write, exit_ = os.path.realpath, os.write, os._exit

    def hook(event, args):
        if event == "open" and args and isinstance(args[0], (str, bytes)):
            path = args[0] if isinstance(args[0], str) else os.fsdecode(args[0])
            if path.endswith(os.path.basename(real)) and realpath(path) == real:
                write(2, b"perfgym: the harness opened the solution's file itself (not through "
                         b"the path it was given): its code would run in the harness's process; "
                         b"refused\n")  # fmt: skip
                exit_(OPENED_EXIT)

    sys.addaudithook(hook)


def install(harness_argv, solution=None):
    """Called by the wrapper before the harness runs: this process made non-dumpable, its
    timers wrapped, opening `solution` (the real path) refused; returns the shim's
    `load(name, path)` and the function that ends the solution's processes."""
    make_undumpable()
    _wrap_timers()
    if solution:
        _refuse_opening(solution)

    def load(name, path, _argv=tuple(harness_argv)):
        return _load(name, path, list(_argv))

    return load, end_all
