"""The content address of a model call: everything that changes its answer, hashed.

The endpoint (the server's identity: its base URL, or the script of perfgym's own scripted
server, whose port changes every run), model name, messages, sampling parameters (temperature,
top_p, max_tokens, seed, extra request fields), the sample index, the JSON schema and the tools.
Not the timeout, the retries, streaming or the label of the call's purpose: they change how an
answer is fetched, not which answer it is. Two calls with equal keys are the same call; the call
log stores one answer per key, so a cheaper call cannot replay a dearer one's answer, and another
server with the same model name is asked, not replayed.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def call_key(
    endpoint: str,
    model: str,
    messages: list[dict[str, Any]],
    sampling: dict[str, Any],
    sample_index: int,
    json_schema: dict[str, Any] | None,
    tools: list[dict[str, Any]] | None,
) -> str:
    """sha256 of the canonical JSON of the call's answer-changing content."""
    content = {
        "endpoint": endpoint,
        "model": model,
        "messages": messages,
        "sampling": sampling,
        "sample_index": sample_index,
        "json_schema": json_schema,
        "tools": tools,
    }
    text = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()
