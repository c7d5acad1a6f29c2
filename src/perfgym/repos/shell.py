"""`run_shell`: one bash command on a repository copy, inside perfgym's sandbox.

The copy is bound writable at `REPO_DIR` (the command's working directory); everything else
the run sees is the sandbox's read-only allow-list view (no /root, /home, /work or checkout)
and a private tmpfs `/tmp` that is also $HOME. Network is off, CPU/wall/memory/process limits
are on, and the environment is built from nothing: no host variable (API keys, tokens) reaches
the command unless the caller passes it in `env`. The command's stdout and stderr are merged
in order. `apply_patch` and `take_patch` run git the same way, never on the host.
"""

from __future__ import annotations

import ast
import atexit
import contextlib
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from perfgym.errors import PerfgymError
from perfgym.repos.applied import (
    UnreadableChange,
    applied_diff,
    compiled_module,
    snapshot,
    tree_state,
)
from perfgym.repos.copy import RepoCopy, read_base_commit
from perfgym.repos.copy_guard import MAX_BYTES, MAX_FILES, CopyGuard
from perfgym.repos.diffs import parse_patch
from perfgym.run_status import Status
from perfgym.sandbox.base import Sandbox
from perfgym.sandbox.bind import Bind
from perfgym.sandbox.execution import Execution
from perfgym.sandbox.limits import Limits

#: Where a copy appears inside every run (also the working directory).
REPO_DIR = "/work/repo"
#: Processes a build or test run may hold at once (compilers and pytest fork).
MAX_PROCESSES = 256
_PATCH_NAME = "perfgym-patch.diff"

_lock = threading.Lock()
_shared: Sandbox | None = None


class PatchError(PerfgymError):
    """A patch does not apply to a copy; the message is git's."""


class CommandStatus(str, Enum):
    """How a repository command ended: the sandbox's `Status`, or COPY_LIMIT (it left more in
    the copy than `CopyGuard` allows; what it added was removed)."""

    OK = "OK"
    RUNTIME_ERROR = "RUNTIME_ERROR"
    TIMEOUT = "TIMEOUT"
    MEMORY_LIMIT = "MEMORY_LIMIT"
    OUTPUT_LIMIT = "OUTPUT_LIMIT"
    SANDBOX_ERROR = "SANDBOX_ERROR"
    COPY_LIMIT = "copy_limit"

    @classmethod
    def of(cls, status: Status) -> CommandStatus:
        return cls(status.value)


@dataclass(frozen=True)
class ShellResult:
    """What one sandboxed command did: merged output, exit status, limits hit, time used."""

    output: str
    returncode: int
    timed_out: bool
    wall_s: float
    cpu_s: float
    status: CommandStatus = CommandStatus.OK
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out


def shared_sandbox() -> Sandbox:
    """The process-wide warm sandbox that repository commands use unless given one."""
    global _shared
    with _lock:
        if _shared is None:
            from perfgym.sandbox.base import SandboxConfig
            from perfgym.sandbox.factory import make_sandbox

            # A repository's own processes may exclude each other with file locks (its tests,
            # its build): real locks here. Its workload runs are timed one at a time, each
            # until its answer, so no run holds an answer for the next.
            _shared = make_sandbox("warm", SandboxConfig(isolate_locks=False))
            atexit.register(_shared.close)
        return _shared


def shell_limits(timeout_s: float, memory_mb: int) -> Limits:
    cores = len(os.sched_getaffinity(0))
    return Limits(
        wall_s=timeout_s,
        cpu_s=timeout_s * cores,
        memory_mb=memory_mb,
        max_processes=MAX_PROCESSES,
        stdout_bytes=4 * 1024 * 1024,
        stderr_bytes=64 * 1024,
        file_size_bytes=256 * 1024 * 1024,
        disk_bytes=512 * 1024 * 1024,
        open_files=1024,
        network=False,
    )


def _returncode(ex: Execution) -> int:
    if ex.exit_code is not None:
        return ex.exit_code
    if ex.signal is not None:
        return 128 + ex.signal
    return 125  # never started (sandbox error) or killed by a limit without a signal


