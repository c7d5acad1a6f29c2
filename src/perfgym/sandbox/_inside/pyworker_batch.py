"""Batch calls of the warm Python worker: one candidate's tests in one child, each test under
its own limits and with its own verdict.

The parent (the worker's request process of this call) forks one child that runs the
candidate's module, then asks it one test at a time over a pipe: it sends the test's arguments,
waits for the answer under the test's CPU and wall limits (the CPU of the call's every process,
the child's and whatever it forked, waited for or not: the worker cgroup's count less the
parent's own, which the child cannot touch; the child's /proc figures without a cgroup),
and records the answer with the test's wall time and CPU. The child can only answer the
question it is asked: answers are taken one per question, in order, and judged on the host.
A child that exits, is killed or outruns a test's limit ends the batch at that test, whose
verdict it is (TIMEOUT or CRASH); the tests after it were never asked, so they have no
verdict here (the host runs them in a fresh child, or stops). Exceptions are the test's
verdict and the child goes on, unless the request asks to stop at the first one.

Stdlib only; imported by `pyworker_server.py` inside the worker's sandbox.
"""

from __future__ import annotations

import _signal
import builtins
import os
import select
import sys
import time

import pyworker_check
import valuecodec
import worker_meter
import worker_results

TYPE_CHECKING = False
if TYPE_CHECKING:
    import types
    from collections.abc import Callable

#: How often a test that has not answered has its CPU read (seconds).
POLL_S = 0.02
#: An answer larger than this is replied as its SHA-256 (of the answer's bytes, taken here,
#: where the child cannot reach): the host compares digests with the reference's and asks for
#: the value itself only where they differ, so no batch reply holds every test's large output.
DIGEST_ABOVE = 16 << 10
#: The answer pipe's buffer (fewer wake-ups for a large answer).
_PIPE_BYTES = 1 << 20
_F_SETPIPE_SZ = 1031
_TICK = os.sysconf("SC_CLK_TCK")
#: How pyworker_check.send begins a value's answer (json.dumps of {"value": ...}).
_VALUE_PREFIX = b'{"value": '


def call_cpu_s(pid: int) -> float:
    """CPU so far of the batch's every process but this one, on a running count (only its
    differences mean anything): the worker cgroup's CPU less this request process's own, so
    that a test's forked children, waited for or not, are the test's. Without a cgroup, the
    child's own threads (`child_cpu_s`)."""
    now = worker_meter.cgroup_ns()
    if now < 0:
        return child_cpu_s(pid)
    return now / 1e9 - worker_meter.self_cpu()


def child_cpu_s(pid: int) -> float:
    """User+system CPU of process `pid` (every thread), from /proc (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return 0.0
    fields = data[data.rindex(b")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def serve_tests(namespace: dict, entry: str, ask_r: int, ans_w: int) -> None:
    """The child's side: answer each test's arguments with the entry point's value."""
    fn = namespace.get(entry)
    if not callable(fn):
        pyworker_check.send(ans_w, {"error_type": "NameError",
                                    "error": f"entry point {entry!r} is not defined"})  # fmt: skip
        return
    pyworker_check.send(ans_w, {"ready": True})
    while True:
        try:
            msg = pyworker_check.recv(ask_r)
        except (EOFError, OSError, ValueError):
            return
        try:
            reply = {"value": valuecodec.encode(fn(*valuecodec.decode(msg["args"])))}
        except BaseException as exc:  # noqa: BLE001 - the test's failure, passed on
            reply = pyworker_check.failure(exc)
        try:
            sys.stdout.flush()
        except BaseException:  # noqa: BLE001
            pass
        pyworker_check.send(ans_w, reply)


def batch_child(req: dict, code: types.CodeType, ask_r: int, ans_w: int) -> None:
    """The child, confined already: the module, then the tests. Never returns."""
    try:
        namespace = {"__name__": req.get("module_name", "solution"), "__builtins__": builtins}
        try:
            exec(code, namespace)  # noqa: S102 - the untrusted program, in its isolated child
        except BaseException as exc:  # noqa: BLE001 - the program's own failure
            pyworker_check.send(ans_w, pyworker_check.failure(exc))
        else:
            serve_tests(namespace, str(req.get("entry") or ""), ask_r, ans_w)
    except BaseException:  # noqa: BLE001 - the parent sees the child gone
        pass
    try:
        sys.stdout.flush()
    except BaseException:  # noqa: BLE001
        pass
    os._exit(0)


