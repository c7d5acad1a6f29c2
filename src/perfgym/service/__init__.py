"""The judge over HTTP (`perfgym serve`, its client and a service-backed sandbox) and on Ray.

Rooms: `server/` (the app and its queue), `workers/` (the judging processes), `client/`,
`ray_backend` (no HTTP); `backend` picks one of them. Nothing loads until it is asked for, so
`import perfgym.service.client` pays for the client alone.
"""

from typing import Any

__all__ = ["BACKENDS", "JudgeBackend", "make_backend", "open_judge"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from perfgym.service import backend

        return getattr(backend, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
