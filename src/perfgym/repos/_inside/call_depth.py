"""Every call into a repository's code at a random depth of the stack, drawn the same way in its
tests' process and in a workload's (stdlib only; shipped into both as `perfgym_call_depth`).

Red team helper-115 switched a bug off under test by the stack's depth, found without reading
a frame: recursing until RecursionError at import counted 29 frames to spare fewer in pytest's
process (67 deep) than in a workload's. Here both processes set one recursion limit, and each
entry into the repository's code (an import, a fixture, a test's function; a workload's import,
setup and calls) goes down to a depth drawn afresh: the room left to recurse, measured the way
a patch would measure it, is set to `ROOM` plus a uniform draw below `SPREAD`, whatever sits
above. What a patch can count is then spread alike in both; the repository's code never has
less room than a default interpreter gives it from the top (about 1,000 frames).

The entry itself runs in a frame of its own data-stack chunk (`_fresh_chunk_entry`): CPython
keeps frames in 16 KiB chunks, allocated when a call does not fit and freed when that frame
returns. At about 1.6 % of drawn depths a hot loop's call straddled a chunk's end, and every
call mapped and unmapped a chunk: textindex's setup ran 33-43x slower at those depths (10 ms ->
340-450 ms), its first call up to ~4x, in ~4 % of workload runs, original and patched alike
(stalls the measurement then had to redraw or absorb as noise). From a fresh chunk the entry's
frames are far from its end. Where in the chunk they start is drawn too: a fixed place told the
two processes apart (red team helper-121: the local slots a frame may have before each call
faults, 3,617 at every import under pytest, 3,709 in every workload), so part of the padding,
a uniform draw below `IN_CHUNK` frames, goes below the entry (about 16 KiB of spread against
the ~1 KiB the processes' own frames differ by).
"""

import os
import sys

#: Room to recurse at every entry, at least (CPython's default limit is 1,000).
ROOM = 1000
#: The random part of the room, in frames: wider than any difference between the processes'
#: own depths (pytest calls a test about 70 frames down, a workload's runner 5).
SPREAD = 512
#: Frames the callers above an entry may use before the draw runs short (pytest's collection
#: under a deep conftest chain stays far below it).
FLOOR = 400
LIMIT = ROOM + SPREAD + FLOOR


def install():
    """The one recursion limit of both processes, set before any repository code runs."""
    sys.setrecursionlimit(LIMIT)


def _room():
    """Frames left before RecursionError here, counted by recursing (as a patch would); the
    error is caught in the deepest frame, so nothing unwinds through a traceback."""
    return _down(1)


def _down(n):
    try:
        return _down(n + 1)
    except RecursionError:
        return n


def _draw():
    return int.from_bytes(os.urandom(4), "little") % SPREAD


#: Local slots of the entry's frame: more than a 64 KiB chunk holds beside what CPython keeps
#: spare (8-byte slots), and more than a 128 KiB chunk leaves after one such frame, so the
#: frame never fits where it is called and always starts a chunk of its own (128 KiB, ~62 KiB
#: of it left after the entry's frame).
FRESH_CHUNK_SLOTS = 8200
#: Padding frames below the entry, drawn uniformly below this (~96 bytes each): the repository's
#: code starts up to ~16 KiB further into the chunk, never within ~46 KiB of its end.
IN_CHUNK = 170


def _fresh_chunk_entry():
    """A function whose frame holds FRESH_CHUNK_SLOTS locals (never assigned: nothing runs
    but the call it makes): too big for the chunk it is called from, so CPython gives it a new
    one, with ~62 KiB left after it for the frames of the call."""
    names = " = ".join(f"_{i}" for i in range(FRESH_CHUNK_SLOTS))
    source = (
        "def enter(fn, args, kwargs):\n"
        f"    if fn is None:\n        {names} = None\n"
        "    return fn(*args, **kwargs)\n"
    )
    scope = {}
    exec(compile(source, __file__, "exec"), scope)
    return scope["enter"]


_enter = _fresh_chunk_entry()


def _descend(frames, below, fn, args, kwargs):
    if frames > below:
        return _descend(frames - 1, below, fn, args, kwargs)
    return _enter(_pad, (below, fn, args, kwargs), {})


def _pad(frames, fn, args, kwargs):
    if frames > 0:
        return _pad(frames - 1, fn, args, kwargs)
    return fn(*args, **kwargs)


def call_at(frames, below, fn, *args, **kwargs):
    """`fn(*args, **kwargs)` under `frames` padding frames and the entry's own, `below` of the
    padding frames (at most `frames`) under the entry, in its fresh chunk."""
    return _descend(frames, min(below, frames), fn, args, kwargs)


def call(fn, *args, **kwargs):
    """`fn(*args, **kwargs)` with the room to recurse inside it drawn from ROOM + [0, SPREAD),
    and its place in a fresh frame chunk drawn below `IN_CHUNK` padding frames."""
    # _room() is measured one frame below this one, as _descend's first frame sits; the
    # entry's frame and the last padding frame under it are two more
    frames = max(0, _room() - ROOM - _draw() - 2)
    below = int.from_bytes(os.urandom(4), "little") % IN_CHUNK
    return _descend(frames, min(below, frames), fn, args, kwargs)


def entered(func, at_depth=call):
    """`func` called through `call` from now on (what it calls is held here, not looked up)."""

    def padded(*args, **kwargs):
        return at_depth(func, *args, **kwargs)

    padded.__wrapped__ = func
    return padded


def entered_for(call_fixture_func, root, at_depth=call):
    """pytest's fixture caller, through `call` for a fixture written under `root` (pytest's own
    fixtures run as they did)."""

    def padded(fixturefunc, request, kwargs):
        code = getattr(getattr(fixturefunc, "__func__", fixturefunc), "__code__", None)
        if code is not None and os.path.realpath(code.co_filename).startswith(root):
            return at_depth(call_fixture_func, fixturefunc, request, kwargs)
        return call_fixture_func(fixturefunc, request, kwargs)

    padded.__wrapped__ = call_fixture_func
    return padded