class Channel:
    """The parent's ends of the two pipes: questions out, answers in, one frame at a time,
    never blocking past a deadline (a child that stops reading or writing mid-frame)."""

    def __init__(self, ask_w: int, ans_r: int, pidfd: int) -> None:
        self.ask_w, self.ans_r, self.pidfd = ask_w, ans_r, pidfd
        os.set_blocking(ask_w, False)
        self.buf = bytearray()
        self.out = b""
        self.raw = b""  # the last answer's bytes
        # Answers are read into this one buffer: an os.read of up to the pipe's size
        # allocated (mmap) that much and shrank it (mremap) for every answer, then freed it
        # (munmap): 18% of this process's CPU per test on a trivial function.
        self._chunk = memoryview(bytearray(_PIPE_BYTES))

    def _read(self) -> bool:
        """What the answer pipe holds now (blocking until some comes), added to the buffer;
        False at its end."""
        n = os.readv(self.ans_r, [self._chunk])
        self.buf += self._chunk[:n]
        return n > 0

    def frame(self) -> dict | None:
        """A complete answer from the buffer, or None. Malformed: {"malformed": why}."""
        if len(self.buf) < 4:
            return None
        n = int.from_bytes(self.buf[:4], "big")
        if n > pyworker_check.MAX_MESSAGE:
            return {"malformed": f"an answer of {n} bytes"}
        if len(self.buf) < 4 + n:
            return None
        raw = self.raw = bytes(self.buf[4 : 4 + n])
        del self.buf[: 4 + n]
        if n > DIGEST_ABOVE and raw.startswith(_VALUE_PREFIX):
            # A large value is replied as the digest of these bytes, never parsed here: the
            # host compares it with the reference's, and any bytes but the reference's answer
            # differ, so their value is fetched and judged in full (pyworker_check.send wrote
            # it; nothing else is read from it).
            return {"value": None}
        try:
            obj = worker_results.loads_bounded(raw)
        except (ValueError, RecursionError):
            return {"malformed": "an answer that is not JSON"}
        return obj if type(obj) is dict else {"malformed": "an answer that is not an object"}

    def ask(self, question: dict | None, pid: int, cpu_s: float, wall_s: float,
            cpu0: float | None = None) -> tuple[str, dict]:  # fmt: skip
        """('ok', answer), ('TIMEOUT', why) or ('CRASH', why) for one test (None: no
        question, the answer the child gives unasked: whether its module loaded). `cpu0`: the
        child's CPU as the question goes out, where the caller has just read it."""
        self.out = b""
        if question is not None:
            data = pyworker_check.json.dumps(question).encode()
            self.out = len(data).to_bytes(4, "big") + data
        t0 = time.monotonic()
        if cpu0 is None:
            cpu0 = call_cpu_s(pid)
        if self.out:  # most questions fit the pipe at once: no wait for it to be writable
            self._write()
        exited = flowing = False
        # The first wait needs no reading of CPU: none is used yet (it waits at most the CPU
        # allowance, and a test's CPU outruns its wall only with threads, read on the next wait).
        started = True
        while True:
            got = self.frame()
            if got is not None:
                if "malformed" in got:
                    return "CRASH", {"error": f"the process wrote {got['malformed']}"}
                return "ok", got
            if exited:
                return "CRASH", {"error": "the process exited before it answered"}
            left = t0 + wall_s - time.monotonic()
            used = call_cpu_s(pid) - cpu0 if not (flowing or started) else 0.0
            started = False
            if used > cpu_s:
                return "TIMEOUT", {"error": f"CPU time over {cpu_s:g} s"}
            if left <= 0:
                return "TIMEOUT", {"error": f"wall time over {wall_s:g} s"}
            writes = [self.ask_w] if self.out else []
            step = min(left, max(cpu_s - used, POLL_S))
            readable, writable, _ = select.select([self.ans_r, self.pidfd], writes, [], step)
            if writable:
                self._write()
            # while an answer streams in, its CPU is read once per quiet wait, not per chunk
            flowing = self.ans_r in readable
            if flowing and not self._read():
                exited = True
            elif self.pidfd in readable:
                self._drain()
                exited = True

    def _write(self) -> None:
        """As much of the question as the pipe takes now."""
        try:
            self.out = self.out[os.write(self.ask_w, self.out) :]
        except BlockingIOError:
            pass
        except OSError:
            self.out = b""  # the child closed its end; its exit is seen next

    def _drain(self) -> None:
        os.set_blocking(self.ans_r, False)
        try:
            while self._read():
                pass
        except BlockingIOError:
            pass
        os.set_blocking(self.ans_r, True)


