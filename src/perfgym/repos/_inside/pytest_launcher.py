"""Starts pytest for the test supervisor in a process shaped like a workload's (stdlib and
pytest only): shipped as /tmp/perfgym_workload_runner.py and run as a workload runner is,
`python3 /tmp/perfgym_workload_runner.py /tmp/perfgym_workload.py REPO`, with pytest's own
arguments in PERFGYM_PYTEST_ARGS (JSON, removed before pytest starts).

A patch read how its process was started (red team helper-117: `python3 -m pytest` in
/proc/PID/cmdline from C, `__main__.__spec__` set under `-m`, argv's length): a test's process
and a workload's now have one command line, one `__main__.__file__`, no module spec, and their
first path entry the repository (as `-m` and the workload runner make it).
"""

import json
import os
import sys


def main():
    args = json.loads(os.environ.pop("PERFGYM_PYTEST_ARGS"))
    try:
        os.unlink(os.path.abspath(sys.argv[0]))
    except OSError:
        pass
    sys.path[0] = os.getcwd()  # where `python3 -m pytest` starts its path; this file's is /tmp
    import pytest

    raise SystemExit(pytest.main(args))


if __name__ == "__main__":
    main()
