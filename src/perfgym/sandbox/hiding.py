"""`HidingSandbox`: a view of a sandbox whose runs hide more host paths, changing nothing shared."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from perfgym.sandbox.base import Sandbox
from perfgym.sandbox.execution import Execution
from perfgym.sandbox.run_request import RunRequest


class HidingSandbox(Sandbox):
    """Runs on `inner`, each with `paths` added to its request's `hide` (a judge hides the suite
    of the task it judges this way: every run of the task carries it, other users of `inner`
    see nothing of it). Closing the view leaves `inner` open."""

    def __init__(self, inner: Sandbox, paths: Sequence[str]) -> None:
        self.inner = inner
        self.paths = list(dict.fromkeys(str(p) for p in paths))
        self.name = inner.name

    @property
    def config(self) -> Any:
        """The inner sandbox's configuration (None for one without), for callers that check
        what every run hides (a build cache) or start workers alike."""
        return getattr(self.inner, "config", None)

    def _run(self, request: RunRequest) -> Execution:
        hide = list(dict.fromkeys([*self.paths, *request.hide]))
        return self.inner.run(request.command, **{**request.keywords(), "hide": hide})

    def hiding(self, paths: Sequence[str]) -> Sandbox:
        return HidingSandbox(self.inner, [*self.paths, *paths])
