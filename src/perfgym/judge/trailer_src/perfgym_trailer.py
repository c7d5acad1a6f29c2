"""perfgym: runs a PerfCodeBench Python harness (argv[1:]: the harness and its arguments) and,
only when it finished normally, writes "PERFGYM_HARNESS_END <nonce> <state>" to the original
stdout (docs/security.md, section 6b). The nonce is read, and its file removed, before the
harness (and so the solution) is loaded. The harness is compiled here: a SystemExit(0) ends it
normally only when raised by one of those code objects, in the harness module's own globals.
The objects a harness writes its line with (print, json's encoder, sys.stdout) are compared
with those of the start (a patch that undoes itself before the harness returns is not seen).
With `--solution PATH` first, the harness is pointed at perfgym_solution.py instead of PATH
(in PERFCODEBENCH_SOLUTION and its arguments): the solution is loaded and called in a process
of its own, handing back plain values only (perfgym_split.py)."""

import builtins
import json
import json.encoder
import os
import sys
import types


def _code_objects(code, into):
    """`code` and the code objects nested in it (kept alive: compared by identity)."""
    into.append(code)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _code_objects(const, into)
    return into


def _writers():
    """The objects a harness's line goes through, by identity (and sys.stdout's own attributes)."""
    out = sys.stdout
    return (
        out,
        type(out),
        dict(getattr(out, "__dict__", {})),
        getattr(out, "buffer", None),
        builtins.print,
        builtins.repr,
        builtins.str,
        json.dumps,
        getattr(json, "_default_encoder", None),
        json.encoder.encode_basestring,
        json.encoder.encode_basestring_ascii,
        getattr(json.encoder, "c_make_encoder", None),
        getattr(json.encoder, "_make_iterencode", None),
        dict(vars(json.JSONEncoder)),
    )


def _same(a, b):
    for x, y in zip(a, b, strict=True):
        if isinstance(x, dict):
            if x.keys() != y.keys() or any(x[k] is not y[k] for k in x):
                return False
        elif x is not y:
            return False
    return True


def _end_mark(harness, stop):
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
    with open(harness, "rb") as f:
        code = compile(f.read(), harness, "exec", dont_inherit=True)
    codes = _code_objects(code, [])
    own = {id(c) for c in codes}
    module = types.ModuleType("__main__")
    module.__dict__.update(
        __file__=harness,
        __builtins__=builtins,
        __cached__=None,
        __loader__=None,
        __package__=None,
        __spec__=None,
    )
    kept = _writers()
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = module
    try:
        try:
            exec(code, module.__dict__)
        finally:
            stop()  # the harness returned: the solution's process ends
    except SystemExit as exc:
        tb = exc.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        frame = tb.tb_frame if tb is not None else None
        # sys.exit(0) ends a harness normally only when the harness's own code raised it.
        ours = frame is not None and id(frame.f_code) in own and frame.f_globals is module.__dict__
        if exc.code not in (0, None) or not ours:
            raise
    finally:
        if main is not None:
            sys.modules["__main__"] = main
    now_writers = _writers()
    replaced = not _same(now_writers[:4], kept[:4])  # sys.stdout, its type, its attributes
    patched = not _same(now_writers, kept)
    # Flushed either way: the line goes before the mark, and is read (its answer checked) even
    # where the mark says what was replaced.
    try:
        sys.stdout.flush()
    except Exception:  # noqa: BLE001 - the program's own stdout object: no mark then
        return
    now = os.fstat(1)
    replaced = replaced or (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino)
    state = b"stdout-replaced" if replaced else b"writer-patched" if patched else b"ok"
    if nonce:
        os.write(saved, b"\nPERFGYM_HARNESS_END " + nonce + b" " + state + b"\n")


def _point_at_shim():
    """`--solution PATH`: the harness gets the shim where it was given PATH, and the clocks
    that leave out what the shim does; (the shim's stop: ends the solution's process)."""
    if sys.argv[0] != "--solution":
        return lambda: None
    import perfgym_split

    # Out of sys.modules before any of the harness runs (it is the harness's own code, but
    # nothing needs it there).
    del sys.modules["perfgym_split"]
    real = sys.argv[1]
    del sys.argv[:2]
    shim = os.path.join(os.path.dirname(os.path.abspath(__file__)), "perfgym_solution.py")
    if os.environ.get("PERFCODEBENCH_SOLUTION") == real:
        os.environ["PERFCODEBENCH_SOLUTION"] = shim
    sys.argv[1:] = [shim if a == real else a for a in sys.argv[1:]]
    handoff = types.ModuleType("perfgym_split_handoff")  # read by the shim at each load
    setattr(handoff, "load", lambda name: perfgym_split.load(name, real))  # noqa: B010
    sys.modules["perfgym_split_handoff"] = handoff
    perfgym_split.install_clock()
    return perfgym_split.stop_all


if __name__ == "__main__":
    del sys.argv[0]
    _stop = _point_at_shim()
    sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))
    _end_mark(sys.argv[0], _stop)
