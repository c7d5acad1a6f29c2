"""Request guards: a body-size cap (an ASGI middleware) and the bearer-token check."""

from __future__ import annotations

import hmac
import json
from typing import Any

from fastapi import HTTPException, Request

Scope = dict[str, Any]


class BodyLimit:
    """Refuse a request without the bearer token (`token`, when one is set) with 401, and then
    bodies over `max_bytes` with 413, before they are parsed or buffered whole. The token comes
    first: a client without it had the server buffer 32 MiB per stalled upload before it was
    refused (red team helper-79: 30 uploads, 1.1 GiB); and it covers every path, the API's
    schema pages too."""

    def __init__(self, app: Any, max_bytes: int, token: str | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.token = token

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.token is not None and not token_matches(scope, self.token):
            await _respond(send, 401, {"error": "missing or wrong bearer token"},
                           [(b"www-authenticate", b"Bearer")])  # fmt: skip
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0
                if declared > self.max_bytes:
                    await self._refuse(send)
                    return
        # Read the whole body first (it is capped, so this is bounded), then replay it: an error
        # raised while the app itself reads would be reported as a parse error, not as 413.
        chunks: list[bytes] = []
        seen = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, receive, send)  # a disconnect: let the app see it
                return
            chunk = message.get("body", b"")
            seen += len(chunk)
            if seen > self.max_bytes:
                await self._refuse(send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, send: Any) -> None:
        await _respond(send, 413,
                       {"error": f"request body larger than the limit of {self.max_bytes} bytes"})  # fmt: skip


async def _respond(send: Any, status: int, doc: dict[str, Any],
                   headers: list[tuple[bytes, bytes]] | None = None) -> None:  # fmt: skip
    body = json.dumps(doc).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()), *(headers or [])]})  # fmt: skip
    await send({"type": "http.response.body", "body": body})


def token_matches(scope: Scope, token: str) -> bool:
    """Whether the request carries `Authorization: Bearer <token>`. Compared as the raw header
    bytes: Starlette decodes headers as latin-1, and compare_digest refuses non-ASCII str (a
    TypeError that would surface as an HTTP 500)."""
    wanted = token.encode("utf-8", "surrogateescape")
    raw = b""
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            raw = value
            break
    scheme, _, given = raw.partition(b" ")
    return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), wanted)


def bearer_guard(token: str | None) -> Any:
    """A FastAPI dependency: with a token configured, every request must carry it (the
    `BodyLimit` middleware refuses one without it first; kept for an app built without it)."""

    async def check(request: Request) -> None:
        if token is None:
            return
        if not token_matches(request.scope, token):
            raise HTTPException(
                status_code=401,
                detail="missing or wrong bearer token",
                headers={"WWW-Authenticate": "Bearer"},
            )

    return check
