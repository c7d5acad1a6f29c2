"""The clock of one workload run, in a process the workload cannot reach (stdlib only).

Started inside the sandbox as `workload_timer.py RUNNER SCRIPT REPO REPEATS NONCE_FILE`: reads
and deletes the host's nonce, makes itself non-dumpable (no same-user process may read its
memory or ptrace it), then starts the workload runner as its child with one Unix seqpacket
socket. The runner sends a tag per phase boundary; each is stamped by the kernel when it is
sent (SO_TIMESTAMPNS: no later than the send, however late this process reads it on a loaded
machine, and no code of the workload's process can change the stamp):

    R  the runner is ready, no code of the repository has run yet (its sys.path lacks it)
    I  the workload module (and so the package) is imported
    S  setup() returned
    B / E  the first experiment() call began / ended
    H  the first result's digest (its repr: a lazy result does its work here), in the message
    B / E  each repeat call (the caching signature)
    D  the digests (JSON) -- the last message

The timer also reads the CPU of the run's processes when R and H arrive (the runner waits for
its reply after each, so none of its own work runs into the reading): `window_cpu_s`, the
CPU spent over the counted time. Above that time's wall it is work done in parallel with it,
however the process's later life dilutes its whole-life figures (a fork reaped inside the
call, then a sleep after H). The counter is the run's own cgroup's (read-only to the run, in
ns, every process the run ever had: threads, reaped children, auto-reaped ones, orphans), less
the timer's own CPU; where it cannot be read, the sum over /proc of every process but the
timer and its ancestors (utime, stime and the reaped children's cutime, cstime: clock ticks;
an auto-reaped child's CPU is lost there). `window_cpu_from` says which.

The counted time is R -> H: import, setup, the first call and its digest, everything the
patch's code can do before the answer exists. The patch runs in the runner's process, so it can
write tags of its own (or silence the runner's): out of order they fail the run; in order they
can only move the phase boundaries, not R (sent before any code of the repository runs) nor H
(it carries the answer's digest, which must be D's first and the original's: it cannot come
before the work is done). The host counts the call plus import + setup growth, which is at
least R -> H less the original's import + setup: moving the boundaries buys nothing. The phases are reported beside it; the runner's own in-process
time of the first call is reported as `inproc_first_s` for the cross-check only. Tags out of
this order, or a second result, fail the run. One JSON line goes to stdout after the nonce.
"""

import json
import os
import resource
import socket
import struct
import subprocess
import sys
import time
from time import perf_counter as clock

_SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)


def _stamp(ancillary) -> float | None:
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == _SO_TIMESTAMPNS and len(data) >= 16:
            sec, nsec = struct.unpack("qq", data[:16])
            return sec + nsec * 1e-9
    return None


_ORDER_HEAD = ("R", "I", "S", "B", "E", "H")
_TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")


