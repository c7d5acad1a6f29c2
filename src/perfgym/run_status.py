"""How a sandboxed run ended (`Status`) and the flags that say it hid time (`HIDING_FLAGS`, ...).

The sandbox produces them, the timing layer and the verdict carry them, rewards and metrics
read them: so they live in a module that imports nothing, and `perfgym.sandbox.execution`
re-exports them.
"""

from __future__ import annotations

from enum import Enum


class Status(str, Enum):
    """How a run ended. SANDBOX_ERROR is perfgym's own failure, never the program's."""

    OK = "OK"
    RUNTIME_ERROR = "RUNTIME_ERROR"
    TIMEOUT = "TIMEOUT"
    MEMORY_LIMIT = "MEMORY_LIMIT"
    OUTPUT_LIMIT = "OUTPUT_LIMIT"
    SANDBOX_ERROR = "SANDBOX_ERROR"

    @property
    def is_program_failure(self) -> bool:
        return self not in (Status.OK, Status.SANDBOX_ERROR)


#: Measurement flags under which a run's timing cannot be trusted for a speed decision (`idle_wait`
#: is the judge's, not the sandbox's: `perfgym.judge.idle_wait`).
HIDING_FLAGS = ("hidden_cpu", "outlived_main", "cpu_over_wall", "idle_wait")

#: Verdict flags of the harness cross-check (`perfgym.judge.crosscheck`): the time a harness
#: program reported is denied by the external clock, or its build takes over a library call the harness makes
#: (`perfgym.judge.replaced_calls`). Rewards treat them as HIDING_FLAGS: the
#: candidate's doing, so the lowest speed credit a correct program can earn, never None.
CLOCK_CHEAT_FLAGS = ("harness_time_exceeds_wall", "harness_untimed_work", "harness_timer_mismatch",
                     "harness_call_replaced")

#: Verdict flag of a candidate whose build did work its task's own builds do not
#: (`perfgym.judge.build_work`): computed at compile time, outside every clock. Rewards treat
#: it as CLOCK_CHEAT_FLAGS.
BUILD_WORK = "build_work"
