"""uvicorn's HTTP/1.1 protocol with a deadline for a request's head: a connection that has not
sent a whole request line and headers within `HEAD_TIMEOUT_S` (of its opening, or of its last
response) is closed.

uvicorn times a connection out only between requests, after a response: one that sends
`GET /v1/hea` and nothing more is held for ever. Red team helper-79 held 20,100 of them, with
no token, until the server's file descriptors ran out and every client timed out."""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

#: Seconds a connection may take to send a request's head.
HEAD_TIMEOUT_S = 10.0


class HeadTimeoutH11(H11Protocol):
    """`H11Protocol`, closing a connection whose request head does not arrive in time."""

    head_timeout_s = HEAD_TIMEOUT_S

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._head_timer: asyncio.TimerHandle | None = None
        super().connection_made(transport)
        self._arm_head()

    def _arm_head(self) -> None:
        if self._head_timer is None:
            self._head_timer = self.loop.call_later(self.head_timeout_s, self._head_expired)

    def _disarm_head(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_expired(self) -> None:
        self._head_timer = None
        serving = self.cycle is not None and not self.cycle.response_complete
        if not serving and not self.transport.is_closing():
            self.transport.close()

    def handle_events(self) -> None:
        super().handle_events()
        if self.cycle is not None and not self.cycle.response_complete:
            self._disarm_head()  # a request's head arrived: the app has it

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm_head()  # the next request's head is held to the same deadline

    def connection_lost(self, exc: Any) -> None:
        self._disarm_head()
        super().connection_lost(exc)
