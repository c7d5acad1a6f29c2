"""The compiled exec stub: built once per source version, reused, and optional."""

import os

from perfgym.sandbox import exec_stub
from perfgym.sandbox.base import SandboxConfig
from perfgym.sandbox.warm import WarmSandbox


def test_stub_is_built_once_and_reused(tmp_path, monkeypatch):
    monkeypatch.setattr(exec_stub, "HELPERS", tmp_path / "helpers")
    exec_stub.stub_path.cache_clear()
    try:
        path = exec_stub.stub_path()
        assert path is not None and os.access(path, os.X_OK), exec_stub.unavailable_reason()
        built = os.stat(path).st_mtime_ns
        exec_stub.stub_path.cache_clear()
        assert exec_stub.stub_path() == path
        assert os.stat(path).st_mtime_ns == built  # not rebuilt
        assert [p.name for p in (tmp_path / "helpers").iterdir()] == [os.path.basename(path)]
    finally:
        exec_stub.stub_path.cache_clear()


def test_no_compiler_means_no_stub_and_a_reason(tmp_path, monkeypatch):
    monkeypatch.setattr(exec_stub, "HELPERS", tmp_path / "empty")
    monkeypatch.setattr(exec_stub.shutil, "which", lambda name: None)
    exec_stub.stub_path.cache_clear()
    try:
        assert exec_stub.stub_path() is None
        assert "no C compiler" in exec_stub.unavailable_reason()
    finally:
        exec_stub.stub_path.cache_clear()


def test_the_stub_reports_a_failed_exec_like_exec_does():
    with WarmSandbox() as sb:
        assert sb.exec_stub is not None
        ex = sb.run(["/tmp/not-here"], files={})
        assert ex.exit_code == 127 and "No such file" in ex.reason
        ex = sb.run(["./script.sh"], files={"script.sh": "#!/bin/sh\necho from-script\n"})
        assert ex.stdout == b"from-script\n", ex


def test_both_start_paths_give_the_program_the_same_world():
    probe = ["sh", "-c", "id -u; id -G; pwd; ulimit -n; ulimit -Hn; ulimit -c; cat"]
    outs = []
    for config in (SandboxConfig(), SandboxConfig(exec_stub=False)):
        with WarmSandbox(config) as sb:
            ex = sb.run(probe, stdin=b"in")
            assert ex.status.value == "OK", ex
            outs.append(ex.stdout)
    assert outs[0] == outs[1]
    assert outs[0].splitlines()[0] == b"65534"
