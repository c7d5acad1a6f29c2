"""The warm worker's calls forget what they cached: their own memory cgroup, emptied after each.

Every process that runs a call's program first joins a memory cgroup of the calls' own, below
the worker's (`WorkerCgroup.calls`); the worker itself (its zygote, its request processes) is
never in it. Pages a call brings into the host's page cache and the directory entries its
lookups leave (a name that does not exist, cached as missing) are charged there, and when the
call's every process is gone the cleanup reclaims all of it (`memory.force_empty`), where the
call's limits ask it to (`Limits.forget_page_cache`, a candidate's timed call). Without
it the next call could time a lookup or a read to learn what an earlier call looked up or read:
red team helper-95 carried HumanEval/59's answer from one call to the next in which made-up
names under /usr/bin were cached as missing (~2.5 us a cold lookup, ~1.3 us a cached one).

Best effort: where the host made no such cgroup (cgroup v2, whose worker cgroup cannot have
both processes and a child with the memory controller; no writable hierarchy) nothing is
joined and nothing is forgotten (docs/security.md, section 13).
"""

from __future__ import annotations

import os

#: (the calls cgroup's `cgroup.procs`, its `memory.force_empty`), write-only; -1: none.
fds = (-1, -1)
#: The request being served asked to forget (`Limits.forget_page_cache`: a candidate's timed
#: or counted call). Reclaiming costs the host's other core a drain of its page lists (warm
#: calls/s fell 18% when every call forgot), so correctness calls keep their pages.
wanted = False


def join() -> None:
    """In a child about to run a program, before its descriptors are closed: move this process
    into the calls' cgroup (its children follow)."""
    if fds[0] >= 0:
        try:
            os.write(fds[0], b"0")
        except OSError:
            pass


def forget() -> None:
    """Once every process of the call is gone, where the call asked to: reclaim every page and
    directory entry charged to the calls' cgroup (an earlier call's that did not ask too)."""
    if wanted and fds[1] >= 0:
        try:
            os.write(fds[1], b"0")
        except OSError:
            pass
