"""Runs one workload script inside the sandbox (stdlib only): setup() untimed, experiment(state)
timed on its first call, then `--repeats` more calls (the caching signature), and one JSON
line on a private copy of stdout: {"first_s", "repeat_s", "digests", "cpu_s"}.

The clock is bound before the workload is imported, so a patch that reassigns
time.perf_counter does not change what is measured; the workload's own prints go to stderr.
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


def main():
    script, repo, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3])
    private = os.fdopen(os.dup(1), "w")
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
    c0 = _cpu()
    t0 = _clock()
    result = module.experiment(*args)
    first = _clock() - t0
    cpu = _cpu() - c0
    digests = [_digest(result)]
    del result
    times = []
    for _ in range(repeats):
        t0 = _clock()
        again = module.experiment(*args)
        times.append(_clock() - t0)
        digests.append(_digest(again))
        del again
    line = {"first_s": first, "repeat_s": times, "digests": digests, "cpu_s": cpu}
    private.write("\nPERFGYM_WORKLOAD " + json.dumps(line) + "\n")
    private.flush()


if __name__ == "__main__":
    main()