def run_shell(
    copy_dir: Path | str | RepoCopy,
    command: str,
    *,
    timeout_s: float,
    memory_mb: int,
    env: Mapping[str, str] | None = None,
    files: Mapping[str, bytes | str] | None = None,
    sandbox: Sandbox | None = None,
    writable: bool = True,
    max_files: int = MAX_FILES,
    max_bytes: int = MAX_BYTES,
) -> ShellResult:
    """Run `bash -c command` in `copy_dir` (seen at REPO_DIR). `env` adds variables to the
    sandbox's clean defaults (PATH, HOME=/tmp, LANG); `files` are written into /tmp first.
    `writable=False` shows the copy read-only (a timed run leaves nothing for the next one).
    A writable run may leave at most `max_files` files and `max_bytes` bytes in the copy
    (`CopyGuard`): past that it fails (exit code 125, the reason says so) and what it added
    is removed."""
    path = copy_dir.path if isinstance(copy_dir, RepoCopy) else Path(copy_dir)
    script = f"exec 2>&1\ncd {REPO_DIR} || exit 125\n{command}\n"
    guard = CopyGuard(path, max_files=max_files, max_bytes=max_bytes) if writable else None
    with guard or contextlib.nullcontext():
        ex = (sandbox or shared_sandbox()).run(
            ["bash", "-c", script],
            env=dict(env or {}),
            files=dict(files or {}),
            limits=shell_limits(timeout_s, memory_mb),
            binds=[Bind(host_path=str(path.resolve()), sandbox_path=REPO_DIR, writable=writable)],
        )
    output = ex.stdout_text
    if ex.stdout_truncated:
        output += "\n[output cut at its limit]"
    m = ex.measurement
    if guard is not None and guard.breached is not None:
        return ShellResult(output=f"{output}\n[perfgym: {guard.message}]", returncode=125,
                           timed_out=False, wall_s=m.wall_s if m else 0.0,
                           cpu_s=m.cpu_s if m else 0.0, status=CommandStatus.COPY_LIMIT,
                           reason=guard.message)  # fmt: skip
    return ShellResult(
        output=output if ex.status is not Status.SANDBOX_ERROR else ex.reason,
        returncode=_returncode(ex),
        timed_out=ex.status is Status.TIMEOUT,
        wall_s=m.wall_s if m else 0.0,
        cpu_s=m.cpu_s if m else 0.0,
        status=CommandStatus.of(ex.status),
        reason=ex.reason,
    )


