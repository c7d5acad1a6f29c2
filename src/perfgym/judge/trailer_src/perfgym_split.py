"""perfgym: the harness's side of a PerfCodeBench Python solution that runs in a process of its
own (docs/security.md, section 6b).

A solution imported into its harness's process can rewrite whatever the harness's line is made
of (its module globals, `json.dumps.__code__`, `sys.exit`, `SystemExit`) or read the run's
nonce from /proc/self/mem. So the solution never runs here: the shim the harness loads in its
place (perfgym_solution.py) starts perfgym_solution_server.py, a fresh interpreter (nothing of
this process's memory), and forwards the harness's use of the solution's names to it: a value
comes back as plain builtins, a callable as a function that calls it there. This process is
made non-dumpable first: the solution's process, of the same user and without capabilities,
can neither read its memory nor open its descriptors through /proc, nor trace it.

What comes back is read by an unpickler that builds builtin values only: no class of the
solution's reaches the harness (a list subclass whose `__eq__` is always True), and no code of
the solution's runs here. A call's time on the harness's own clocks is the round trip to the
solution's process (its decoding of the arguments, its work, its encoding of the result) and
this process's decoding of the result; only this process's encoding of the arguments is not
on them: `time`'s wall clocks (`install_clock`, by the wrapper, before the harness runs) stop
while it runs, for at most the CPU it took. Nothing the solution's process sends decides what
is taken off (a reply is a pickle, and decoding one is work its bytes choose: complex(a, b)
adds, a set's items are hashed and deduplicated; red team helper-64 had the harness's
decoder compute the range sums it was asked for).
"""

import atexit
import builtins
import ctypes
import fcntl
import io
import os
import pickle
import resource
import signal
import socket
import sys
import time

#: The largest reply read (bytes): a larger one is the solution's failure.
REPLY_LIMIT = 1 << 30
#: A message's memfds hold at most this many bytes each (less under a lower file-size limit).
CHUNK = 16 << 20
#: At most this many memfds in one message (the kernel's SCM_MAX_FD is 253).
MAX_FDS = 250
#: What a window off the clocks may take beyond this process's CPU in it (a system call's
#: wake-up, the clock reads themselves).
CREDIT_SLACK_NS = 50_000
_PR_SET_DUMPABLE = 4
#: Nanoseconds of this process's own work for the solution's calls so far, off the clocks.
_paused = [0]
_real_ns = time.perf_counter_ns
_cpu_ns = time.thread_time_ns
#: The solutions' processes started (a harness may load its solution more than once).
_started = []


def install_clock():
    """Replace `time`'s wall clocks (perf_counter, monotonic, time, and their _ns forms) with
    ones that stand still while this process encodes a call or decodes its result. Each still
    only rises: what is taken off a call is never more than that call took."""
    for name in ("perf_counter_ns", "monotonic_ns", "time_ns"):
        setattr(time, name, _clock_ns(getattr(time, name)))
    for name in ("perf_counter", "monotonic", "time"):
        setattr(time, name, _clock_s(getattr(time, name)))


def _clock_ns(real):
    def clock():
        return real() - _paused[0]

    clock.__name__ = real.__name__
    return clock


def _clock_s(real):
    def clock():
        return real() - _paused[0] / 1e9

    clock.__name__ = real.__name__
    return clock


def _complex(real=0.0, imag=0.0):
    if type(real) not in (int, float) or type(imag) not in (int, float):
        raise pickle.UnpicklingError("perfgym: a complex of anything but two real numbers")
    return complex(real, imag)


def _bytearray(data=b""):
    if type(data) is not bytes:
        raise pickle.UnpicklingError("perfgym: a bytearray of anything but bytes")
    return bytearray(data)


#: What a reply's pickle may call, by builtin name: plain constructors that compute nothing a
#: reply could choose (helper-64 added numbers with `complex(a, b)` of complex arguments).
_CONSTRUCTORS = {"complex": _complex, "bytearray": _bytearray, "set": set, "frozenset": frozenset}


