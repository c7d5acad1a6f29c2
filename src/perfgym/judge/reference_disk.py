"""`ReferenceDisk`: a task's own solutions' runs on its tests (outputs, CPU times), kept on disk
between judges, as evalplus keeps its ground truth, so a second evaluation of a suite does not
run its reference over every test again.

An entry holds every run of one solution (reference or baseline) on every test of one task, and
is written only when every run ended cleanly (a run cut by a loaded machine is never kept). Its
key is a SHA-256 of everything the runs depend on: the cache format, perfgym's version, the
Python version, the machine's fingerprint (the CPU times set the tests' limits), the task's
content key, the solution's label and source, the limits it ran under and the tests' ids and
arguments. Hidden cases (`perfgym.judge.hidden`) are never kept.

Layout, under the root (`JudgeConfig.reference_cache`, by default beside the build cache and
outside every run's view; created 0700):

    <root>/.hmac-key                 32 random bytes (0600): the entries' authentication key
    <root>/<key[:2]>/<key>.json      an entry: its HMAC-SHA256 (hex), a newline, its JSON (a
                                     column per field: ids, ok, outputs, wall_s, cpu_s, why)

An entry whose HMAC, key or layout does not check, or a root or file another user owns or may
write, is ignored (and the runs are made again); a failed write loses nothing but time. The
judge also re-runs the reference before a wrong answer judged against a kept output stands
(`ExpectedOutputs.confirm`). `PERFGYM_REFERENCE_CACHE`: a root directory, or `off`.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import logging
import os
import secrets
import stat
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perfgym import __version__
from perfgym.machine import fingerprint
from perfgym.sandbox._inside import valuecodec
from perfgym.sandbox.batch_messages import ValueDigest
from perfgym.tasks.task import TestCase

log = logging.getLogger(__name__)

#: A root directory, or one of OFF_WORDS to keep nothing on disk.
ENV = "PERFGYM_REFERENCE_CACHE"
OFF_WORDS = frozenset({"off", "0", "no", "false", "none", ""})
#: Bumped when an entry's layout or its key's ingredients change.
FORMAT = 1
_KEY_FILE = ".hmac-key"


def root_from(configured: str | None) -> str | None:
    """The root to use: `PERFGYM_REFERENCE_CACHE` where set (a path, or off), else the
    judge's configured one (None: off)."""
    env = os.environ.get(ENV)
    if env is not None:
        return None if env.strip().lower() in OFF_WORDS else env
    return configured