def drive(req: dict, pid: int, chan: Channel, tests: list[dict]) -> tuple[list[dict], str]:
    """Ask the child every test in order; each test's result, and why the batch stopped early
    ('' when every test was asked)."""
    fail_fast = bool(req.get("fail_fast"))
    results: list[dict] = []
    status, ready = chan.ask(None, pid, float(req["load_cpu_s"]), float(req["load_wall_s"]))
    if status != "ok" or not ready.get("ready"):
        why = ready.get("error") if status != "ok" else _error_of(ready)
        results.append({"status": "RUNTIME_ERROR" if status == "ok" else status,
                        "error": str(why), "wall_s": 0.0, "cpu_s": 0.0})  # fmt: skip
        return results, "the module did not load"
    c0 = call_cpu_s(pid)
    for test in tests:
        t0 = time.monotonic()
        status, answer = chan.ask({"args": test["args"]}, pid, float(test["cpu_s"]),
                                  float(test["wall_s"]), cpu0=c0)  # fmt: skip
        c1 = call_cpu_s(pid)  # the child waits for its next question: this is the next c0
        cost = {"wall_s": time.monotonic() - t0, "cpu_s": max(0.0, c1 - c0)}
        c0 = c1
        if status == "ok" and cost["cpu_s"] > float(test["cpu_s"]):
            # answered between two readings (threads or children on several cores): the CPU
            # it took decides, not whether a reading fell inside the test
            status, answer = "TIMEOUT", {"error": f"CPU time over {float(test['cpu_s']):g} s"}
        if status != "ok":
            results.append({"status": status, "error": answer["error"], **cost})
            return results, status
        if "value" in answer and len(chan.raw) > DIGEST_ABOVE:
            results.append({"status": "OK", "digest": _digest(chan.raw), "size": len(chan.raw),
                            **cost})  # fmt: skip
            continue
        if "value" in answer:
            results.append({"status": "OK", "value": answer["value"], **cost})
            continue
        error = _error_of(answer)
        kind = "MEMORY_LIMIT" if error.startswith("MemoryError") else "RUNTIME_ERROR"
        results.append({"status": kind, "error": error, **cost})
        if fail_fast:
            return results, kind
    return results, ""


def _share_a_core(core: int | None) -> set[int] | None:
    """Put this process (and so the child it forks next) on one core, `core` or the one it runs
    on now; the affinity it had, to restore after the batch (None: left as it was).

    Parent and child take turns (one asks, the other answers), so they never need two cores,
    and a wake-up on the same core costs a fraction of one across cores (on this project's
    VMs a question-and-answer round trip took 12 us on one core against 77 us across two)."""
    try:
        before = os.sched_getaffinity(0)
        if core is None or core not in before:
            fd = os.open("/proc/self/stat", os.O_RDONLY | os.O_CLOEXEC)  # 3 system calls, not 9
            try:
                data = os.read(fd, 4096)
            finally:
                os.close(fd)
            core = int(data[data.rindex(b")") + 2 :].split()[36])
        if core not in before:
            return None
        os.sched_setaffinity(0, {core})
    except (OSError, ValueError, IndexError):
        return None
    return before


def _digest(raw: bytes) -> str:
    """SHA-256 of an answer's bytes. OpenSSL's, where Python has it, uses the CPU's SHA
    instructions: 0.07 s for 128 MiB against 0.44 s for CPython's own, and a HumanEval+ run
    hashes about 400 MB of answers. Imported here, in the request process that needs it, never
    by the server (it forks lean); the same digest either way."""
    try:
        from _hashlib import openssl_sha256 as sha256
    except ImportError:  # a Python built without OpenSSL
        try:
            from _sha256 import sha256
        except ImportError:  # Python 3.12+
            from _sha2 import sha256  # type: ignore[import-not-found,no-redef]
    return sha256(raw).hexdigest()


