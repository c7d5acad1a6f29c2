"""Program mode of the warm Python worker: run a compiled source in a forked child exactly as
`python3 prog.py` would (fresh stdio, `__main__`, argv, environment, exit status).

Stdlib only; imported by `pyworker_server.py` inside the worker's sandbox.
"""

from __future__ import annotations

import _signal
import atexit
import builtins
import io
import os
import site
import sys
import types

TYPE_CHECKING = False  # typing is not imported at run time: the worker forks lean (see server)
if TYPE_CHECKING:
    from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))


def _site_dirs() -> list[str]:
    """The site-packages a plain `python3` puts on sys.path (the worker runs with -S; .pth
    files are not processed)."""
    return [d for d in site.getsitepackages() if os.path.isdir(d)]


_PROGRAM_PATH = [p for p in sys.path if p != _HERE] + _site_dirs()


def _stdio(fd: int) -> Any:
    """A standard stream as CPython's create_stdio makes it for a pipe under a UTF-8 locale:
    block-buffered (stderr line-buffered), newline '\\n', surrogateescape (stderr
    backslashreplace), closefd=False."""
    write = fd != 0
    raw = io.FileIO(fd, "wb" if write else "rb", closefd=False)
    buf = io.BufferedWriter(raw) if write else io.BufferedReader(raw)
    errors = "backslashreplace" if fd == 2 else "surrogateescape"
    stream = io.TextIOWrapper(buf, encoding="utf-8", errors=errors, newline="\n",
                              line_buffering=fd == 2)  # fmt: skip
    raw.name = ("<stdin>", "<stdout>", "<stderr>")[fd]  # type: ignore[misc]
    stream.mode = "w" if write else "r"  # type: ignore[misc]
    return stream


def _depth() -> int:
    f, n = sys._getframe(), 0
    while f is not None:
        f, n = f.f_back, n + 1  # type: ignore[assignment]
    return n


def place_script(path: str, source: str) -> None:
    """Put the script where a sandboxed run sees its (read-only) artifact, when that is in the
    work dir: tracebacks quote its lines and `open(__file__)` works. Runs before the privilege
    drop, so the program cannot change it; the work dir is emptied after every run."""
    if not path.startswith("/tmp/") or os.path.lexists(path):
        return
    folder = os.path.dirname(path)
    made = not os.path.isdir(folder)
    os.makedirs(folder, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
    try:
        os.write(fd, source.encode())
    finally:
        os.close(fd)
    if made:  # an artifact directory of its own: read-only, like the bind it stands for
        os.chmod(folder, 0o555)


def become_main(req: dict) -> types.ModuleType:
    """Make this (forked, confined) child look like a fresh `python3 argv[0]` about to run its
    script: signals, environment, argv, sys.path, stdio on fds 0-2, an empty `__main__`."""
    _signal.signal(_signal.SIGPIPE, _signal.SIG_IGN)  # as the interpreter sets at start
    site.setquit()  # exit(), quit(), help() and friends: builtins that `site` adds
    site.setcopyright()
    site.sethelper()
    os.environ.clear()
    os.environ.update(req.get("env") or {})
    argv = [str(a) for a in req["argv"]]
    sys.argv = argv
    sys.path[:] = [os.path.dirname(argv[0]) or os.getcwd(), *_PROGRAM_PATH]
    sys.stdin = sys.__stdin__ = _stdio(0)  # type: ignore[misc,assignment]
    sys.stdout = sys.__stdout__ = _stdio(1)  # type: ignore[misc,assignment]
    sys.stderr = sys.__stderr__ = _stdio(2)  # type: ignore[misc,assignment]
    main = types.ModuleType("__main__")
    main.__file__ = argv[0]
    main.__builtins__ = builtins  # type: ignore[attr-defined]
    sys.modules["__main__"] = main
    atexit._clear()
    # The program's frames start a few frames deep here: grant it the recursion depth it would
    # have in a fresh interpreter.
    sys.setrecursionlimit(sys.getrecursionlimit() + _depth())
    return main


def exit_code(exc: SystemExit) -> int:
    """CPython's handling of an uncaught SystemExit (a non-int code is printed to stderr)."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF if -(2**31) <= code < 2**31 else 0xFF
    try:
        print(code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - as CPython: the exit code stands
        pass
    return 1


def run_main(code: types.CodeType, main: types.ModuleType, res_fd: int) -> int:
    """Run the program and finalise as the interpreter does; the exit status. An uncaught
    MemoryError is marked in `res_fd` (the worker reports MEMORY_LIMIT)."""
    status = 0
    try:
        exec(code, main.__dict__)  # noqa: S102 - the untrusted program, in its isolated child
    except SystemExit as exc:
        status = exit_code(exc)
    except BaseException as exc:  # noqa: BLE001 - printed, exit 1, as the interpreter does
        if isinstance(exc, MemoryError):
            os.pwrite(res_fd, b"M", 0)
        status = 1
        try:
            tb = exc.__traceback__
            exc = exc.with_traceback(tb.tb_next if tb is not None else None)  # not this frame
            sys.excepthook(type(exc), exc, exc.__traceback__)
        except BaseException:  # noqa: BLE001
            pass
    return finalize(status)


def finalize(status: int) -> int:
    """What Py_FinalizeEx does that a program can see: join non-daemon threads, run atexit
    callbacks, flush stdout (failing that, exit 120) and stderr."""
    threading = sys.modules.get("threading")
    try:
        if threading is not None:
            threading._shutdown()  # type: ignore[attr-defined]
    except BaseException:  # noqa: BLE001
        pass
    try:
        atexit._run_exitfuncs()
    except BaseException:  # noqa: BLE001
        pass
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except BaseException:  # noqa: BLE001
            if stream is sys.stdout and status == 0:
                status = 120
    return status
