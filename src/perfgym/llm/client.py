"""`ModelClient`: the `ChatModel` over `openai.AsyncOpenAI`, with perfgym's retries and call log.

The openai client's own retries are off: perfgym retries 429, 5xx, 408/409, timeouts and dropped
connections with exponential backoff and full jitter, honouring Retry-After, and counts each
retry in `Completion.retries`; any other 4xx fails at once with a typed `ModelError`. A server
that rejects `response_format` json_schema is asked again in plain text (once; later calls skip
it). With a `CallLog`, a call whose answer is stored is replayed (no request), and every answer
is stored as soon as it arrives.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from perfgym.llm.call_key import call_key
from perfgym.llm.client_wire import assemble_stream, from_response, redact, server_message
from perfgym.llm.config import ModelConfig
from perfgym.llm.errors import (
    AuthError,
    EmptyAnswer,
    EndpointUnreachable,
    ModelError,
    RequestRejected,
    RetriesExhausted,
    UnknownModel,
)
from perfgym.llm.protocol import Completion, Message, Usage
from perfgym.llm.scripted_state import SAMPLE_HEADER

if TYPE_CHECKING:
    import openai

    from perfgym.store.calls import CallLog


@dataclass
class CallTotals:
    """What a client's calls added up to (requests made, answers replayed, tokens, dollars)."""

    requests: int = 0
    replayed: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    replayed_cost_usd: float = 0.0
    truncated: int = 0
    by_purpose: dict[str, int] = field(default_factory=dict)

    def add(self, c: Completion, purpose: str) -> None:
        self.by_purpose[purpose] = self.by_purpose.get(purpose, 0) + 1
        self.truncated += int(c.truncated)
        if c.replayed:
            self.replayed += 1
            self.replayed_cost_usd += c.cost_usd
            return
        self.requests += 1
        self.retries += c.retries
        self.prompt_tokens += c.usage.prompt_tokens
        self.completion_tokens += c.usage.completion_tokens
        self.cost_usd += c.cost_usd


