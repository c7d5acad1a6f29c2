"""Warm Python worker: PID 1 of its own sandbox; forks a fresh, unprivileged child per call.

The pristine parent never runs untrusted code: it only compiles sources (cached by hash) and
pre-imports the standard-library modules they name. A function call's child executes the
module in a fresh namespace, calls the entry point, writes the tagged-JSON result into a memfd
and exits. A program run's child (mode "program") runs the source as `__main__` over fresh
stdio, exactly as `python3 prog.py` would, and the parent captures its output under caps.
Afterwards the parent SIGKILLs every other process in its PID namespace and empties /tmp and
/dev/shm, so nothing a call leaves behind reaches the next one. Messages are 4-byte big-endian
length + JSON over a stream socket.
"""

from __future__ import annotations

# Imports are kept to what the server needs (no typing, socket, shutil, hashlib, base64 or the
# signal wrapper): every call forks this process, and the fork and the child's exit cost time
# in proportion to its anonymous memory (6.7 -> 4.0 MB; 0.25 ms of CPU less per call here).
import _signal
import binascii
import builtins
import gc
import json
import os
import resource
import select
import sys
import time
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyworker_program  # noqa: E402
import valuecodec  # noqa: E402

_MAX_CODES = 256
_codes: dict[str, types.CodeType] = {}
_sock_fd = -1  # the host connection: never inherited by a call's child


def _send(fd: int, obj: dict) -> None:
    data = json.dumps(obj).encode()
    view = memoryview(len(data).to_bytes(4, "big") + data)
    while view:
        view = view[os.write(fd, view) :]


