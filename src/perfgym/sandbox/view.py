"""What a run sees of the host: read-only root, hidden home directories, exposed toolchains, env."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Mapping

from perfgym.sandbox.base import WORK_DIR, SandboxConfig
from perfgym.sandbox.site_hooks import mask_args

#: Directories replaced by an empty tmpfs in every run (secrets, other users' files).
HIDDEN_HOMES = ("/root", "/home")


@functools.cache
def toolchain_roots() -> tuple[str, ...]:
    """Directories under a hidden home that runs still need (interpreters, rustup, cargo)."""
    candidates = [os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix)]
    for var, default in (("CARGO_HOME", "~/.cargo"), ("RUSTUP_HOME", "~/.rustup")):
        candidates.append(os.path.realpath(os.path.expanduser(os.environ.get(var, default))))
    roots: list[str] = []
    for path in candidates:
        hidden = any(path.startswith(h + "/") for h in HIDDEN_HOMES) and os.path.isdir(path)
        if hidden and not any(path == r or path.startswith(r + "/") for r in roots):
            roots.append(path)
    return tuple(roots)


def expose_args(site_hooks: bool = False) -> list[str]:
    """bubblewrap arguments: empty tmpfs over the home directories, toolchains bound back in,
    and (unless `site_hooks`) the interpreters' start-up hooks shown empty (`site_hooks.py`).

    Intermediate directories get mode 0755 explicitly so the unprivileged run uid can
    traverse them (bwrap would otherwise create them 0700).
    """
    args: list[str] = []
    for home in HIDDEN_HOMES:
        if os.path.isdir(home):
            args += ["--perms", "0755", "--tmpfs", home]
    made: set[str] = set()
    for root in toolchain_roots():
        parent = os.path.dirname(root)
        chain = []
        while parent not in HIDDEN_HOMES and parent != "/":
            chain.append(parent)
            parent = os.path.dirname(parent)
        for d in reversed(chain):
            if d not in made:
                args += ["--perms", "0755", "--dir", d]
                made.add(d)
        args += ["--ro-bind", root, root]
    if not site_hooks:
        args += mask_args()
    return args


@functools.cache
def default_path() -> str:
    parts = [os.path.dirname(os.path.realpath(sys.executable))]
    cargo = os.path.realpath(os.path.expanduser(os.environ.get("CARGO_HOME", "~/.cargo")))
    if os.path.isdir(os.path.join(cargo, "bin")):
        parts.append(os.path.join(cargo, "bin"))
    parts += ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"]
    return ":".join(parts)


@functools.cache
def _default_env() -> tuple[tuple[str, str], ...]:
    """The environment every program starts from (resolved once: paths are looked up)."""
    out = {
        "PATH": default_path(),
        "HOME": WORK_DIR,
        "TMPDIR": WORK_DIR,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    cargo = os.path.realpath(os.path.expanduser(os.environ.get("CARGO_HOME", "~/.cargo")))
    rustup = os.path.realpath(os.path.expanduser(os.environ.get("RUSTUP_HOME", "~/.rustup")))
    if os.path.isdir(rustup):
        out["RUSTUP_HOME"] = rustup
        out["CARGO_HOME"] = cargo
    return tuple(out.items())


def program_env(env: Mapping[str, str] | None) -> dict[str, str]:
    """The program's whole environment: defaults, then the caller's entries."""
    out = dict(_default_env())
    if env:
        for k, v in env.items():
            if not isinstance(k, str) or not isinstance(v, str) or "=" in k or "\x00" in k + v:
                raise ValueError(f"invalid environment entry {k!r}={v!r}")
            out[k] = v
    return out


def hidden_paths(config: SandboxConfig) -> list[str]:
    """Host paths covered by an empty tmpfs in each run, beyond the home directories."""
    out = []
    for p in config.hide_paths:
        real = os.path.realpath(p)
        under_work = real == WORK_DIR or real.startswith(WORK_DIR + "/")
        if os.path.exists(real) and not under_work:  # the work dir is fresh per run already
            out.append(real)
    return out
