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
harness times). To keep it small, arguments byte-for-byte equal to the previous call's are not
sent again: the solution's process keeps them and hands each call a fresh copy (where a shallow
copy is a full one), and says so in its reply.

A harness that ends while the solution's process is still alive closes its pipe; the process
then has `EXIT_GRACE_S` to end before it is killed, so no process of the solution outlives the
harness's own.
"""

import io
import os
import pickle
import sys

#: Exit status of a harness whose solution's process could not be started or reached.
FAILED_EXIT = 87
#: How long the solution's process has to exit after the harness ended.
EXIT_GRACE_S = 2.0
_HERE = os.path.dirname(os.path.abspath(__file__))
_SERVER = os.path.join(_HERE, "perfgym_solution_process.py")
_HEADER = 8
#: The one global a plain value's pickle names (complex numbers); anything else is refused.
_ALLOWED = {("builtins", "complex"): complex}


class SolutionError(RuntimeError):
    """The solution raised, died, or answered with what is not a plain value."""


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
        raise SolutionError(f"perfgym: the solution's reply is not plain values ({exc})") from None


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


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_exact(fd, n):
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise SolutionError("perfgym: the solution's process ended (its output is above)")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


class _Process:
    """The solution's process and the harness's two pipe ends to it."""

    def __init__(self, name, path, harness_argv):
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
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
            raise SolutionError(f"perfgym: the solution's process ended ({exc})") from None
        if type(got) is not tuple or len(got) != 3 or type(got[0]) is not str:
            raise SolutionError("perfgym: the solution's process answered out of protocol")
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
    try:
        data = pickle.dumps((args, kwargs), 5)
    except Exception as exc:  # noqa: BLE001 - the harness's own argument
        raise SolutionError(
            f"perfgym: an argument the harness passes to {name} cannot be sent to the "
            f"solution's process ({type(exc).__name__}: {exc})"
        ) from None
    again = proc.kept and data == proc.last
    request = pickle.dumps(("again", name, None) if again else ("call", name, data), 5)
    what, value, kept = proc.reply(request)
    proc.last, proc.kept = data, kept is True
    if what == "error":
        raise SolutionError(f"perfgym: the solution's {name} raised (its traceback is above)")
    if what != "value":
        raise SolutionError("perfgym: the solution's process answered out of protocol")
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
    what, value, _ = proc.reply(pickle.dumps(("load", name, None), 5))
    if what == "error":
        raise SolutionError("perfgym: the solution failed to import (its traceback is above)")

    def getattr_(attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)  # the import system's own probes: never the solution's
        what, value, _ = proc.reply(pickle.dumps(("attr", attr, None), 5))
        if what == "missing":
            raise AttributeError(f"the solution has no {attr!r}")
        if what == "callable":
            return _Callable(proc, attr)
        if what == "value":
            return value
        raise SolutionError(f"perfgym: reading the solution's {attr} failed (see above)")

    return getattr_


def end_all():
    """After the harness: every solution process it started ends (its CPU is the run's)."""
    while _started:
        _started.pop().end()


def install(harness_argv):
    """Called by the wrapper before the harness runs: this process made non-dumpable; returns
    the shim's `load(name, path)` and the function that ends the solution's processes."""
    make_undumpable()

    def load(name, path, _argv=tuple(harness_argv)):
        return _load(name, path, list(_argv))

    return load, end_all
