"""Runs see the host interpreter's start-up hooks (*.pth, sitecustomize) as empty files."""

import os
import site
import sys
import uuid

import pytest

from perfgym.sandbox import BwrapSandbox
from perfgym.sandbox.base import SandboxConfig
from perfgym.sandbox.site_hooks import hook_files, site_dirs
from perfgym.sandbox.warm import WarmSandbox

PY = os.path.realpath(sys.executable)
# What a probe hook does when Python starts: it leaves a mark in the interpreter's environment.
LOOK = "import os, sys\nprint(os.environ.get('PERFGYM_HOOK_PROBE', 'absent'), sys.path[-1])\n"


def test_hook_files_lists_pth_and_customize_modules(tmp_path):
    for name in ("a.pth", "sitecustomize.py", "usercustomize.py", "mod.py", "notes.txt"):
        (tmp_path / name).write_text("import os\n")
    (tmp_path / "dir.pth").mkdir()  # a directory is no hook
    found = [os.path.basename(p) for p in hook_files([str(tmp_path), str(tmp_path / "gone")])]
    assert found == ["a.pth", "sitecustomize.py", "usercustomize.py"]


def test_site_dirs_include_the_interpreters_own():
    assert os.path.realpath(site.getsitepackages()[0]) in site_dirs()


@pytest.fixture()
def probe_hook():
    """A real .pth hook in this interpreter's site-packages for the test's duration."""
    target = os.path.join(site.getsitepackages()[0], f"perfgym-probe-{uuid.uuid4().hex[:8]}.pth")
    try:
        with open(target, "w") as f:
            f.write("import os; os.environ['PERFGYM_HOOK_PROBE'] = 'ran'\n")
    except OSError as exc:
        pytest.skip(f"site-packages is not writable here: {exc}")
    try:
        yield target
    finally:
        os.unlink(target)


@pytest.mark.parametrize("backend", ["warm", "bwrap"])
def test_runs_do_not_execute_host_hooks(probe_hook, backend):
    site_packages = os.path.realpath(site.getsitepackages()[0])
    for hooks, want in ((False, "absent"), (True, "ran")):
        config = SandboxConfig(site_hooks=hooks)
        sb = WarmSandbox(config) if backend == "warm" else BwrapSandbox(config)
        with sb:
            ex = sb.run([PY, "-c", LOOK], files={"x": ""})
            shown = sb.run([PY, "-c", f"print(repr(open({probe_hook!r}).read()))"])
        assert ex.ok, ex.reason
        mark, last = ex.stdout_text.split()
        assert mark == want
        if not hooks:  # site-packages itself stays importable: nothing a path hook added after it
            assert last == site_packages
            assert shown.stdout_text.strip() == "''"
        else:
            assert "PERFGYM_HOOK_PROBE" in shown.stdout_text
