"""`Faults`: which requests and answers the scripted server spoils, seeded and deterministic.

Transport faults (HTTP 429 with Retry-After, HTTP 500, an answer delayed past the client's
timeout, a dropped connection) are drawn per (request content, attempt): the same request body
on its n-th attempt always meets the same fate, whatever the order requests arrive in. From the
`max_faults_per_key`-th attempt on, a request is always served, so a client that retries reaches
an answer. Answer faults (malformed JSON, no code block, wrong language, truncation with
finish_reason "length", an empty answer) are drawn once per (request content, choice): a rerun
gets the same spoiled answer.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

TransportFault = Literal["429", "500", "timeout", "drop"]
AnswerFault = Literal["malformed_json", "no_code", "wrong_language", "truncated", "empty"]

TRANSPORT_FAULTS: tuple[TransportFault, ...] = ("429", "500", "timeout", "drop")
ANSWER_FAULTS: tuple[AnswerFault, ...] = (
    "malformed_json",
    "no_code",
    "wrong_language",
    "truncated",
    "empty",
)

_FENCE = re.compile(r"```([\w+#.-]*)\n(.*?)```", re.S)
_K = TypeVar("_K", bound=str)


class Faults(BaseModel):
    """Fractions of requests (transport) and of answers (answer faults) to spoil."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    seed: int = 0
    rate_429: float = Field(default=0.0, ge=0, le=1)
    rate_500: float = Field(default=0.0, ge=0, le=1)
    rate_timeout: float = Field(default=0.0, ge=0, le=1)
    rate_drop: float = Field(default=0.0, ge=0, le=1)
    malformed_json: float = Field(default=0.0, ge=0, le=1)
    no_code: float = Field(default=0.0, ge=0, le=1)
    wrong_language: float = Field(default=0.0, ge=0, le=1)
    truncated: float = Field(default=0.0, ge=0, le=1)
    empty: float = Field(default=0.0, ge=0, le=1)
    retry_after_s: float = Field(default=0.05, ge=0)
    timeout_delay_s: float = Field(default=5.0, ge=0, description="How long a 'timeout' stalls.")
    max_faults_per_key: int = Field(default=3, ge=0)

    @model_validator(mode="after")
    def _fractions(self) -> Faults:
        if sum(self.transport_rates().values()) > 1 or sum(self.answer_rates().values()) > 1:
            raise ValueError("transport rates and answer-fault rates must each sum to at most 1")
        return self

    def transport_rates(self) -> dict[TransportFault, float]:
        return {
            "429": self.rate_429,
            "500": self.rate_500,
            "timeout": self.rate_timeout,
            "drop": self.rate_drop,
        }

    def answer_rates(self) -> dict[AnswerFault, float]:
        return {
            "malformed_json": self.malformed_json,
            "no_code": self.no_code,
            "wrong_language": self.wrong_language,
            "truncated": self.truncated,
            "empty": self.empty,
        }

    def transport(self, content_key: str, attempt: int) -> TransportFault | None:
        """The fault the `attempt`-th request (0-based) with this content meets, if any."""
        if attempt >= self.max_faults_per_key:
            return None
        return _draw(self.transport_rates(), self._uniform("transport", content_key, attempt))

    def answer(self, content_key: str, choice: int) -> AnswerFault | None:
        """The fault that spoils choice `choice` of the answer to this content, if any."""
        return _draw(self.answer_rates(), self._uniform("answer", content_key, choice))

    def _uniform(self, what: str, key: str, index: int) -> float:
        digest = hashlib.sha256(f"{self.seed}|{what}|{key}|{index}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64


def _draw(rates: dict[_K, float], u: float) -> _K | None:
    edge = 0.0
    for name, rate in rates.items():
        edge += rate
        if u < edge:
            return name
    return None


def spoil(content: str, fault: AnswerFault, *, json_answer: bool) -> tuple[str, str]:
    """(content, finish_reason) of `content` spoiled by `fault`."""
    if fault == "empty":
        return "", "stop"
    if fault == "truncated":
        return content[: max(1, len(content) // 2)], "length"
    if fault == "malformed_json":
        # RLPF's JSON answer cut before its end: what a server without structured output
        # returns when the model was asked for JSON and ran off.
        if not json_answer:
            content = json.dumps({"summary": "faster", "solution_source": _code(content)})
        return content[: max(1, len(content) - 2)], "stop"
    if fault == "no_code":
        return "I would use a hash map and avoid repeated sorting; that should be faster.", "stop"
    # wrong_language: the same program, fenced and tagged as another language.
    m = _FENCE.search(content)
    tag = m.group(1).lower() if m else ""
    other = "javascript" if tag in ("python", "py", "python3") else "python"
    return f"```{other}\n{_code(content)}```\n", "stop"


def _code(content: str) -> str:
    """The body of the first fenced block of `content`, else the whole of it."""
    m = _FENCE.search(content)
    return m.group(2) if m else content