def _recv_exact(fd: int, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = os.read(fd, n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return bytes(buf)


def _recv(fd: int) -> dict:
    n = int.from_bytes(_recv_exact(fd, 4), "big")
    return json.loads(_recv_exact(fd, n))


def _b64(data: bytes) -> str:
    return binascii.b2a_base64(data, newline=False).decode()


def _preimport(code: types.CodeType) -> None:
    """Import the stdlib modules a program names (trusted code) so calls need not."""
    stdlib = getattr(sys, "stdlib_module_names", ())
    names: set[str] = set()
    stack: list[object] = [code]
    while stack:
        c = stack.pop()
        names.update(getattr(c, "co_names", ()))
        stack.extend(k for k in getattr(c, "co_consts", ()) if hasattr(k, "co_names"))
    for name in names:
        if name in stdlib and name not in sys.modules:
            try:
                __import__(name)
            except Exception:  # noqa: BLE001 - an unimportable module is the program's problem
                pass


#: Larger sources are compiled for their request only: a code object kept in this process
#: would make every later call's fork and exit dearer.
_MAX_CACHED_SOURCE = 1 << 20


def _compile(source: str, filename: str, lim: dict) -> tuple[str, types.CodeType | None, str]:
    """Compile a program's source (cached). compile() runs no program code, but a source nested
    deeply enough makes it use hundreds of MiB: it gets the request's memory allowance on top of
    this process's size (MemoryError, like RecursionError, is the program's compile error)."""
    key = f"{filename}\0{source}"
    if key in _codes:
        return key, _codes[key], ""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    allowance = _statm()[0] + int(float(lim["memory_mb"]) * 1024 * 1024)
    if hard != resource.RLIM_INFINITY:
        allowance = min(allowance, hard)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (allowance, hard))
        # dont_inherit: this file's `from __future__ import annotations` is not the program's.
        code = compile(source, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
        return key, None, f"{type(exc).__name__}: {exc}"
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    if len(source) > _MAX_CACHED_SOURCE:
        return key, code, ""
    if len(_codes) >= _MAX_CODES:
        _codes.pop(next(iter(_codes)))
    _codes[key] = code
    _preimport(code)
    gc.freeze()  # keep the collector in call children off the parent's pages (fewer COW faults)
    return key, code, ""


def _close_inherited(keep: tuple[int, ...]) -> None:
    """Close every descriptor above stdio but `keep`: above all the host connection, through
    which an untrusted child could otherwise forge the worker's reply."""
    lo = 3
    for fd in sorted(set(keep)) + [max(keep + (_sock_fd, 255)) + 1]:
        if fd >= lo:
            os.closerange(lo, fd)
            lo = fd + 1


def _confine(lim: dict, uid: int, vsize: int) -> None:
    """In a call's child: rlimits, then drop to the worker's unprivileged uid in /tmp."""
    cpu_s = int(lim["cpu_s"]) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    nproc = int(lim["max_processes"])
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    fsize = int(lim["file_size_bytes"])
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    # CPython tolerates an address-space limit (unlike the JVM or Go): the pristine
    # interpreter's mapping plus the call's allowance.
    mem = vsize + int(float(lim["memory_mb"]) * 1024 * 1024)
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    _signal.signal(_signal.SIGCHLD, _signal.SIG_DFL)
    # bubblewrap already set no_new_privs for the whole sandbox; dropping to a
    # non-root uid clears every capability this child inherited.
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    os.chdir("/tmp")


def _child(req: dict, code: types.CodeType, out_fd: int, res_fd: int, uid: int, vsize: int) -> None:
    """The per-call child: limits, privilege drop, fresh module namespace, call. Never returns."""
    try:
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        _close_inherited((out_fd, res_fd))
        _confine(req["limits"], uid, vsize)
        args = valuecodec.decode(req.get("args", []))
        namespace = {"__name__": req.get("module_name", "solution"), "__builtins__": builtins}
        exec(code, namespace)  # noqa: S102 - the untrusted program, in its isolated child
        entry = req.get("entry")
        value = None
        call_ns = 0
        if entry:
            fn = namespace.get(entry)
            if not callable(fn):
                raise NameError(f"entry point {entry!r} is not defined by the program")
            t0 = time.perf_counter_ns()
            value = fn(*args)
            call_ns = time.perf_counter_ns() - t0
        result = {"ok": True, "value": valuecodec.encode(value), "reported_call_ns": call_ns}
        code_out = 0
    except BaseException as exc:  # noqa: BLE001 - the program's own failure, reported as such
        result = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:2000]}
        code_out = 1
    try:
        sys.stdout.flush()
    except BaseException:  # noqa: BLE001
        pass
    try:
        os.write(res_fd, json.dumps(result).encode())
    except BaseException:  # noqa: BLE001 - e.g. the value was too large for the file limit
        pass
    os._exit(code_out)


def _clean() -> None:
    """Kill every leftover process of the call and empty the writable directories."""
    try:
        os.kill(-1, _signal.SIGKILL)
    except ProcessLookupError:
        pass
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                time.sleep(0.0005)
        except ChildProcessError:
            break
    for root in ("/tmp", "/dev/shm"):
        try:
            for name in os.listdir(root):
                p = os.path.join(root, name)
                if os.path.isdir(p) and not os.path.islink(p):
                    _remove_tree(p)
                else:
                    os.unlink(p)
        except OSError:
            pass


def _remove_tree(path: str) -> None:
    """Remove a directory and everything under it, best effort, never following a link."""
    try:
        with os.scandir(path) as entries:
            for e in entries:
                try:
                    if e.is_dir(follow_symlinks=False):
                        _remove_tree(e.path)
                    else:
                        os.unlink(e.path)
                except OSError:
                    pass
        os.rmdir(path)
    except OSError:
        pass


_PAGE = os.sysconf("SC_PAGE_SIZE")


def _statm() -> tuple[int, int]:
    """(virtual size, resident) of this process in bytes. Read in the server just before the
    fork, whose child starts with the same figures: reading it in the child cost ~0.15 ms of
    CPU and 34 copy-on-write faults per call."""
    fd = os.open("/proc/self/statm", os.O_RDONLY)
    try:
        fields = os.read(fd, 200).split()
    finally:
        os.close(fd)
    return int(fields[0]) * _PAGE, int(fields[1]) * _PAGE