class _PlainUnpickler(pickle.Unpickler):
    """Builds builtin values only: any class a pickle names but complex (of two real numbers),
    bytearray (of bytes), set and frozenset is refused (and so every reduction of the
    solution's own)."""

    def find_class(self, module, name):
        if module == "builtins" and name in _CONSTRUCTORS:
            return _CONSTRUCTORS[name]
        raise pickle.UnpicklingError(f"perfgym: {module}.{name} is not a plain builtin value")


#: A reply's memfd must carry these: its bytes were fixed when it was sent. (Unsealed, the
#: solution's process could send it first and write the answer later, while this process,
#: decoding off the clocks, waits: stopped by a signal of that process's, say.)
_SEALED = fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK


def _read_whole(fd):
    try:
        sealed = fcntl.fcntl(fd, fcntl.F_GET_SEALS) & _SEALED == _SEALED
    except OSError:  # not a memfd
        sealed = False
    if not sealed:
        raise RuntimeError(
            "perfgym: the solution's process sent a reply that is not a sealed memfd"
        )
    size = os.fstat(fd).st_size
    chunks, offset = [], 0
    while offset < size:
        chunk = os.pread(fd, size - offset, offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _chunk_bytes():
    """The most bytes one memfd holds: the run's file-size limit applies to memfds too (64 MiB
    in the sandbox), so a larger message goes as several."""
    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    return CHUNK if soft == resource.RLIM_INFINITY else max(4096, min(CHUNK, soft // 2))


def _memfds(data, name, flags=os.MFD_CLOEXEC):
    """`data` written into memfds of at most `_chunk_bytes()` each."""
    step, view, fds = _chunk_bytes(), memoryview(data), []
    if -(-len(data) // step) > MAX_FDS:
        raise ValueError(f"a message of {len(data)} bytes is too large")
    try:
        for start in range(0, max(len(data), 1), step):
            fd = os.memfd_create(name, flags)
            fds.append(fd)
            part, done = view[start : start + step], 0
            while done < len(part):
                done += os.write(fd, part[done:])
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return fds


def _credit(t0, c0):
    """This process's own time since (`t0`, wall; `c0`, its thread's CPU), taken off the
    clocks: the wall time, but never more than the CPU it spent (a process stopped or
    descheduled meanwhile, say by a SIGSTOP of the solution's, earns nothing for it)."""
    _paused[0] += min(_real_ns() - t0, _cpu_ns() - c0 + CREDIT_SLACK_NS)


class _Solution:
    """The solution's process and the harness's channel to it."""

    def __init__(self, name, path):
        here, there = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        server = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                              "perfgym_solution_server.py")  # fmt: skip
        argv = [sys.executable, *_interpreter_flags(), server, "3", path, name, sys.path[0]]
        env = dict(os.environ)
        if env.get("PERFCODEBENCH_SOLUTION"):
            env["PERFCODEBENCH_SOLUTION"] = path
        actions = [
            (os.POSIX_SPAWN_DUP2, there.fileno(), 3),
            (os.POSIX_SPAWN_DUP2, 2, 1),  # its prints go to stderr: the harness's line is alone
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        ]
        self.pid = os.posix_spawn(sys.executable, argv, env, file_actions=actions, setpgroup=0)
        there.close()
        self.sock = here
        _started.append(self)
        reply = self._receive()
        if reply[0] != "loaded":
            raise ImportError(f"the solution could not be loaded: {_said(reply)}")

    def ask(self, request):
        """The solution's reply to `request`; this process's encoding and decoding off the
        clocks. The request carries a fresh random token the reply must repeat: a reply the
        solution's process sent before it read its request cannot (one computed ahead while
        this process decoded the last, off the clocks)."""
        t0, c0 = _real_ns(), _cpu_ns()
        token = os.urandom(16)
        try:
            fds = _memfds(pickle.dumps((token, *request), 5), "perfgym-request")
        except Exception as exc:  # noqa: BLE001 - a value the harness passed that cannot go
            _credit(t0, c0)
            raise TypeError(
                f"perfgym: an argument cannot reach the solution's process: {exc}"
            ) from None
        try:
            _credit(t0, c0)
            socket.send_fds(self.sock, [b"c"], fds)
        finally:
            for fd in fds:
                os.close(fd)
        return self._receive(token)

    def _receive(self, token=None):
        try:
            msg, fds, flags, _addr = socket.recv_fds(self.sock, 1, MAX_FDS)
        except OSError as exc:
            raise RuntimeError(f"perfgym: the solution's process failed: {exc}") from None
        # No credit here: the decoding is on the clocks (see the module's docstring).
        try:
            if not msg or not fds:
                raise RuntimeError("perfgym: the solution's process ended without a reply")
            if flags & socket.MSG_CTRUNC:
                raise RuntimeError("perfgym: the solution's process sent too many descriptors")
            parts, size = [], 0
            for fd in fds:
                parts.append(_read_whole(fd))
                size += len(parts[-1])
                if size > REPLY_LIMIT:
                    raise RuntimeError("perfgym: the solution's reply is over 1 GiB")
            reply = _PlainUnpickler(io.BytesIO(b"".join(parts))).load()
            if type(reply) is not tuple or len(reply) < 2 or type(reply[1]) is not str:
                raise RuntimeError("perfgym: the solution's process sent a malformed reply")
            if reply[0] != token:
                raise RuntimeError("perfgym: the solution's process replied before it was asked")
            return reply[1:]
        finally:
            for fd in fds:
                os.close(fd)

    def stop(self):
        """End the solution's process and its process group at once (SIGKILL): every variant
        pays the same for it, none the interpreter's shutdown it could skip by exiting early
        (red team helper-64: a process that forked and exited at import made its run's time
        outside the harness's clock ~9 ms less than its baseline's)."""
        if self.pid <= 0:
            return
        pid, self.pid = self.pid, 0
        self.sock.close()
        for kill in (os.killpg, os.kill):
            try:
                kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass


def stop_all():
    """End every solution's process this harness started (the wrapper, once the harness has
    returned; at exit otherwise)."""
    for solution in _started:
        solution.stop()


atexit.register(stop_all)


def _said(reply):
    return " ".join(map(str, reply[1:])) or str(reply[0])


def _interpreter_flags():
    flags = []
    if sys.flags.isolated:
        flags.append("-I")
    else:
        if sys.flags.ignore_environment:
            flags.append("-E")
        if sys.flags.no_user_site:
            flags.append("-s")
    if sys.flags.no_site:
        flags.append("-S")
    for key, value in sys._xoptions.items():
        flags += ["-X", key if value is True else f"{key}={value}"]
    return flags


def _caller(solution, name):
    def call(*args, **kwargs):
        return _value(solution.ask(("call", name, args, kwargs)), name)

    call.__name__ = call.__qualname__ = name
    return call


def _value(reply, name):
    kind = reply[0]
    if kind == "value" and len(reply) == 2:
        return reply[1]
    if kind == "missing":
        raise AttributeError(_said(reply))
    if kind == "error" and len(reply) == 3:
        # a builtin exception keeps its type (a harness may expect the solution's ValueError)
        cls = getattr(builtins, str(reply[1]), None)
        if not (isinstance(cls, type) and issubclass(cls, Exception)):
            cls = RuntimeError
        try:
            exc = cls(str(reply[2]))
        except Exception:  # noqa: BLE001 - a builtin exception wanting other arguments
            exc = RuntimeError(f"{reply[1]}: {reply[2]}")
        raise exc
    raise RuntimeError("perfgym: the solution's process sent a malformed reply")


def load(name, path):
    """The shim's `__getattr__`: the solution at `path`, imported as `name` in a process of
    its own."""
    ctypes.CDLL(None).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    solution = _Solution(name, path)

    def getattr_(attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        reply = solution.ask(("attr", attr))
        if reply[0] == "callable":
            return _caller(solution, attr)
        return _value(reply, attr)

    return getattr_
