"""mini-swe-agent's model protocol over perfgym's `ChatModel` (sync `query` → async `complete`)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

from minisweagent.exceptions import FormatError
from minisweagent.models.utils.actions_text import format_observation_messages, parse_regex_actions
from minisweagent.models.utils.actions_toolcall import (
    BASH_TOOL,
    format_toolcall_observation_messages,
)

from perfgym.llm.protocol import ChatModel, Completion

T = TypeVar("T")

ACTION_REGEX = r"```mswea_bash_command\s*\n(.*?)\n```"
FALLBACK_REGEX = r"```bash\s*\n(.*?)\n```"
OBSERVATION_TEMPLATE = (
    "<returncode>{{output.returncode}}</returncode>\n"
    "{% if output.exception_info %}<exception>{{output.exception_info}}</exception>\n{% endif %}"
    "<output>\n{{ output.output[:10000] }}{% if output.output | length > 10000 %}\n"
    "[output cut at 10000 characters]{% endif %}\n</output>"
)
FORMAT_ERROR_TEMPLATE = (
    "Format error: {{error}}\nReply with exactly one bash command in a "
    "```mswea_bash_command block (or one bash tool call)."
)


class _LoopThread:
    """One event loop on a daemon thread: sync callers run the client's coroutines there, so an
    async client keeps one loop for its whole life whether or not the caller has a loop."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()


_shared_loop: _LoopThread | None = None
_loop_lock = threading.Lock()


def _loop() -> _LoopThread:
    global _shared_loop
    with _loop_lock:
        if _shared_loop is None:
            _shared_loop = _LoopThread()
        return _shared_loop


@dataclass
class ModelConfigView:
    """What mini-swe-agent reads of `model.config`."""

    model_name: str
    tools: bool
    observation_template: str = OBSERVATION_TEMPLATE
    format_error_template: str = FORMAT_ERROR_TEMPLATE


@dataclass
class Spend:
    """Calls, tokens and dollars so far (the agent's budgets read these)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    call_keys: list[str] = field(default_factory=list)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def _api_message(msg: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in msg.items() if k in ("role", "content", "tool_calls", "tool_call_id")}
    if out.get("role") == "exit":
        out["role"] = "user"
    if out.get("content") is None and out.get("role") != "assistant":
        out["content"] = ""
    return out


class PerfgymModel:
    """A mini-swe-agent `Model`: actions are one ```mswea_bash_command block (or ```bash, the
    fallback PerfAgent accepts) in text mode, or bash tool calls in tool mode."""

    def __init__(self, chat: ChatModel, *, tools: bool = False, purpose: str = "agent") -> None:
        self.chat = chat
        self.config = ModelConfigView(model_name=chat.name, tools=tools)
        self.purpose = purpose
        self.spend = Spend()

    def query(self, messages: list[dict[str, Any]], **kwargs: Any) -> dict[str, Any]:
        api = [_api_message(m) for m in messages]
        completion: Completion = _loop().run(
            self.chat.complete(api, tools=[BASH_TOOL] if self.config.tools else None,
                               purpose=self.purpose)
        )  # fmt: skip
        self._count(completion)
        cost = {"cost": completion.cost_usd}
        message: dict[str, Any] = {"role": "assistant", "content": completion.text}
        if completion.tool_calls:
            message["tool_calls"] = completion.tool_calls
        try:
            actions = self._actions(completion)
        except FormatError as e:
            e.messages[0].setdefault("extra", {}).update(cost)
            raise
        message["extra"] = {
            "actions": actions,
            **cost,
            "usage": completion.usage.model_dump(),
            "call_key": completion.call_key,
            "timestamp": time.time(),
        }
        return message

    def _count(self, c: Completion) -> None:
        self.spend.calls += 1
        self.spend.prompt_tokens += c.usage.prompt_tokens
        self.spend.completion_tokens += c.usage.completion_tokens
        self.spend.cost_usd += c.cost_usd
        self.spend.call_keys.append(c.call_key)

    def _actions(self, c: Completion) -> list[dict[str, Any]]:
        if c.tool_calls:
            return [_tool_action(tc, self.config.format_error_template) for tc in c.tool_calls]
        text = c.text or ""
        regex = ACTION_REGEX if "```mswea_bash_command" in text else FALLBACK_REGEX
        return parse_regex_actions(
            text, action_regex=regex, format_error_template=self.config.format_error_template,
            template_kwargs={"finish_reason": c.finish_reason},
        )  # fmt: skip

    def format_message(self, **kwargs: Any) -> dict[str, Any]:
        return dict(kwargs)

    def format_observation_messages(
        self, message: dict[str, Any], outputs: list[dict[str, Any]], template_vars: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:  # fmt: skip
        actions = message.get("extra", {}).get("actions", [])
        if any("tool_call_id" in a for a in actions):
            return format_toolcall_observation_messages(
                actions=actions, outputs=outputs, observation_template=OBSERVATION_TEMPLATE,
                template_vars=template_vars,
            )  # fmt: skip
        return format_observation_messages(
            outputs, observation_template=OBSERVATION_TEMPLATE, template_vars=template_vars
        )

    def get_template_vars(self, **kwargs: Any) -> dict[str, Any]:
        return {"model_name": self.config.model_name, **kwargs}

    def serialize(self) -> dict[str, Any]:
        return {
            "info": {
                "model_stats": {"tokens": self.spend.tokens, "perfgym_cost_usd": self.spend.cost_usd},
                "config": {"model": {"model_name": self.config.model_name, "tools": self.config.tools},
                           "model_type": f"{type(self).__module__}.{type(self).__name__}"},
            }
        }  # fmt: skip


def _tool_action(tool_call: dict[str, Any], template: str) -> dict[str, Any]:
    fn = tool_call.get("function") or {}
    error = ""
    try:
        args = json.loads(fn.get("arguments") or "{}")
    except ValueError as exc:
        args, error = {}, f"tool call arguments are not JSON: {exc}"
    if fn.get("name") != "bash":
        error = error or f"unknown tool {fn.get('name')!r}"
    if not isinstance(args, dict) or not isinstance(args.get("command"), str):
        error = error or "the bash tool call has no 'command'"
    if error:
        from jinja2 import StrictUndefined, Template

        content = Template(template, undefined=StrictUndefined).render(error=error)
        raise FormatError(
            {"role": "user", "content": content, "extra": {"interrupt_type": "FormatError"}}
        )
    return {"command": args["command"], "tool_call_id": str(tool_call.get("id", ""))}


def close_model(chat: ChatModel) -> None:
    """Close a client's connections on the loop its calls ran on (clients without `aclose`
    need nothing)."""
    aclose = getattr(chat, "aclose", None)
    if aclose is not None:
        _loop().run(aclose())
