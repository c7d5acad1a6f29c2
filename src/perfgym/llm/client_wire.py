"""Reading the openai client's answers: a response or a stream into plain fields; redaction."""

from __future__ import annotations

from typing import Any

#: The placeholder a leaked API key is replaced with in every recorded text.
REDACTED = "[redacted]"


def redact(text: str, secret: str) -> str:
    """`text` with every occurrence of `secret` replaced (keys shorter than 6 are not secrets
    worth the damage of replacing them everywhere: 'EMPTY', 'x')."""
    if len(secret) < 6 or secret not in text:
        return text
    return text.replace(secret, REDACTED)


def from_response(resp: Any) -> dict[str, Any]:
    """text, finish_reason, tool_calls and token counts of a `ChatCompletion`."""
    choice = resp.choices[0] if resp.choices else None
    message = choice.message if choice is not None else None
    calls = [c.model_dump(mode="json") for c in (message.tool_calls or [])] if message else []
    usage = resp.usage
    return {
        "text": (message.content or "") if message is not None else "",
        "finish_reason": choice.finish_reason if choice is not None else None,
        "tool_calls": calls,
        "prompt_tokens": int(getattr(usage, "prompt_tokens", 0) or 0),
        "completion_tokens": int(getattr(usage, "completion_tokens", 0) or 0),
    }


async def assemble_stream(stream: Any) -> dict[str, Any]:
    """The same fields from a stream of `ChatCompletionChunk`s (choice 0; usage from the last)."""
    parts: list[str] = []
    finish: str | None = None
    calls: dict[int, dict[str, Any]] = {}
    prompt_tokens = completion_tokens = 0
    async for chunk in stream:
        if chunk.usage is not None:
            prompt_tokens = int(chunk.usage.prompt_tokens or 0)
            completion_tokens = int(chunk.usage.completion_tokens or 0)
        for choice in chunk.choices or []:
            if choice.index != 0:
                continue
            delta = choice.delta
            if delta.content:
                parts.append(delta.content)
            for call in delta.tool_calls or []:
                slot = calls.setdefault(call.index, {"id": None, "type": "function",
                                                     "function": {"name": "", "arguments": ""}})  # fmt: skip
                slot["id"] = call.id or slot["id"]
                if call.function is not None:
                    slot["function"]["name"] += call.function.name or ""
                    slot["function"]["arguments"] += call.function.arguments or ""
            if choice.finish_reason:
                finish = choice.finish_reason
    return {
        "text": "".join(parts),
        "finish_reason": finish,
        "tool_calls": [calls[i] for i in sorted(calls)],
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
    }


def server_message(exc: Exception) -> str:
    """The error message a server put in its body (one line), else the exception's text."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        msg = inner.get("message") if isinstance(inner, dict) else inner
        if msg:
            return " ".join(str(msg).split())[:300]
    text = " ".join(str(exc).split())
    return text[:300] or type(exc).__name__