def _error_of(answer: dict) -> str:
    name, text = answer.get("error_type", "Exception"), answer.get("error", "")
    return f"{name}: {text}"[:2000] if isinstance(text, str) else str(name)[:200]


def batch_call(req: dict, uid: int, server: types.ModuleType) -> dict:
    """Mode "batch" of the worker (`server`: `pyworker_request`, whose compile,
    descriptor closing and cleanup every mode shares): compile, run the batch, meter it and
    clean up after it as after any call."""
    import worker_child
    import worker_meter
    import worker_results

    _key, code, err = server._compile(req["source"], req.get("filename", "solution.py"),
                                      req["limits"])  # fmt: skip
    if code is None:
        return {"status": "COMPILE_ERROR", "error": err}
    lim = req["limits"]
    out_fd = os.memfd_create("out", 0)
    vsize, server_rss = worker_meter.statm()
    server._flush_stdio()
    server._await_turn()
    start = worker_meter.meter()

    def prepare(keep: tuple[int, ...]) -> None:
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        server._close_inherited((out_fd, *keep))
        worker_child.fresh_stdio()
        server._forget(req)
        worker_child.confine(lim, uid, vsize)

    reply = run_batch(req, code, prepare, uid)
    reply["peak_rss_mb"] = max(0, reply.pop("maxrss_kb") * 1024 - server_rss) / 1048576.0
    server._finish(reply, start)
    worker_results.read_output(out_fd, int(lim["stdout_bytes"]), reply)
    return reply


def run_batch(req: dict, code: types.CodeType,
              prepare_child: Callable[[tuple[int, ...]], None], uid: int = 0) -> dict:  # fmt: skip
    """Fork the batch's child and drive it; the reply's per-test results (the caller meters,
    cleans up and completes the reply). `prepare_child(keep)`: in the child, the descriptors
    and state of the parent dropped but `keep`, then the request's limits and `uid`: a child
    killed before that drop raises `worker_child.KilledBeforeConfined` (not the program's)."""
    ask_r, ask_w = os.pipe()
    ans_r, ans_w = os.pipe()
    try:
        import fcntl

        fcntl.fcntl(ans_r, _F_SETPIPE_SZ, _PIPE_BYTES)
    except OSError:
        pass  # the default buffer: more wake-ups, same answers
    tests = req.pop("tests")
    t0 = time.monotonic()
    before = _share_a_core(req.get("core"))
    try:
        pid = os.fork()
        if pid == 0:
            tests.clear()
            prepare_child((ask_r, ans_w))
            batch_child(req, code, ask_r, ans_w)
        os.close(ask_r)
        os.close(ans_w)
        pidfd = -1
        try:
            pidfd = os.pidfd_open(pid)
            results, stopped = drive(req, pid, chan=Channel(ask_w, ans_r, pidfd), tests=tests)
            if results and results[-1]["status"] == "CRASH":
                import worker_child  # a sibling in the worker's directory, like batch_call's

                # its pipe closes before it is a zombie: wait for the exit, then look at it
                select.select([pidfd], [], [], 1.0)
                worker_child.raise_if_killed_before_confined(pid, uid)
        finally:
            try:
                os.kill(pid, _signal.SIGKILL)
            except ProcessLookupError:
                pass
            _, status, ru = os.wait4(pid, 0)
            for fd in (ask_w, ans_r, pidfd):
                if fd >= 0:
                    os.close(fd)
    finally:
        if before is not None:
            os.sched_setaffinity(0, before)
    if results and results[-1]["status"] == "CRASH":
        last = results[-1]
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) == _signal.SIGXCPU:
            last.update(status="TIMEOUT", error="the batch's CPU allowance ran out")
        elif os.WIFEXITED(status):
            last["error"] += f" (exit status {os.WEXITSTATUS(status)})"
        elif os.WIFSIGNALED(status):
            last["error"] += f" (signal {os.WTERMSIG(status)})"
    return {"results": results, "stopped": stopped, "wall_s": time.monotonic() - t0,
            "maxrss_kb": ru.ru_maxrss}  # fmt: skip
