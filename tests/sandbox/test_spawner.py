"""Long-lived sandbox processes survive the thread that first needed them."""

import threading

from perfgym.sandbox import Status, WarmSandbox
from perfgym.sandbox.pyworker import PythonWorker


def test_launcher_and_worker_outlive_their_starting_thread():
    sb, worker = WarmSandbox(), PythonWorker()
    try:
        first: list[object] = []

        def start() -> None:  # a short-lived thread, like a judge's pool thread
            first.append(sb.run(["true"]).status)
            first.append(worker.call("def f():\n    return 1\n", "f").status)

        t = threading.Thread(target=start)
        t.start()
        t.join()
        assert first == [Status.OK, Status.OK]
        launcher, server = sb._proc.pid, worker._proc.pid
        assert sb.run(["true"]).status is Status.OK
        assert worker.call("def f():\n    return 2\n", "f").value == 2
        # Same processes: none was killed when the starting thread ended.
        assert (sb._proc.pid, worker._proc.pid) == (launcher, server)
        assert sb.restarts == 0
    finally:
        sb.close()
        worker.close()
