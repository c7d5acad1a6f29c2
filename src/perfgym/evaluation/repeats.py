"""How many measured runs per workload an evaluation makes when none is asked for."""

from __future__ import annotations

#: `perfgym eval`'s measured runs per workload on the staged judge (RLPF's protocol uses 3).
JUDGE_REPEATS = 3


def resolve_repeats(repeats: int | None, *, enamel: bool) -> int:
    """The measured runs per workload: an explicit `repeats` as given, else the protocol's."""
    from perfgym.enamel.protocol import REPEATS as ENAMEL_REPEATS

    if repeats is not None:
        return repeats
    return ENAMEL_REPEATS if enamel else JUDGE_REPEATS