class ModelClient:
    """A `ChatModel` for one OpenAI-compatible endpoint and model."""

    def __init__(self, config: ModelConfig, *, call_log: CallLog | None = None,
                 name: str | None = None) -> None:  # fmt: skip
        self.config = config
        self.name = name or config.model
        self.call_log = call_log
        self.totals = CallTotals()
        self._client: openai.AsyncOpenAI | None = None
        self._sem: asyncio.Semaphore | None = None
        self._json_ok = config.json_output
        self._rng = random.Random(0)

    # -- the protocol ---------------------------------------------------------------------------
    async def complete(
        self,
        messages: list[Message],
        *,
        sample_index: int = 0,
        json_schema: dict[str, Any] | None = None,
        tools: list[dict[str, Any]] | None = None,
        purpose: str = "",
    ) -> Completion:
        cfg = self.config
        key = call_key(
            cfg.endpoint_id(), cfg.model, messages, cfg.sampling(), sample_index, json_schema, tools
        )
        if self.call_log is not None:
            stored = self.call_log.get(key)
            if stored is not None:
                done = Completion.model_validate({**stored, "replayed": True, "call_key": key})
                self.totals.add(done, purpose)
                return done
        if self._sem is None:
            self._sem = asyncio.Semaphore(cfg.concurrency)
        async with self._sem:
            answer, retries = await self._request(messages, sample_index, json_schema, tools)
        usage = Usage(prompt_tokens=answer["prompt_tokens"],
                      completion_tokens=answer["completion_tokens"])  # fmt: skip
        done = Completion(
            text=redact(answer["text"], self._key()),
            finish_reason=answer["finish_reason"],
            truncated=answer["finish_reason"] == "length",
            tool_calls=answer["tool_calls"],
            usage=usage,
            cost_usd=cfg.price().cost(usage.prompt_tokens, usage.completion_tokens),
            retries=retries,
            call_key=key,
            model=cfg.model,
        )
        empty = not done.text.strip() and not done.tool_calls and not done.truncated
        if empty and not cfg.allow_empty:
            raise EmptyAnswer(
                f"model {cfg.model!r} returned an empty answer (finish_reason "
                f"{done.finish_reason}): check its chat template, or set allow_empty "
                "(--allow-empty) to judge such answers NX"
            )
        if self.call_log is not None:
            record = done.model_dump(mode="json", exclude={"replayed", "call_key"})
            request = {"messages": messages, "sampling": cfg.sampling(),
                       "sample_index": sample_index, "json_schema": json_schema,
                       "tools": tools}  # fmt: skip
            self.call_log.put(key, model=cfg.model, purpose=purpose, request=request, answer=record)
        self.totals.add(done, purpose)
        return done

    # -- preflight and lifecycle ----------------------------------------------------------------
    async def check(self) -> None:
        """One GET /models: fail fast (typed, one line) on an unreachable endpoint or a refused
        key. A server without the route (404) passes: the first call will tell."""
        import openai

        client = self._openai()
        try:
            await client.with_options(timeout=min(self.config.timeout_s, 10.0)).models.list()
        except openai.APIStatusError as exc:
            if exc.status_code in (401, 403):
                raise self._auth_error(exc) from None
        except openai.APIConnectionError as exc:
            raise self._unreachable(exc, 0) from None

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    # -- requests -------------------------------------------------------------------------------
    def _key(self) -> str:
        return self.config.api_key()

    def _openai(self) -> openai.AsyncOpenAI:
        if self._client is None:
            import openai

            self._client = openai.AsyncOpenAI(
                api_key=self._key(), base_url=self.config.base_url,
                timeout=self.config.timeout_s, max_retries=0,
            )  # fmt: skip
        return self._client

    def _kwargs(self, messages: list[Message], sample_index: int,
                json_schema: dict[str, Any] | None, tools: list[dict[str, Any]] | None
                ) -> dict[str, Any]:  # fmt: skip
        cfg = self.config
        kw: dict[str, Any] = {"model": cfg.model, "messages": messages, "n": 1}
        for name in ("temperature", "top_p", "max_tokens"):
            if getattr(cfg, name) is not None:
                kw[name] = getattr(cfg, name)
        if cfg.seed is not None:
            kw["seed"] = cfg.seed + sample_index
        if tools:
            kw["tools"] = tools
        if json_schema is not None and self._json_ok:
            kw["response_format"] = {"type": "json_schema", "json_schema": {
                "name": "answer", "schema": json_schema, "strict": True}}  # fmt: skip
        if cfg.stream:
            kw["stream"] = True
            kw["stream_options"] = {"include_usage": True}
        if cfg.extra_body:
            kw["extra_body"] = dict(cfg.extra_body)
        if cfg.sample_header:
            kw["extra_headers"] = {SAMPLE_HEADER: str(sample_index)}
        return kw

    async def _request(self, messages: list[Message], sample_index: int,
                       json_schema: dict[str, Any] | None, tools: list[dict[str, Any]] | None
                       ) -> tuple[dict[str, Any], int]:  # fmt: skip
        """(answer fields, retries): one request, retried per the config."""
        import openai

        client = self._openai()
        retries = 0
        while True:
            kw = self._kwargs(messages, sample_index, json_schema, tools)
            wait: float | None = None
            try:
                if kw.get("stream"):
                    return await assemble_stream(
                        await client.chat.completions.create(**kw)
                    ), retries
                return from_response(await client.chat.completions.create(**kw)), retries
            except openai.APIStatusError as exc:
                status = exc.status_code
                if status in (401, 403):
                    raise self._auth_error(exc) from None
                if "response_format" in kw and status in (400, 422):
                    self._json_ok = False  # the server has no structured output: plain text
                    continue
                if status == 404:
                    raise UnknownModel(
                        f"the server at {self.config.base_url} does not serve model "
                        f"{self.config.model!r} (HTTP 404: {self._said(exc)}); check --model "
                        "and that the base URL ends in /v1"
                    ) from None
                if status not in (408, 409, 429) and status < 500:
                    raise RequestRejected(
                        f"the server at {self.config.base_url} rejected the request "
                        f"(HTTP {status}: {self._said(exc)})"
                    ) from None
                wait = _retry_after(exc.response, self.config.retry_after_max_s)
                last: Exception = exc
            except openai.APITimeoutError as exc:
                last = exc
            except openai.APIConnectionError as exc:
                last = exc
            if retries >= self.config.max_retries:
                raise self._exhausted(last, retries) from None
            retries += 1
            await asyncio.sleep(wait if wait is not None else self._backoff(retries))

    def _backoff(self, retry: int) -> float:
        """Full jitter: uniform in [0, min(max, base * 2^(retry-1))]."""
        cap = min(self.config.backoff_max_s, self.config.backoff_base_s * 2 ** (retry - 1))
        return self._rng.uniform(cap / 2, cap)

    def _said(self, exc: Exception) -> str:
        return redact(server_message(exc), self._key())

    def _auth_error(self, exc: Exception) -> AuthError:
        cfg = self.config
        source = (f"${cfg.api_key_env}" if cfg.key_is_set()
                  else f"${cfg.api_key_env}, which is unset")  # fmt: skip
        return AuthError(
            f"the server at {cfg.base_url} refused the API key from {source} "
            f"({self._said(exc)}); set it or pass --api-key-env NAME"
        )

    def _unreachable(self, exc: Exception, retries: int) -> EndpointUnreachable:
        cause = exc.__cause__ or exc.__context__ or exc
        after = f" after {retries} retries" if retries else ""
        why = redact(
            str(cause).splitlines()[0] if str(cause) else type(cause).__name__, self._key()
        )
        return EndpointUnreachable(
            f"cannot reach the model endpoint {self.config.base_url}{after} ({why}); "
            "is the server running? check --base-url"
        )

    def _exhausted(self, exc: Exception, retries: int) -> ModelError:
        import openai

        if isinstance(exc, openai.APIConnectionError) and not isinstance(
            exc, openai.APITimeoutError
        ):
            return self._unreachable(exc, retries)
        what = ("timed out" if isinstance(exc, openai.APITimeoutError)
                else f"HTTP {getattr(exc, 'status_code', '?')}: {self._said(exc)}")  # fmt: skip
        return RetriesExhausted(
            f"model {self.config.model!r} at {self.config.base_url}: the request {what} "
            f"{retries + 1} times (--max-retries {self.config.max_retries})"
        )


def _retry_after(response: Any, cap: float) -> float | None:
    """Seconds a Retry-After (or retry-after-ms) header asks for, capped; None without one."""
    headers = getattr(response, "headers", None) or {}
    try:
        if "retry-after-ms" in headers:
            return min(cap, max(0.0, float(headers["retry-after-ms"]) / 1000))
        if "retry-after" in headers:
            return min(cap, max(0.0, float(headers["retry-after"])))
    except ValueError:  # an HTTP date: rare from model servers; back off instead
        return None
    return None
