"""perfgym.tasks: the Task model, suites, and the loaders behind `load_suite(spec)`."""

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