class ReferenceDisk:
    """Kept runs of a task's own solutions; `open` gives None where the root cannot be used."""

    def __init__(self, root: Path, secret: bytes, context: str = "") -> None:
        self.root = root
        self._secret = secret
        #: what the runs depended on besides the task (`reference_context.runtime_context`)
        self.context = context

    @classmethod
    def open(cls, root: str | None, context: str | None = "") -> ReferenceDisk | None:
        """The kept runs under `root`; None where nothing is kept (no root, an unusable one, or
        no `context`: the runs' dependencies could not be named)."""
        if root is None or context is None:
            return None
        path = Path(root)
        if not path.is_absolute():
            log.warning("reference cache %s: not an absolute path; nothing kept", root)
            return None
        try:
            path.mkdir(parents=True, exist_ok=True, mode=0o700)
            if not _private(path, directory=True):
                log.warning("reference cache %s: not private to this user; nothing kept", root)
                return None
            return cls(path, _secret_of(path / _KEY_FILE), context)
        except OSError as exc:
            log.warning("reference cache %s unusable (%s); nothing kept", root, exc)
            return None

    # -- keys -------------------------------------------------------------------------------
    def key(self, task_key: str, label: str, source: str, limits: dict[str, Any],
            cases: Sequence[TestCase]) -> str:  # fmt: skip
        h = hashlib.sha256()
        head = json.dumps({"format": FORMAT, "perfgym": __version__, "python": sys.version,
                           "machine": fingerprint(), "task": task_key, "label": label,
                           "limits": limits, "context": self.context},
                          sort_keys=True, default=str)  # fmt: skip
        for part in (head, source):
            data = part.encode("utf-8", "surrogatepass")
            h.update(len(data).to_bytes(8, "big"))
            h.update(data)
        # the tests' ids and arguments in one piece (at C speed: 1,000 tests a task)
        tests = json.dumps([[c.id, c.args] for c in cases], default=repr)
        data = tests.encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
        return h.hexdigest()

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    # -- reading ----------------------------------------------------------------------------
    def load(self, key: str, cases: Sequence[TestCase]) -> Kept | None:
        """The kept runs of `cases`, in order, or None where there is no usable entry
        (absent, unreadable, tampered, or not these cases)."""
        path = self.path(key)
        try:
            with open(path, "rb") as f:
                if not _private(Path(f.name), fd=f.fileno()):
                    return None
                data = f.read()
            mac, _, body = data.partition(b"\n")
            if not hmac.compare_digest(mac, self._mac(body)):
                log.warning("reference cache entry %s fails its check; ignored", path)
                return None
            doc = json.loads(body)
            if doc.get("format") != FORMAT or doc.get("key") != key:
                return None
            ids, ok, outs = doc["ids"], doc["ok"], doc["outputs"]
            walls, cpus, whys = doc["wall_s"], doc["cpu_s"], doc["why"]
            if ids != [c.id for c in cases] or not (
                len(ids) == len(ok) == len(outs) == len(walls) == len(cpus) == len(whys)
            ):
                return None
            return Kept(ok=[o is True for o in ok], outputs=[_decode(v) for v in outs],
                        wall_s=[_seconds(w) for w in walls], cpu_s=[_seconds(c) for c in cpus],
                        why=[str(y) for y in whys])  # fmt: skip
        except FileNotFoundError:
            return None
        except (OSError, ValueError, TypeError, KeyError, IndexError, RecursionError,
                valuecodec.UnsupportedValue) as exc:  # fmt: skip
            log.warning("reference cache entry %s unreadable (%s); ignored", path, exc)
            return None

    # -- writing ----------------------------------------------------------------------------
    def save(self, key: str, runs: Sequence[tuple[str, bool, Any, float | None, float | None,
                                                  str]]) -> bool:  # fmt: skip
        """Keep `runs` (case id, ok, output, wall_s, cpu_s, why) under `key`; False where they
        cannot be (a value that does not encode, a failed write): nothing is kept then."""
        try:
            # column by column: one list of each, parsed back at C speed
            body = json.dumps({"format": FORMAT, "key": key, "ids": [r[0] for r in runs],
                               "ok": [r[1] for r in runs], "outputs": [_encode(r[2]) for r in runs],
                               "wall_s": [r[3] for r in runs], "cpu_s": [r[4] for r in runs],
                               "why": [r[5] for r in runs]},
                              separators=(",", ":")).encode()  # fmt: skip
        except (valuecodec.UnsupportedValue, ValueError, TypeError, RecursionError):
            return False
        path = self.path(key)
        try:
            path.parent.mkdir(exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(self._mac(body) + b"\n" + body)
                os.replace(tmp, path)  # whole or absent: a reader never sees half an entry
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError as exc:
            log.warning("reference cache entry %s not written (%s)", path, exc)
            return False
        return True

    def forget(self, key: str) -> None:
        """Remove the entry of `key` (one found wrong)."""
        with contextlib.suppress(OSError):
            self.path(key).unlink()

    def _mac(self, body: bytes) -> bytes:
        return hmac.new(self._secret, body, hashlib.sha256).hexdigest().encode()


@dataclass(frozen=True)
class Kept:
    """An entry's runs, column by column, in its cases' order."""

    ok: list[bool]
    outputs: list[Any]
    wall_s: list[float | None]
    cpu_s: list[float | None]
    why: list[str]


#: What an encoded output is as it stands (`valuecodec` leaves these as they are).
_PLAIN = frozenset((int, float, str, bool, type(None)))


def _seconds(value: Any) -> float | None:
    if value is None:
        return None
    if type(value) is not float and type(value) is not int:
        raise TypeError(f"a time of {value!r}")
    return float(value)


def _encode(output: Any) -> Any:
    """An output as kept: its `valuecodec` encoding, or a digest's tag (no valuecodec tag)."""
    if isinstance(output, ValueDigest):
        return {"digest": [output.sha256, output.size]}
    return valuecodec.encode(output)


def _decode(stored: Any) -> Any:
    if type(stored) in _PLAIN:
        return stored
    if type(stored) is dict and "digest" in stored:
        sha, size = stored["digest"]
        return ValueDigest(str(sha), int(size))
    return valuecodec.decode(stored)


def _private(path: Path, *, directory: bool = False, fd: int | None = None) -> bool:
    """Owned by this user and writable by no one else (a shared root or entry is not used)."""
    st = os.fstat(fd) if fd is not None else os.stat(path)
    if directory and not stat.S_ISDIR(st.st_mode):
        return False
    return st.st_uid == os.geteuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _secret_of(path: Path) -> bytes:
    """The root's HMAC key, made on first use (0600); refused unless private to this user."""
    if not path.exists():
        # written whole, then linked in: a judge starting beside this one reads a whole key
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-key-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(secrets.token_bytes(32))
            with contextlib.suppress(FileExistsError):  # another judge's key came first
                os.link(tmp, path)
        finally:
            os.unlink(tmp)
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        if st.st_uid != os.geteuid() or st.st_mode & 0o077:
            raise OSError(f"{path} is readable or writable by others")
        secret = f.read()
    if len(secret) < 32:
        raise OSError(f"{path} is not a key")
    return secret
