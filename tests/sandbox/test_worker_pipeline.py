"""The pool's pipelined `map`: order, large messages without deadlock, a worker dying mid-stream,
and isolation kept between pipelined calls."""

import os
import signal
import threading
import time

from perfgym.sandbox import Limits, Status
from perfgym.sandbox.pyworker import PythonWorkerPool

ECHO = "def f(s, n):\n    return s[::-1] + 'x' * n\n"


def test_large_requests_and_replies_do_not_deadlock():
    big = "ab" * 60_000  # each request alone is over the bytes allowed in flight
    with PythonWorkerPool(size=2) as pool:
        out = pool.map([(ECHO, "f", [f"{big}{i}", 150_000]) for i in range(12)])
    assert [r.status for r in out] == [Status.OK] * 12
    assert [r.value for r in out] == [f"{big}{i}"[::-1] + "x" * 150_000 for i in range(12)]


def test_pipelined_calls_stay_isolated():
    stateful = "import os\nseen = []\ndef f(i):\n    seen.append(i)\n    open(str(i), 'w').close()\n    return len(seen), sorted(os.listdir('.'))\n"  # noqa: E501
    with PythonWorkerPool(size=2) as pool:
        out = pool.map([(stateful, "f", [i]) for i in range(40)])
    assert [r.value for r in out] == [(1, [str(i)]) for i in range(40)]


def _server_of(pool: PythonWorkerPool, k: int) -> int:
    """The pid of worker k's server: the child of its bubblewrap process."""
    proc = pool.workers[k]._proc
    assert proc is not None
    with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as f:
        return int(f.read().split()[0])


def test_a_worker_killed_mid_stream_fails_only_the_call_it_was_serving():
    slow = "import time\ndef f(i):\n    time.sleep(0.02)\n    return i\n"
    with PythonWorkerPool(size=2) as pool:
        pool.map([(slow, "f", [0])] * 2)  # both workers up
        victims: list[int] = []

        def kill_one() -> None:
            time.sleep(0.3)
            victims.append(_server_of(pool, 0))
            os.kill(victims[0], signal.SIGKILL)

        killer = threading.Thread(target=kill_one)
        killer.start()
        out = pool.map([(slow, "f", [i]) for i in range(60)], Limits(wall_s=5))
        killer.join()
    assert victims
    failed = [i for i, r in enumerate(out) if r.status is not Status.OK]
    assert len(failed) == 1, [(r.status, r.error) for r in out if r.status is not Status.OK]
    assert out[failed[0]].status is Status.SANDBOX_ERROR
    assert "worker failed" in out[failed[0]].error
    assert [r.value for i, r in enumerate(out) if i not in failed] == [
        i for i in range(60) if i not in failed
    ]
