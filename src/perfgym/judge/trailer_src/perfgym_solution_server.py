"""perfgym: the process a PerfCodeBench Python solution runs in, apart from its harness.

Started by the harness's wrapper (perfgym_split.py) as a fresh interpreter (argv: the socket's
fd, the solution's path, the module name the harness gave it, the harness's folder). It imports
the solution and answers the harness's requests for the solution's names: a value, made plain,
or "callable"; a call of a callable, its result made plain. Every message is a pickle in a
memfd handed over the socket. Nothing here is trusted: the harness reads what this process
sends with an unpickler that builds builtin values only (docs/security.md, section 6b); what
this module makes plain is for honest solutions (numpy's values, subclasses of builtins).
"""

import errno
import fcntl
import importlib.util
import os
import pickle
import resource
import socket
import sys
import time

_ATOMS = (int, float, complex, str, bytes, bytearray, bool, type(None))
#: The seals a reply's memfd carries when it is sent: no write, no size change, no more seals.
SEALS = fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL
#: A message's memfds hold at most this many bytes each (the run's file-size limit applies to
#: memfds: less under a lower one).
CHUNK = 16 << 20
#: What a value of no plain type becomes: a string no harness expects (a wrong answer).
REFUSED = "<perfgym: a result of a type that is not a plain builtin value: refused>"


def plain(x):
    """`x` as builtin values: a subclass of a builtin as that builtin, numpy's values (or any
    object with `tolist`) as their `tolist()`, anything else `REFUSED`."""
    t = type(x)
    if t in _ATOMS:
        return x
    if t in (list, tuple, set, frozenset):
        return t(plain(e) for e in x)
    if t is dict:
        return {plain(k): plain(v) for k, v in x.items()}
    for base in (bool, int, float, complex, str, bytes, bytearray):
        if isinstance(x, base):
            return base(x)
    for base in (list, tuple, set, frozenset):
        if isinstance(x, base):
            return base(plain(e) for e in x)
    if isinstance(x, dict):
        return {plain(k): plain(v) for k, v in dict.items(x)}
    to_list = getattr(x, "tolist", None)
    if callable(to_list):
        value = to_list()
        if type(value) is not t:
            return plain(value)
    return REFUSED


def _error(exc):
    """An exception as the harness raises it again: its class's name (a builtin one keeps its
    type there), its message."""
    try:
        text = str(exc)[:2000]
    except BaseException:  # noqa: BLE001 - a __str__ of the solution's own
        text = "<unprintable>"
    name = type(exc).__name__ if type(exc).__module__ == "builtins" else "RuntimeError"
    return ("error", str(name), f"{type(exc).__name__}: {text}" if name == "RuntimeError" else text)


def _send(sock, message):
    try:
        data = _deep(lambda m: pickle.dumps(m, 5), message)
    except Exception as exc:  # noqa: BLE001 - e.g. a recursion too deep: said as an error
        data = pickle.dumps((message[0], *_error(exc)), 5)
    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    step = CHUNK if soft == resource.RLIM_INFINITY else max(4096, min(CHUNK, soft // 2))
    view, fds = memoryview(data), []
    try:
        for start in range(0, max(len(data), 1), step):
            fd = os.memfd_create("perfgym-reply", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
            fds.append(fd)
            part, done = view[start : start + step], 0
            while done < len(part):
                done += os.write(fd, part[done:])
            _seal(fd)  # the harness reads a reply that can no longer change (it refuses any other)
        socket.send_fds(sock, [b"r"], fds)
    finally:
        for fd in fds:
            os.close(fd)


def _seal(fd):
    """SEALS on `fd`, tried again on the kernel's transient EBUSY (a page still referenced by
    the write that filled it; seen once in ~10^5 seals on a loaded machine)."""
    for attempt in range(5):
        try:
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, SEALS)
            return
        except OSError as exc:
            if exc.errno != errno.EBUSY or attempt == 4:
                raise
            time.sleep(0.02 * 2**attempt)


def _receive(sock):
    msg, fds, _flags, _addr = socket.recv_fds(sock, 1, 253)
    if not msg or not fds:
        raise SystemExit(0)  # the harness is gone
    try:
        return pickle.loads(b"".join(os.pread(fd, os.fstat(fd).st_size, 0) for fd in fds))
    finally:
        for fd in fds:
            os.close(fd)


def _answer(module, request):
    """The reply to `request` (its token, what, name, and a call's arguments), less the token."""
    what, name = request[1], request[2]
    try:
        value = getattr(module, name)
    except AttributeError as exc:
        return ("missing", str(exc)[:2000])
    except BaseException as exc:  # noqa: BLE001 - a module __getattr__ of the solution's
        return _error(exc)
    try:
        if what == "attr":
            return ("callable",) if callable(value) else ("value", _deep(plain, value))
        return ("value", _deep(plain, value(*request[3], **request[4])))
    except BaseException as exc:  # noqa: BLE001 - the solution's own failure, said to the harness
        return _error(exc)


def _deep(fn, value):
    """`fn(value)` under a recursion limit raised for it: plain() and the pickler take two and
    one frames a level of a result, so a result nested as deep as a harness takes in-process
    (helper-64: 500-990 levels) would fail here otherwise. The program's own limit is back
    before anything of it runs again."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(max(before, 10_000))
    try:
        return fn(value)
    finally:
        sys.setrecursionlimit(before)


def main():
    sock = socket.socket(fileno=int(sys.argv[1]))
    path, name, folder = sys.argv[2], sys.argv[3], sys.argv[4]
    del sys.argv[1:]
    sys.path[0] = folder
    sys.dont_write_bytecode = True
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except BaseException as exc:  # noqa: BLE001 - the import failed: the harness raises it
        _send(sock, (None, *_error(exc)))
        return
    _send(sock, (None, "loaded"))
    while True:
        request = _receive(sock)
        _send(sock, (request[0], *_answer(module, request)))


if __name__ == "__main__":
    main()
