"""The bounds every run's limits live within, for the layers that must not import the sandbox.

`perfgym.sandbox.limits.Limits` validates against these; a task's own limits are checked
against them on load (`perfgym.tasks.task`), and the judge's config takes its wall backstop
from here (`perfgym.judge.config`).
"""

from __future__ import annotations

#: The longest time limit a run can have (CPU or wall): a backstop is capped here. It catches
#: absurd values (typos such as 10**9 seconds) while allowing real work.
MAX_TIME_S = 24 * 3600.0

#: The memory limits a run can have, MiB (1 TiB at most).
MIN_MEMORY_MB, MAX_MEMORY_MB = 4.0, float(1024 * 1024)

#: A run whose limit is on CPU time gets a wall limit this many times that, as a backstop: it
#: stops a program that sleeps, blocks or waits (no CPU), and leaves room for a machine loaded
#: up to about this many runnable processes per core before a correct program's wall time
#: reaches it (the dev machine, 2 cores shared by six sessions, stretched a 0.41 s CPU run to
#: 3.1 s of wall: 7.5x).
WALL_BACKSTOP = 10.0
