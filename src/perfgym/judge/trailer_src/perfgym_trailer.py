"""perfgym: runs a PerfCodeBench Python harness (argv[1:]: the harness and its arguments) and,
only when it finished normally, writes "PERFGYM_HARNESS_END <nonce> <state>" to the original
stdout (docs/security.md, section 6b). The nonce is read, and its file removed, before the
harness (and so the solution) is loaded."""

import builtins
import json
import os
import runpy
import sys


def _end_mark(harness):
    path = "/tmp/.perfgym-nonce"
    try:
        with open(path, "rb") as f:
            nonce = f.read().split()[0]
    except (OSError, IndexError):
        nonce = b""
    try:
        os.unlink(path)
    except OSError:
        pass
    saved, before = os.dup(1), os.fstat(1)
    kept = (sys.stdout, builtins.print, json.dumps)
    try:
        runpy.run_path(harness, run_name="__main__")
    except SystemExit as exc:
        tb = exc.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        where = tb.tb_frame.f_code.co_filename if tb is not None else ""
        # sys.exit(0) ends a harness normally only when the harness's own code raised it.
        if exc.code not in (0, None) or os.path.abspath(where) != os.path.abspath(harness):
            raise
    same = (sys.stdout, builtins.print, json.dumps) == kept
    if same:
        sys.stdout.flush()
    now = os.fstat(1)
    same = same and (now.st_dev, now.st_ino) == (before.st_dev, before.st_ino)
    state = b"ok" if same else b"stdout-replaced"
    if nonce:
        os.write(saved, b"\nPERFGYM_HARNESS_END " + nonce + b" " + state + b"\n")


if __name__ == "__main__":
    del sys.argv[0]
    sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))
    _end_mark(sys.argv[0])
