"""The clock of one workload run, in a process the workload cannot reach (stdlib only).

Started inside the sandbox as `workload_timer.py RUNNER SCRIPT REPO REPEATS NONCE_FILE`: reads
and deletes the host's nonce, makes itself non-dumpable (no same-user process may read its
memory or ptrace it), then starts the workload runner as its child with one pipe. The runner
writes a tag per phase boundary; this process stamps each tag with its own clock as it arrives:

    R  the runner is ready, no code of the repository has run yet (its sys.path lacks it)
    I  the workload module (and so the package) is imported
    S  setup() returned
    B / E  the first experiment() call began / ended
    H  the first result's digest is taken (its repr: a lazy result does its work here)
    B / E  each repeat call (the caching signature)
    D  the digests (JSON) -- the last message

The counted time is R -> H: import, setup, the first call and its digest, everything the
patch's code can do before the answer exists. The phases are reported beside it; the runner's own in-process
time of the first call is reported as `inproc_first_s` for the cross-check only. Tags out of
this order, or a second result, fail the run. One JSON line goes to stdout after the nonce.
"""

import json
import os
import resource
import subprocess
import sys
from time import perf_counter as clock

_ORDER_HEAD = ("R", "I", "S", "B", "E", "H")


def _undumpable() -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(4, 0, 0, 0, 0) == 0  # PR_SET_DUMPABLE = 4
    except Exception:  # noqa: BLE001 - no libc prctl: the sandbox's own isolation remains
        return False


def _fail(nonce: str, why: str) -> None:
    line = json.dumps({"error": why})
    os.write(1, ("\nPERFGYM_WORKLOAD " + nonce + " " + line + "\n").encode())
    os._exit(0)


def main() -> None:
    runner, script, repo, repeats, nonce_file = sys.argv[1:6]
    with open(nonce_file) as f:
        nonce = f.read().strip()
    os.unlink(nonce_file)
    sealed = _undumpable()
    r, w = os.pipe()
    stamps: list[tuple[str, float, bytes]] = []
    start = clock()
    child = subprocess.Popen(
        [sys.executable, runner, script, repo, repeats, str(w)],
        pass_fds=(w,),
        stdin=subprocess.DEVNULL,
        stdout=2,
    )
    os.close(w)
    buf = b""
    while True:  # until every holder of the pipe (the runner, any process it left) closed it
        chunk = os.read(r, 65536)
        now = clock()
        if not chunk:
            break
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            if line:
                stamps.append((line[:1].decode("latin-1"), now, line[1:]))
    _, status, usage = os.wait4(child.pid, 0)
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
        "sealed": sealed,
    }
    os.write(1, ("\nPERFGYM_WORKLOAD " + nonce + " " + json.dumps(line) + "\n").encode())
    os._exit(0)


if __name__ == "__main__":
    main()
