"""The host interpreters' start-up hooks (`*.pth`, sitecustomize), masked with an empty file in runs.

A `.pth` file in site-packages is read by `site` at every interpreter start; its lines that
begin with `import` run code there. Hosts put their own hooks in: editable installs (this very
project's `src/` on every run's `sys.path`), setuptools' distutils shim, and machine images'
patches (on this project's VMs `_sandboxing_egress_ca.pth` imports certifi: 28 of the 37 ms a
sandboxed `python3 -c pass` took). None of it belongs in a candidate's run: it leaks host code
onto `sys.path`, costs start-up time that every Python timing carries, and differs between the
machine that stored a timing and the one that replays it.

Runs therefore see each hook file as empty (`SandboxConfig.site_hooks=True` keeps them). The
site-packages directories stay on `sys.path`, so installed packages still import; this is the
same path the warm Python worker gives programs it runs (`_inside/pyworker_program.py`).
"""

from __future__ import annotations

import functools
import glob
import os
import site
import tempfile

from perfgym.sandbox.exec_stub import HELPERS

#: Module files `site` imports at start when found on sys.path.
CUSTOMIZE = ("sitecustomize.py", "usercustomize.py")
#: System interpreters' package directories (Debian's /usr/bin/python3 reads dist-packages).
SYSTEM_PATTERNS = ("/usr/lib/python3*/*-packages", "/usr/local/lib/python3*/*-packages")


def site_dirs() -> list[str]:
    """Package directories a `python3` started in a run may read hooks from."""
    dirs = [os.path.realpath(d) for d in site.getsitepackages()]
    for pattern in SYSTEM_PATTERNS:
        dirs += sorted(os.path.realpath(d) for d in glob.glob(pattern))
    out: list[str] = []
    for d in dirs:
        if os.path.isdir(d) and d not in out:
            out.append(d)
    return out


def hook_files(dirs: list[str] | None = None) -> list[str]:
    """The hook files in `dirs` (default: `site_dirs()`): regular `*.pth` and customize files."""
    out: list[str] = []
    for d in site_dirs() if dirs is None else dirs:
        try:
            names = sorted(os.listdir(d))
        except OSError:
            continue
        for name in names:
            path = os.path.join(d, name)
            if (name.endswith(".pth") or name in CUSTOMIZE) and os.path.isfile(path):
                out.append(path)
    return out


@functools.cache
def empty_file() -> str:
    """A root-owned, read-only empty regular file to mount over hooks (a bound /dev/null would
    not open: bubblewrap mounts binds nodev)."""
    target = HELPERS / "empty"
    if not (target.is_file() and target.stat().st_size == 0):
        HELPERS.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=HELPERS, prefix=".empty-")
        os.close(fd)
        os.chmod(tmp, 0o444)
        os.replace(tmp, target)  # atomic: concurrent starters agree
    return str(target)


def mask_args() -> list[str]:
    """bubblewrap arguments that show every hook file as empty."""
    hooks = hook_files()
    if not hooks:
        return []
    empty = empty_file()
    args: list[str] = []
    for path in hooks:
        args += ["--ro-bind", empty, path]
    return args