def _call(req: dict, uid: int) -> dict:
    key, code, err = _compile(req["source"], req.get("filename", "solution.py"), req["limits"])
    if code is None:
        return {"status": "COMPILE_ERROR", "error": err}
    lim = req["limits"]
    out_fd = os.memfd_create("out", 0)
    res_fd = os.memfd_create("res", 0)
    vsize, server_rss = _statm()  # the child starts sharing this much; its own use is the excess
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        _child(req, code, out_fd, res_fd, uid, vsize)
    pidfd = os.pidfd_open(pid)
    killed = ""
    ready, _, _ = select.select([pidfd], [], [], float(lim["wall_s"]))
    if not ready:
        killed = "TIMEOUT"
        os.kill(pid, _signal.SIGKILL)
    _, status, ru = os.wait4(pid, 0)
    wall = time.monotonic() - t0
    os.close(pidfd)
    _clean()
    out_size = os.fstat(out_fd).st_size
    cap = int(lim["stdout_bytes"])
    out = os.pread(out_fd, min(out_size, cap), 0)
    res_size = os.fstat(res_fd).st_size
    res_raw = os.pread(res_fd, res_size, 0) if res_size else b""
    os.close(out_fd)
    os.close(res_fd)
    reply: dict = {
        "wall_s": wall,
        "cpu_user_s": ru.ru_utime,
        "cpu_system_s": ru.ru_stime,
        "peak_rss_mb": max(0, ru.ru_maxrss * 1024 - server_rss) / 1048576.0,
        "stdout": out.decode("utf-8", errors="replace"),
        "stdout_truncated": out_size > cap,
        "exit_status": status,
        "killed": killed,
    }
    try:
        reply["result"] = json.loads(res_raw) if res_raw else None
    except ValueError:
        reply["result"] = None
    return reply


def _program_child(
    req: dict, code: types.CodeType, fds: dict[str, int], uid: int, vsize: int
) -> None:
    """The per-run child of program mode. Never returns; its exit status is the program's."""
    try:
        for target, name in ((0, "in"), (1, "out_w"), (2, "err_w")):
            os.dup2(fds[name], target)
        _close_inherited((fds["res"], fds["setup"]))
        pyworker_program.place_script(req["argv"][0], req["source"])
        _confine(req["limits"], uid, vsize)
        main = pyworker_program.become_main(req)
        os.write(fds["setup"], b"ok")
        os.close(fds["setup"])  # nothing the program writes can pass for the worker's report
    except BaseException as exc:  # noqa: BLE001 - the worker's own failure, not the program's
        os.write(fds["setup"], f"{type(exc).__name__}: {exc}".encode()[:2000])
        os._exit(70)
    os._exit(pyworker_program.run_main(code, main, fds["res"]))


