"""The model client's errors: each says in one line what went wrong and what to check.

PerfgymError
└── ModelError               a model call failed for a reason that is not the program's
    ├── EndpointUnreachable  nothing answers at the base URL (refused, DNS, retries spent)
    ├── AuthError            the server refused the API key (HTTP 401/403)
    ├── UnknownModel         the server does not serve this model (HTTP 404)
    ├── RequestRejected      another 4xx: the request itself is wrong (not retried)
    ├── RetriesExhausted     429/5xx/timeouts past the retry budget
    └── EmptyAnswer          the server answered with no text and no tool call
"""

from __future__ import annotations

from perfgym.errors import PerfgymError


class ModelError(PerfgymError):
    """A model call failed; the message is one line."""


class EndpointUnreachable(ModelError):
    pass


class AuthError(ModelError):
    pass


class UnknownModel(ModelError):
    pass


class RequestRejected(ModelError):
    pass


class RetriesExhausted(ModelError):
    pass


class EmptyAnswer(ModelError):
    pass
