"""What the loops need from a model: one chat call and its recorded answer (`ChatModel`, `Completion`).

The optimisation loop, `perfgym generate` and the repository agent depend on this protocol only;
`perfgym.llm.client.ModelClient` implements it over the `openai` package, and tests drive it
against `perfgym.llm.scripted`'s loopback server.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

Message = dict[str, Any]
"""An OpenAI chat message: {"role": "system"|"user"|"assistant"|"tool", "content": ..., ...}."""


class Usage(BaseModel):
    """Tokens one call consumed, as the server reported them (0 when it reported nothing)."""

    model_config = ConfigDict(frozen=True)

    prompt_tokens: int = 0
    completion_tokens: int = 0


class Completion(BaseModel):
    """One answer of one call (one sample index), as the loop sees it.

    `replayed` is True when the answer came from the call log (a rerun after a crash) and no
    request was made; `retries` counts the retried attempts of the request that produced it.
    `truncated` is finish_reason == "length": the answer hit max_tokens.
    """

    model_config = ConfigDict(frozen=True)

    text: str
    finish_reason: str | None = None
    truncated: bool = False
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    usage: Usage = Usage()
    cost_usd: float = 0.0
    retries: int = 0
    replayed: bool = False
    call_key: str = ""
    """The content address of the call: hash of model, messages, sampling parameters, seed and
    sample index. Equal keys are the same call; the call log stores one answer per key."""
    model: str = ""


@runtime_checkable
class ChatModel(Protocol):
    """A chat model the loops can call. Failures that are not the program's are `ModelError`s."""

    name: str

    async def complete(
        self,
        messages: list[Message],
        *,
        sample_index: int = 0,
        json_schema: dict[str, Any] | None = None,
        tools: list[dict[str, Any]] | None = None,
        purpose: str = "",
    ) -> Completion:
        """One answer to `messages`. `sample_index` tells apart the k samples of one prompt
        (part of the call key); `json_schema` asks for structured output where the server
        supports it (plain text otherwise); `purpose` is a free label kept in the call log
        ("generate", "optimize", "repair", "agent", ...)."""
        ...
