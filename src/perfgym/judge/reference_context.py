"""What a kept reference run depended on besides the task: the sandbox's interpreter, its
installed packages, the site hooks setting and perfgym's own code (`reference_disk` keys)."""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

log = logging.getLogger(__name__)

_PROBE = "import json, site, sys; print(json.dumps([sys.version, site.getsitepackages()]))"


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """SHA-256 of perfgym's own Python files (a development checkout keeps one version string
    across commits that change how a run's values are made or read)."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        data = path.read_bytes()
        name = str(path.relative_to(root)).encode()
        for part in (name, data):
            h.update(len(part).to_bytes(8, "big"))
            h.update(part)
    return h.hexdigest()


def runtime_context(python: str, site_hooks: bool) -> str | None:
    """The sandbox interpreter's identity (its real path, size and change time, its version)
    and the change times of its site-packages folders, the site-hooks setting and perfgym's
    code, as one string; None where the interpreter cannot be asked (keep nothing then)."""
    exe = os.path.realpath(python or sys.executable)
    try:
        st = os.stat(exe)
        probe = subprocess.run([exe, "-I", "-c", _PROBE], capture_output=True, text=True,
                               timeout=60, check=True)  # fmt: skip
        version, sites = json.loads(probe.stdout)
        stamps = [[d, os.stat(d).st_mtime_ns] for d in sites if os.path.isdir(d)]
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        log.warning("reference cache: cannot identify the sandbox interpreter %s (%s); "
                    "nothing kept", exe, exc)  # fmt: skip
        return None
    return json.dumps({"python": [exe, st.st_size, st.st_mtime_ns, version],
                       "site_packages": stamps, "site_hooks": site_hooks,
                       "perfgym_code": code_digest()}, sort_keys=True)  # fmt: skip
