"""Runs one workload script inside the sandbox (stdlib only): setup() untimed, experiment(state)
timed on its first call, then `--repeats` more calls (the caching signature), and one JSON
line on a private copy of stdout: {"first_s", "repeat_s", "digests", "cpu_s"}, after the
host's per-run nonce (argv[4] names the file holding it).

The clocks and the writer are bound as main()'s locals before the workload is imported, so a
patch that reassigns time.perf_counter or this module's globals does not change what is
measured; the workload's own prints go to stderr, and the process ends with os._exit right
after the result line (no atexit handler of the patch prints a second one).
"""

import hashlib
import importlib.util
import inspect
import json
import os
import sys
from time import perf_counter as _clock
from time import process_time as _cpu


def _digest(value):
    return hashlib.sha256(repr(value).encode("utf-8", "backslashreplace")).hexdigest()[:32]


def main(clock=_clock, cpu_clock=_cpu, dumps=json.dumps, write=os.write, exit_now=os._exit):
    # Bound as locals before the workload is imported: a patch may rebind this module's globals
    # (sys.modules['__main__']._clock) or json.dumps, but not a running frame's locals.
    script, repo, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3])
    # The host's secret for this run, read and deleted before any workload code runs: a result
    # line the patch prints itself (then ending the process) lacks it.
    with open(sys.argv[4]) as f:
        nonce = f.read().strip()
    os.unlink(sys.argv[4])
    private = os.dup(1)
    os.dup2(2, 1)
    sys.path.insert(0, repo)
    os.chdir(repo)
    spec = importlib.util.spec_from_file_location("perfgym_workload", script)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load workload {script}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["perfgym_workload"] = module
    spec.loader.exec_module(module)
    state = module.setup() if callable(getattr(module, "setup", None)) else None
    try:  # GSO's experiment() may read setup's data from globals instead of an argument
        takes_state = bool(inspect.signature(module.experiment).parameters)
    except (TypeError, ValueError):
        takes_state = True
    args = (state,) if takes_state else ()
    c0 = cpu_clock()
    t0 = clock()
    result = module.experiment(*args)
    first = clock() - t0
    cpu = cpu_clock() - c0
    digests = [_digest(result)]
    del result
    times = []
    for _ in range(repeats):
        t0 = clock()
        again = module.experiment(*args)
        times.append(clock() - t0)
        digests.append(_digest(again))
        del again
    line = {"first_s": first, "repeat_s": times, "digests": digests, "cpu_s": cpu}
    for stream in (sys.stdout, sys.stderr):  # the workload's own prints, before the result
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a stream the workload closed or replaced
            pass
    write(private, ("\nPERFGYM_WORKLOAD " + nonce + " " + dumps(line) + "\n").encode())
    # No atexit handler, thread or finalizer of the patch gets to print after the result line.
    exit_now(0)


if __name__ == "__main__":
    main()
