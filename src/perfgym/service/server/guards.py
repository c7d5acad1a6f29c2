"""Request guards: a body-size cap (an ASGI middleware) and the bearer-token check."""

from __future__ import annotations

import hmac
import json
from typing import Any

from fastapi import HTTPException, Request

Scope = dict[str, Any]


class BodyLimit:
    """Refuse bodies over `max_bytes` with 413, before they are parsed or buffered whole."""

    def __init__(self, app: Any, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
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
        body = json.dumps(
            {"error": f"request body larger than the limit of {self.max_bytes} bytes"}
        ).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode())]})  # fmt: skip
        await send({"type": "http.response.body", "body": body})


def bearer_guard(token: str | None) -> Any:
    """A FastAPI dependency: with a token configured, every request must carry it."""

    wanted = (token or "").encode("utf-8", "surrogateescape")

    async def check(request: Request) -> None:
        if token is None:
            return
        # Compared as the raw header bytes: Starlette decodes headers as latin-1, and
        # compare_digest refuses non-ASCII str (a TypeError that would surface as an HTTP 500).
        raw = b""
        for name, value in request.scope.get("headers", []):
            if name == b"authorization":
                raw = value
                break
        scheme, _, given = raw.partition(b" ")
        if scheme.lower() != b"bearer" or not hmac.compare_digest(given.strip(), wanted):
            raise HTTPException(
                status_code=401,
                detail="missing or wrong bearer token",
                headers={"WWW-Authenticate": "Bearer"},
            )

    return check