def _run_program(req: dict, uid: int) -> dict:
    """Fork a program-mode child, feed its stdin, capture stdout/stderr under the caps (as the
    sandbox's supervisor: cut and stop at a cap), enforce the wall limit, then clean up."""
    key, code, err = _compile(req["source"], req["argv"][0], req["limits"])
    if code is None:
        return {"status": "COMPILE_ERROR", "error": err}
    lim = req["limits"]
    fds = {"in": os.memfd_create("stdin", 0), "res": os.memfd_create("res", 0)}
    os.write(fds["in"], binascii.a2b_base64(req.get("stdin", "")))
    os.lseek(fds["in"], 0, os.SEEK_SET)
    out_r, fds["out_w"] = os.pipe()
    err_r, fds["err_w"] = os.pipe()
    vsize, server_rss = _statm()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    setup_r, fds["setup"] = os.pipe()
    pid = os.fork()
    if pid == 0:
        _program_child(req, code, fds, uid, vsize)
    for name in ("in", "out_w", "err_w", "setup"):
        os.close(fds[name])
    caps = {out_r: int(lim["stdout_bytes"]), err_r: int(lim["stderr_bytes"])}
    bufs: dict[int, bytearray] = {out_r: bytearray(), err_r: bytearray()}
    cut: dict[int, bool] = {out_r: False, err_r: False}
    killed, reason = "", ""

    def kill(status: str, why: str) -> None:
        nonlocal killed, reason
        if not killed:
            killed, reason = status, why
        try:
            os.kill(-1, _signal.SIGKILL)  # every process but this one (PID 1)
        except ProcessLookupError:
            pass

    def read(fd: int) -> bool:
        data = os.read(fd, 65536)
        if not data:
            poller.unregister(fd)
            return False
        room = caps[fd] - len(bufs[fd])
        bufs[fd] += data[: max(room, 0)]
        if len(data) > room:
            cut[fd] = True
            if lim.get("kill_on_output_limit", True):
                which = "stdout" if fd == out_r else "stderr"
                kill("OUTPUT_LIMIT", f"{which} exceeded {caps[fd]} bytes")
        return True

    pidfd = os.pidfd_open(pid)
    poller = select.poll()
    for fd in (out_r, err_r):
        poller.register(fd, select.POLLIN | select.POLLHUP)
    poller.register(pidfd, select.POLLIN)
    wall_limit = float(lim["wall_s"])
    exited = False
    while not exited:
        left = t0 + wall_limit - time.monotonic()
        if left <= 0 and not killed:
            kill("TIMEOUT", f"wall time over {wall_limit} s")
        for fd, _ev in poller.poll(max(left, 0.05) * 1000):
            if fd == pidfd:
                exited = True
            else:
                read(fd)
    _, status, ru = os.wait4(pid, 0)
    wall = time.monotonic() - t0
    os.close(pidfd)
    _clean()  # the main process is gone: nothing it started may outlive it
    for fd in (out_r, err_r):
        os.set_blocking(fd, False)
        try:
            while read(fd):
                pass
        except (BlockingIOError, KeyError):
            pass
        os.close(fd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # every descendant, reaped above
    marker = os.pread(fds["res"], 1, 0)
    os.close(fds["res"])
    setup = b""
    while chunk := os.read(setup_r, 4096):  # its write end closed before the program ran
        setup += chunk
    os.close(setup_r)
    return {
        "exit_status": status,
        "killed": killed,
        "reason": reason,
        "memory_error": marker == b"M",
        "setup_error": "" if setup == b"ok" else setup.decode(errors="replace") or "no report",
        "wall_s": wall,
        "cpu_user_s": after.ru_utime - before.ru_utime,
        "cpu_system_s": after.ru_stime - before.ru_stime,
        "peak_rss_mb": max(0, ru.ru_maxrss * 1024 - server_rss) / 1048576.0,
        "stdout": _b64(bytes(bufs[out_r])),
        "stderr": _b64(bytes(bufs[err_r])),
        "stdout_truncated": cut[out_r],
        "stderr_truncated": cut[err_r],
    }


def main() -> None:
    global _sock_fd
    sock = _sock_fd = int(sys.argv[1])
    uid = int(sys.argv[2])
    _signal.signal(_signal.SIGPIPE, _signal.SIG_DFL)  # bubblewrap's --die-with-parent covers exit
    gc.freeze()
    _send(sock, {"ready": True, "pid": os.getpid()})
    while True:
        try:
            req = _recv(sock)
        except EOFError:
            return
        try:
            run = _run_program if req.get("mode") == "program" else _call
            reply = run(req, uid)
        except Exception as exc:  # noqa: BLE001 - the worker's own fault, reported as such
            reply = {"status": "SANDBOX_ERROR", "error": f"{type(exc).__name__}: {exc}"}
        _send(sock, reply)


if __name__ == "__main__":
    main()
