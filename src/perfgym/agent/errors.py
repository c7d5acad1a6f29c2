"""The agent's errors: bad tasks or tools it cannot run, each a one-line `PerfgymError`."""

from __future__ import annotations

from perfgym.errors import PerfgymError


class AgentError(PerfgymError):
    """The agent could not do a step that is perfgym's to do (not the model's or the patch's)."""


class ProfileError(AgentError):
    """py-spy could not profile the workload (no output file, or the workload failed)."""


class ValidationSetupError(AgentError):
    """The original repository's test suite could not be run to build the selection database."""
