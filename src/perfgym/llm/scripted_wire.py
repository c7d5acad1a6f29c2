"""The OpenAI wire format the scripted server speaks: completions, SSE chunks, errors, models."""

from __future__ import annotations

import json
import re
import time
from typing import Any

_FENCE = re.compile(r"```[\w+#.-]*\n(.*?)```", re.S)


def tokens(text: str) -> int:
    """A deterministic token estimate (about four characters a token)."""
    return (len(text) + 3) // 4


def as_json_answer(content: str, schema: dict[str, Any]) -> str:
    """`content` as a structured-output server would give it under RLPF's schema: a JSON object
    with `summary` and `solution_source` (the first fenced block's body, else the text).
    Empty content, content that already is a JSON object, or a schema without
    `solution_source` is kept as it is."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not content or not isinstance(props, dict) or "solution_source" not in props:
        return content
    try:
        if isinstance(json.loads(content), dict):
            return content
    except ValueError:
        pass
    m = _FENCE.search(content)
    source = m.group(1) if m else content
    return json.dumps({"summary": "scripted answer", "solution_source": source})


def choice_message(choice: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": choice["content"]}
    if choice["tool_calls"]:
        message["tool_calls"] = choice["tool_calls"]
    return message


def completion(
    cid: str, model: str, choices: list[dict[str, Any]], prompt_tokens: int
) -> dict[str, Any]:
    """A `chat.completion` object with usage."""
    completion_tokens = sum(tokens(c["content"] or "") for c in choices)
    return {
        "id": cid,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": i,
                "message": choice_message(c),
                "finish_reason": c["finish_reason"],
                "logprobs": None,
            }
            for i, c in enumerate(choices)
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def chunks(
    cid: str,
    model: str,
    choices: list[dict[str, Any]],
    prompt_tokens: int,
    include_usage: bool,
    piece: int = 64,
) -> list[dict[str, Any]]:
    """The `chat.completion.chunk`s of a streamed answer: a role chunk, content pieces, a
    finish chunk per choice, then (if asked) a usage chunk with no choices."""
    created = int(time.time())

    def chunk(index: int, delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
        return {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": index, "delta": delta, "finish_reason": finish}],
        }

    out = []
    for i, c in enumerate(choices):
        out.append(chunk(i, {"role": "assistant", "content": ""}, None))
        text = c["content"] or ""
        for start in range(0, len(text), piece):
            out.append(chunk(i, {"content": text[start : start + piece]}, None))
        if c["tool_calls"]:
            calls = [dict(call, index=k) for k, call in enumerate(c["tool_calls"])]
            out.append(chunk(i, {"tool_calls": calls}, None))
        out.append(chunk(i, {}, c["finish_reason"]))
    if include_usage:
        completion_tokens = sum(tokens(c["content"] or "") for c in choices)
        out.append(
            {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            }
        )
    return out


def error(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    """An OpenAI error body."""
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def models(names: list[str]) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [{"id": n, "object": "model", "created": 0, "owned_by": "perfgym"} for n in names],
    }
