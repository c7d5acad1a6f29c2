"""Runs one workload script inside the sandbox (stdlib only), as the child of `workload_timer`:
imports it, calls setup(), calls experiment(state) once, then the run's repeats more calls (the
caching signature). Its command line is `runner SCRIPT REPO`, a test's process's too
(`pytest_launcher`); PERFGYM_RUN, removed at once, gives the repeats, a spare pipe's write end and
the timer's socket (settled at the numbers a test's process has them at, `perfgym_fd_layout`).
The socket carries one message per phase boundary (R before the repository is on sys.path, I
after the import, S after setup, B/E around each call, H with the first result's digest) and a
last `D` message with the digests and this process's own time of the first call. After R and
after H it waits for the timer's one-byte reply: the timer reads the run's CPU counter then,
and this process's own work must not run on past the stamp into the reading (every CPU second
beyond the counted wall is charged as parallel work). The workload's module-level imports from
outside the repository (numpy, the stdlib) are imported before R: none of the repository's code
can run then, and they would only dilute the speedup.

The kernel stamps the messages for the timer, a process the workload cannot reach: nothing this
process measures is counted (a patch may rewrite its frames with ctypes); its own first-call
time is only the cross-check. The writer is bound as a main() local before the workload is
imported; the workload's prints go to stderr, and the process ends with os._exit right after the
last message (no atexit handler of the patch writes after it). Each entry into the repository's
code (the counted import, setup and first call as one; each later call) runs at a depth drawn as
the tests' process draws it (`perfgym_call_depth`, shipped beside it).
"""

import ast
import hashlib
import importlib.machinery
import importlib.util
import inspect
import json
import os
import sys
from time import perf_counter as _clock

import perfgym_call_depth
import perfgym_fd_layout


def _digest(value):
    return hashlib.sha256(repr(value).encode("utf-8", "backslashreplace")).hexdigest()[:32]


def _from_repo(top, repo):
    """Whether the top-level module `top` would come from the repository all the same (an
    editable install's path entry or finder pointing into it): found without running it."""
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return True
    if spec is None:
        return True
    root = os.path.realpath(repo) + os.sep
    places = [spec.origin or "", *(spec.submodule_search_locations or ())]
    # "built-in" and "frozen" are no paths
    return any(os.path.realpath(p).startswith(root) for p in places if os.path.isabs(p))


def _preimport(script, repo):
    """Import the workload's module-level imports that come from outside the repository (numpy,
    the stdlib), before the clock starts: no code of the repository can run yet (it is not on
    sys.path), so their import is the same on both copies and would only dilute the speedup.
    A name the repository itself provides (a top-level file or folder of that name) is left to
    the timed import."""
    try:
        with open(script, "rb") as f:
            tree = ast.parse(f.read())
        own = {entry.split(".")[0] for entry in os.listdir(repo)}
    except (OSError, SyntaxError, ValueError):
        return
    for node in tree.body:
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            if name.split(".")[0] in own or _from_repo(name.split(".")[0], repo):
                continue
            try:
                importlib.import_module(name)
            except BaseException:  # noqa: BLE001 - it fails again, on the clock, if it must
                pass


def _held(script):
    """A loader of the workload whose source is read now: its file can go before the clock."""
    with open(script, "rb") as f:
        source = f.read()

    class HeldSourceLoader(importlib.machinery.SourceFileLoader):
        def get_data(self, path):
            return source if path == script else super().get_data(path)

    return HeldSourceLoader("perfgym_workload", script)


def _leave_nothing(*paths):
    """perfgym's files gone from /tmp before the repository's code runs, as in a test's
    process: what /tmp holds told the two apart."""
    for path in paths:
        try:
            os.unlink(path)
        except OSError:
            pass


def main(
    clock=_clock,
    dumps=json.dumps,
    write=os.write,
    read=os.read,
    exit_now=os._exit,
    at_depth=perfgym_call_depth.call,
):
    # Bound as locals before the workload is imported: a patch may rebind this module's globals
    # (sys.modules['__main__']._clock) or json.dumps, but not a running frame's locals.
    script, repo = sys.argv[1], sys.argv[2]
    count, _, fds = os.environ.pop("PERFGYM_RUN").partition(";")
    repeats = int(count)
    spare, channel = (int(fd) for fd in fds.split(","))
    _, pipe = perfgym_fd_layout.settle(spare, channel)  # the descriptors a test's process has
    os.dup2(2, 1)
    os.environ.pop("_", None)  # bash's last command: the tests' process has none
    perfgym_call_depth.install()

    def tag(t, wait=False):
        write(pipe, t)
        if wait:  # the timer reads the run's CPU counter while this process does nothing
            read(pipe, 16)

    def load():
        tag(b"R\n", wait=True)  # the timer's clock starts: from here the repository's code may run
        sys.path.insert(0, repo)
        os.chdir(repo)
        spec = importlib.util.spec_from_file_location("perfgym_workload", script, loader=loader)
        if spec is None or spec.loader is None:
            raise SystemExit(f"cannot load workload {script}")
        module = importlib.util.module_from_spec(spec)
        sys.modules["perfgym_workload"] = module
        spec.loader.exec_module(module)
        tag(b"I\n")
        return module

    def counted():
        """R to H: import, setup, the first call and its digest, at one depth: no draw of a
        depth (a fraction of a millisecond) runs on the clock."""
        module = load()
        state = module.setup() if callable(getattr(module, "setup", None)) else None
        tag(b"S\n")
        try:  # GSO's experiment() may read setup's data from globals instead of an argument
            takes_state = bool(inspect.signature(module.experiment).parameters)
        except (TypeError, ValueError):
            takes_state = True
        args = (state,) if takes_state else ()
        tag(b"B\n")
        t0 = clock()
        result = module.experiment(*args)
        took = clock() - t0
        tag(b"E\n")
        digest = _digest(result)  # repr() is part of the answer: a lazy result pays here
        tag(("H" + digest + "\n").encode(), wait=True)  # the end of the counted time: the answer
        return module, args, took, digest

    def again(module, args):
        tag(b"B\n")
        result = module.experiment(*args)
        tag(b"E\n")
        return _digest(result)

    _preimport(script, repo)
    loader = _held(script)
    _leave_nothing(script, os.path.abspath(sys.argv[0]), perfgym_call_depth.__file__,
                   perfgym_fd_layout.__file__)  # fmt: skip
    for name in ("perfgym_call_depth", "perfgym_fd_layout"):  # as in a test's process
        sys.modules.pop(name, None)
    # the repository's code entered at a depth drawn as in its tests' process
    module, args, took, digest = at_depth(counted)
    digests = [digest]
    for _ in range(repeats):
        digests.append(at_depth(again, module, args))
    line = {"first_s": took, "digests": digests}
    for stream in (sys.stdout, sys.stderr):  # the workload's own prints, before the result
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a stream the workload closed or replaced
            pass
    write(pipe, ("D" + dumps(line) + "\n").encode())
    # No atexit handler, thread or finalizer of the patch gets to print after the result line.
    exit_now(0)


if __name__ == "__main__":
    main()
