"""`DecidedOn`: which inputs a verdict was decided on (a light type: verdicts carry it, and
`perfgym.judge.hidden`, which draws the hidden inputs, imports the generators)."""

from __future__ import annotations

from enum import Enum


class DecidedOn(str, Enum):  # noqa: UP042 - not StrEnum, which changes str() and format()
    """Which inputs a verdict's correctness and timing on the workloads were decided on."""

    HIDDEN = "hidden"  # fresh generated workloads the author never saw
    VISIBLE = "visible"  # the task's declared workloads (or its tests)