def apply_patch(
    copy_dir: Path | RepoCopy, patch: str, *, timeout_s: float = 60.0, memory_mb: int = 1024,
    sandbox: Sandbox | None = None,
) -> str:  # fmt: skip
    """`git apply` a unified diff to the copy (in the sandbox); what it wrote, as a diff read
    from the files (`applied.applied_diff`: what every static check reads, never the patch's
    own text). PatchError with git's message when it does not apply (nothing of it is applied
    then), or when a file it writes is not a plain file of the copy (a symbolic link, a FIFO, a
    file over `applied.MAX_FILE_BYTES`), a compiled module, or a Python file that does not
    decode or parse as the interpreter reads it (`applied.source_text`)."""
    if not patch.strip():
        return ""
    root = copy_dir.path if isinstance(copy_dir, RepoCopy) else Path(copy_dir)
    text = patch if patch.endswith("\n") else patch + "\n"
    numstat = (f"git apply --numstat -z --whitespace=nowarn /tmp/{_PATCH_NAME} 2>/tmp/err"
               " || { cat /tmp/err; exit 1; }")  # fmt: skip
    listed = run_shell(copy_dir, numstat, timeout_s=timeout_s, memory_mb=memory_mb,
                       files={_PATCH_NAME: text}, sandbox=sandbox)  # fmt: skip
    if not listed.ok:
        raise PatchError("patch does not apply" + _why(listed))
    # git lists a rename by its new name alone: the text's old names (a rename's source) are
    # read too, so the diff shows the file the rename took away (a name git refuses, or that
    # is not a plain path, is left to git)
    paths = numstat_paths(listed.output) | {
        name
        for f in parse_patch(patch)
        for name in (f.old_path, f.path)
        if name and not name.startswith(("/", '"')) and ".." not in name.split("/")
    }
    odd = sorted(p for p in paths if any(ord(c) < 32 or c == "\x7f" for c in p))
    if odd:
        raise PatchError(f"patch refused: a path with a control character ({odd[0]!r})")
    compiled = sorted(p for p in paths if compiled_module(p))
    if compiled:
        raise PatchError(f"patch refused: {compiled[0]} is a compiled module (Python imports it "
                         "ahead of the source): a patch changes source only")  # fmt: skip
    before, tree = _read(root, paths, "patch does not apply: it changes")
    res = run_shell(
        copy_dir,
        f"git apply --whitespace=nowarn /tmp/{_PATCH_NAME}",
        timeout_s=timeout_s,
        memory_mb=memory_mb,
        files={_PATCH_NAME: text},
        sandbox=sandbox,
    )
    if not res.ok:
        lines = [ln for ln in res.output.splitlines() if ln.strip()]
        raise PatchError("patch does not apply: " + ("; ".join(lines[:3]) or res.reason))
    after, now = _read(root, paths, "patch refused: it makes")
    unseen = sorted(
        p
        for p in set(tree) | set(now)
        if tree.get(p) != now.get(p)
        and p not in paths
        and not any(q.startswith(p + "/") for q in paths)
    )
    if unseen:
        raise PatchError(
            f"patch refused: git changed {unseen[:3]}, which its file list does not show"
        )
    for rel, text in sorted(after.items()):
        if rel.endswith(".py") and text is not None and text != before.get(rel):
            try:
                ast.parse(text, rel)
            except (SyntaxError, ValueError) as exc:
                raise PatchError(f"patch refused: it makes {rel}, which is not Python the checks "
                                 f"can parse ({exc})") from None  # fmt: skip
    return applied_diff(before, after)


def numstat_paths(output: str) -> set[str]:
    """The files `git apply --numstat -z` lists (a rename's or copy's both names, where git
    gives both)."""
    paths: set[str] = set()
    fields = output.split("\0")
    i = 0
    while i < len(fields):
        parts = fields[i].split("\t", 2)
        if len(parts) == 3 and parts[2]:
            paths.add(parts[2])
        elif len(parts) == 3 and i + 2 < len(fields):  # a rename: old and new name follow
            paths.update(fields[i + 1 : i + 3])
            i += 2
        i += 1
    return paths


def _read(root: Path, paths: set[str], refusal: str
          ) -> tuple[dict[str, str | None], dict[str, tuple[int, int, int, int]]]:  # fmt: skip
    """The patch's files' text and every entry's state, or PatchError(`refusal` and why)."""
    try:
        return snapshot(root, paths), tree_state(root)
    except UnreadableChange as exc:
        raise PatchError(f"{refusal} {exc}") from None


def _why(res: ShellResult) -> str:
    lines = [ln for ln in res.output.replace("\0", "\n").splitlines() if ln.strip()]
    return f": {'; '.join(lines[:3]) or res.reason}" if lines or res.reason else ""


def take_patch(
    copy_dir: Path | RepoCopy, *, timeout_s: float = 60.0, memory_mb: int = 1024,
    sandbox: Sandbox | None = None,
) -> str:  # fmt: skip
    """The copy's changes against its original commit: `git add -A && git diff --cached BASE`
    (in the sandbox; build outputs the repository's .gitignore names are left out)."""
    if isinstance(copy_dir, RepoCopy):
        path, base = copy_dir.path, copy_dir.base_commit
    else:
        path = Path(copy_dir)
        base = read_base_commit(path)
    res = run_shell(
        path,
        f"git add -A && git -c core.quotepath=off diff --cached --binary {base}",
        timeout_s=timeout_s,
        memory_mb=memory_mb,
        sandbox=sandbox,
    )
    if not res.ok:
        raise PatchError(f"cannot take the patch of {path}: {res.output.strip()[-300:]}")
    return res.output