def _lineage() -> set[int]:
    """This process and its ancestors: not the workload's (their waited-for children are)."""
    out, pid = set(), os.getpid()
    while pid > 0 and pid not in out:
        out.add(pid)
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                pid = int(f.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return out


def counter_file(proc_cgroup: str) -> tuple[str, str] | None:
    """(path, 'v1' | 'v2') of the CPU counter of the run cgroup `proc_cgroup` (the text of
    /proc/self/cgroup) names; None unless it names a run cgroup of its own (on a machine
    without one it names the root, whose counter is the whole machine's)."""
    name = fmt = None
    for line in proc_cgroup.splitlines():
        _id, controllers, path = line.split(":", 2)
        if "cpuacct" in controllers.split(","):  # v1 (cpuacct alone or co-mounted with cpu)
            name, fmt = os.path.join("/sys/fs/cgroup", controllers, path.lstrip("/"),
                                     "cpuacct.usage"), "v1"  # fmt: skip
            break
        if controllers == "" and path.startswith("/"):  # v2's one hierarchy
            name, fmt = os.path.join("/sys/fs/cgroup", path.lstrip("/"), "cpu.stat"), "v2"
    if name is None or fmt is None or "/perfgym/run-" not in name:
        return None
    return name, fmt


#: Where a warm sandbox run finds its own cgroup's v1 CPU counter alone (the cgroup file
#: systems are covered: sandbox/_inside/spare_view.py, OWN_CPU_COUNTER); empty where not shown.
OWN_CPU_COUNTER = "/sys/fs/cgroup/perfgym-run/cpuacct.usage"


def _cgroup_counter():
    """A reader of this run's cgroup CPU counter in seconds (v1 cpuacct.usage, v2 cpu.stat
    usage_usec), or None where no run cgroup is visible here."""
    found = None
    try:  # a cgroup file's size reads 0: read it
        with open(OWN_CPU_COUNTER, "rb") as f:
            if f.read().strip():
                found = (OWN_CPU_COUNTER, "v1")
    except OSError:
        pass
    try:
        if found is None:
            with open("/proc/self/cgroup") as f:
                found = counter_file(f.read())
    except (OSError, ValueError):
        return None
    if found is None:
        return None
    name, fmt = found
    try:
        fd = os.open(name, os.O_RDONLY)
    except OSError:
        return None

    def read() -> float | None:
        try:
            data = os.pread(fd, 4096, 0)
            if fmt == "v1":
                return int(data) * 1e-9
            for row in data.split(b"\n"):
                if row.startswith(b"usage_usec "):
                    return int(row.split()[1]) * 1e-6
        except (OSError, ValueError):
            pass
        return None

    return read if read() is not None else None


def _own_cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def _workload_cpu(skip: set[int]) -> float | None:
    """CPU so far of every visible process not in `skip`, with the children each reaped (a
    process's utime and stime cover all its threads; cutime and cstime its waited children)."""
    total = 0
    try:
        names = os.listdir("/proc")
    except OSError:
        return None
    for name in names:
        if not name.isdigit() or int(name) in skip:
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
        except (OSError, ValueError, IndexError):
            continue  # ended and reaped since the listing: its reaper holds its CPU now
    return total * _TICK_S


def _undumpable() -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(4, 0, 0, 0, 0) == 0  # PR_SET_DUMPABLE = 4
    except Exception:  # noqa: BLE001 - no libc prctl: the sandbox's own isolation remains
        return False


def _receive(sock: socket.socket) -> tuple[bytes, list]:
    """The next message and its ancillary data (b"" once every holder closed the socket). A
    holder that closed with a reply of ours unread (a process that wrote the runner's tags
    itself and never read the timer's answer) makes the kernel report ECONNRESET once, ahead
    of the messages still queued: the report is cleared by reading it, so read again."""
    while True:
        try:
            msg, anc, _flags, _addr = sock.recvmsg(1 << 20, socket.CMSG_SPACE(16))
            return msg, anc
        except ConnectionResetError:
            continue


def _fail(nonce: str, why: str) -> None:
    line = json.dumps({"error": why})
    os.write(1, ("\nPERFGYM_WORKLOAD " + nonce + " " + line + "\n").encode())
    os._exit(0)


def main() -> None:
    runner, script, repo, repeats, nonce_file = sys.argv[1:6]
    with open(nonce_file) as f:
        nonce = f.read().strip()
    os.unlink(nonce_file)
    os.unlink(os.path.abspath(sys.argv[0]))  # nothing of perfgym's left in /tmp (workload_runner)
    sealed = _undumpable()
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        mine.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
        kernel = True
    except OSError:
        kernel = False
    stamps: list[tuple[str, float, bytes]] = []
    lineage = _lineage()
    counter = _cgroup_counter()
    window: list[float | None] = []  # the workload's CPU when R and when H arrived
    start = clock()
    # a spare pipe's write end beside the socket: a test's process has one of each too
    # (`fd_layout`); its read end stays here, unread
    spare_read, spare_write = os.pipe()
    # what the run needs beyond the script and the copy goes in the environment, which the
    # runner empties of it: the command line is a test's process's too (`pytest_launcher`)
    run_env = {**os.environ, "PERFGYM_RUN": f"{repeats};{spare_write},{theirs.fileno()}"}
    child = subprocess.Popen(
        [sys.executable, runner, script, repo],
        pass_fds=(theirs.fileno(), spare_write),
        env=run_env,
        stdin=subprocess.DEVNULL,
        stdout=2,
    )
    theirs.close()
    os.close(spare_write)
    # Until the last message (a process the runner left holding the socket does not hold this
    # one up) or until every holder closed it.
    while not stamps or stamps[-1][0] != "D":
        msg, anc = _receive(mine)
        if not msg:
            break
        now = _stamp(anc) if kernel else None
        if now is None:
            kernel = False
            now = time.time()
        raw = msg.rstrip(b"\n")
        stamps.append((raw[:1].decode("latin-1"), now, raw[1:]))
        if stamps[-1][0] in ("R", "H"):
            if len(stamps) in (1, 6):  # in order (anything else fails the run below)
                if counter is not None:
                    total = counter()
                    window.append(None if total is None else total - _own_cpu())
                else:
                    window.append(_workload_cpu(lineage))
            try:  # the runner waits for this before it goes on
                mine.send(b"k")
            except OSError:
                pass
    _, status, usage = os.wait4(child.pid, 0)
    os.close(spare_read)
    exited = clock()
    tags = [t for t, _, _ in stamps]
    repeat_n = int(repeats)
    expected = list(_ORDER_HEAD) + ["B", "E"] * repeat_n + ["D"]
    if tags != expected:
        code = os.waitstatus_to_exitcode(status)
        if "D" not in tags:
            _fail(nonce, f"the workload ended (exit code {code}) before its result")
        _fail(nonce, "the runner's phase messages were out of order or repeated: "
                     + "".join(tags)[:40])  # fmt: skip
    at = [s for _, s, _ in stamps]
    try:
        inside = json.loads(stamps[-1][2].decode())
        digests = [str(d) for d in inside["digests"]]
        inproc = float(inside["first_s"])
        if not digests or digests[0] != stamps[5][2].decode():
            raise ValueError("the first digest differs from the one that ended the clock")
    except (ValueError, KeyError, TypeError):
        _fail(nonce, "the runner's result message is malformed")
    repeat_at = range(6, 6 + 2 * repeat_n, 2)
    own = resource.getrusage(resource.RUSAGE_SELF)
    line = {
        "total_s": at[5] - at[0],
        "import_s": at[1] - at[0],
        "setup_s": at[2] - at[1],
        "first_s": at[4] - at[3],
        "digest_s": at[5] - at[4],
        "repeat_s": [at[i + 1] - at[i] for i in repeat_at],
        "digests": digests,
        "inproc_first_s": inproc,
        "process_s": exited - start,
        "child_cpu_s": usage.ru_utime + usage.ru_stime,
        "timer_cpu_s": own.ru_utime + own.ru_stime,
        "window_cpu_s": window[1] - window[0] if len(window) == 2 and None not in window else None,
        "window_cpu_from": "cgroup" if counter is not None else "proc",
        "sealed": sealed,
        "kernel_stamps": kernel,
    }
    os.write(1, ("\nPERFGYM_WORKLOAD " + nonce + " " + json.dumps(line) + "\n").encode())
    os._exit(0)


if __name__ == "__main__":
    main()
