"""Clients of `perfgym serve`: `ServiceClient` (sync) and `AsyncServiceClient`, one shared core."""

from perfgym.service.client.aio import AsyncServiceClient
from perfgym.service.client.sync import ServiceClient
from perfgym.service.client.wire import ServiceError, ServiceUnavailable, judge_request

__all__ = [
    "AsyncServiceClient",
    "ServiceClient",
    "ServiceError",
    "ServiceUnavailable",
    "judge_request",
]
