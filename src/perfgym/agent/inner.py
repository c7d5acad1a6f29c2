"""mini-swe-agent's DefaultAgent, continued after a submit (PerfAgent's controller hook)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from minisweagent.agents.default import DefaultAgent
from minisweagent.exceptions import LimitsExceeded, Submitted

from perfgym.agent.model_adapter import PerfgymModel

OnSubmit = Callable[[], "str | None"]
"""Validates the working copy's diff; returns feedback to continue with, or None to stop."""


class ContinuingAgent(DefaultAgent):
    """On `Submitted` the controller validates the diff; to continue, the dangling assistant
    message (its tool call has no answer) is popped and the feedback added as a user message,
    as PerfAgent's agent does. A token budget is checked before each model call."""

    def __init__(self, model: PerfgymModel, env: Any, *, on_submit: OnSubmit,
                 token_limit: int = 0, **kwargs: Any) -> None:  # fmt: skip
        super().__init__(model, env, **kwargs)
        self.on_submit = on_submit
        self.token_limit = token_limit
        self.perfgym_model = model

    def query(self) -> dict[str, Any]:
        if 0 < self.token_limit <= self.perfgym_model.spend.tokens:
            raise LimitsExceeded({"role": "exit", "content": "TokenLimitExceeded",
                                  "extra": {"exit_status": "TokenLimitExceeded", "submission": ""}})  # fmt: skip
        return super().query()

    def execute_actions(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        try:
            return super().execute_actions(message)
        except Submitted:
            feedback = self.on_submit()
            if feedback is None:
                raise
            if self.messages and self.messages[-1].get("role") == "assistant":
                self.messages.pop()
            return self.add_messages({"role": "user", "content": feedback})
