"""perfgym.tasks: the Task model, suites, and the loaders behind `load_suite(spec)`.

Names load on first use, so `import perfgym.tasks.task` does not load the loaders and the
input generators (which run in the sandbox).
"""

from typing import TYPE_CHECKING

from perfgym._lazy import exports_of, lazy_exports

if TYPE_CHECKING:
    from perfgym.tasks.eval_results import PublishedCandidate, load_candidates
    from perfgym.tasks.generate import enamel_inputs, materialize, materialize_all
    from perfgym.tasks.harness_plan import HarnessPlan, plan_harness
    from perfgym.tasks.placeholders import PLACEHOLDERS, check_placeholders, expand_placeholders
    from perfgym.tasks.suite import BUILTINS, load_suite
    from perfgym.tasks.suite_model import Suite
    from perfgym.tasks.task import (
        BuildSpec,
        HarnessSpec,
        Language,
        Oracle,
        Solution,
        Split,
        StoredMeasurement,
        Task,
        TaskKind,
        TestCase,
    )

_EXPORTS = exports_of(
    {
        "perfgym.tasks.eval_results": ("PublishedCandidate", "load_candidates"),
        "perfgym.tasks.generate": ("enamel_inputs", "materialize", "materialize_all"),
        "perfgym.tasks.harness_plan": ("HarnessPlan", "plan_harness"),
        "perfgym.tasks.placeholders": (
            "PLACEHOLDERS",
            "check_placeholders",
            "expand_placeholders",
        ),
        "perfgym.tasks.suite": ("BUILTINS", "load_suite"),
        "perfgym.tasks.suite_model": ("Suite",),
        "perfgym.tasks.task": (
            "BuildSpec",
            "HarnessSpec",
            "Language",
            "Oracle",
            "Solution",
            "Split",
            "StoredMeasurement",
            "Task",
            "TaskKind",
            "TestCase",
        ),
    }
)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "BUILTINS",
    "PLACEHOLDERS",
    "BuildSpec",
    "HarnessPlan",
    "HarnessSpec",
    "Language",
    "Oracle",
    "PublishedCandidate",
    "Solution",
    "Split",
    "StoredMeasurement",
    "Suite",
    "Task",
    "TaskKind",
    "TestCase",
    "check_placeholders",
    "enamel_inputs",
    "expand_placeholders",
    "load_candidates",
    "load_suite",
    "materialize",
    "materialize_all",
    "plan_harness",
]
