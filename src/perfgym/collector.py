"""The garbage collector's pace in perfgym's own long-running processes (the CLI, the service).

A HumanEval+ run holds hundreds of thousands of objects for its whole life (the suite's
124,253 tests, their verdicts, the reference's outputs), and CPython's full collection walks
every one of them. At its default pace (a full collection after 10 of the middle generation's)
the host of one run made 12 full collections taking 2.0 of its 8.1 CPU-seconds, on the one core
the host shares with the tests. A full collection after 100 of the middle generation's made 2
(0.5 s). Cycles are still found and freed, later; the young generations are left as they were.

Only processes perfgym starts for itself set this: a trainer that imports perfgym keeps its
own collector settings.
"""

from __future__ import annotations

import gc

#: Collections of the middle generation between two full collections (CPython's default: 10).
FULL_EVERY = 100


def pace_for_long_runs() -> None:
    """Make full collections `FULL_EVERY` middle-generation collections apart, where they are
    more often (a lower setting made by the process's owner is raised; a higher one is kept)."""
    young, middle, full = gc.get_threshold()
    if full < FULL_EVERY:
        gc.set_threshold(young, middle, FULL_EVERY)
