"""A large answer's digest, taken in the worker: SHA-256 whichever implementation makes it."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import perfgym.sandbox._inside as inside

sys.path.insert(0, str(Path(inside.__file__).parent))  # its siblings import it by name
import pyworker_batch  # noqa: E402


def test_a_large_answers_digest_is_its_sha256() -> None:
    """The worker hashes with OpenSSL's SHA-256 where Python has it: the digest the host and
    the reference cache hold (hashlib's), only faster."""
    raw = os.urandom(3 << 20) + b'{"value": [1.5, 2]}'
    assert pyworker_batch._digest(raw) == hashlib.sha256(raw).hexdigest()
    assert pyworker_batch._digest(b"") == hashlib.sha256(b"").hexdigest()
