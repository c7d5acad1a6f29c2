"""The compiled exec stub: built once per source version, reused, optional, and started ahead
of its orders."""

import os

from perfgym.sandbox import exec_stub, helper_build
from perfgym.sandbox._inside.stub import Stub, orders
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
    monkeypatch.setattr(helper_build.shutil, "which", lambda name: None)
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
    assert int(outs[0].splitlines()[0]) not in (0, 65534)  # a uid of its own (run_uids)


def _wait_exit(pid: int) -> int:
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def _spec(argv: list[str], cpu: int | None = None) -> dict:
    limits = {"cpu_s": 5, "file_size_bytes": 1 << 20, "open_files": 64, "max_processes": 32}
    return {"argv": argv, "env": {"PATH": "/usr/bin:/bin"}, "limits": limits, "uid": -1,
            "gid": -1, "cpu": cpu, "cwd": "/"}  # fmt: skip


def _read_all(fd: int) -> bytes:
    data = b""
    while chunk := os.read(fd, 4096):
        data += chunk
    os.close(fd)
    return data


def test_a_stub_started_ahead_follows_its_orders():
    path = exec_stub.stub_path()
    assert path is not None, exec_stub.unavailable_reason()
    stub = Stub(path)
    stub.give_stdin(b"through stdin\n")
    os.close(stub.stdin)
    cpu = sorted(os.sched_getaffinity(0))[-1]
    stub.go(_spec(["sh", "-c", "cat; grep Cpus_allowed_list /proc/self/status"], cpu), [])
    assert _read_all(stub.exec_err_r) == b""  # exec'd
    out = _read_all(stub.out_r)
    os.close(stub.err_r)
    assert _wait_exit(stub.pid) == 0
    assert out.splitlines()[0] == b"through stdin"
    assert out.split()[-1] == str(cpu).encode()


def test_a_stub_without_orders_exits_quietly_and_bad_orders_are_reported():
    path = exec_stub.stub_path()
    assert path is not None
    idle = Stub(path)
    err = idle.exec_err_r
    idle.exec_err_r = -1
    idle.abandon()  # end of file at the gate: no run after all
    assert _wait_exit(idle.pid) == 127
    assert _read_all(err) == b""

    cut = Stub(path)
    os.write(cut.gate_w, orders(_spec(["true"]), [])[:9])  # length, then too few bytes
    os.close(cut.gate_w)
    assert b"ended early" in _read_all(cut.exec_err_r)
    assert _wait_exit(cut.pid) == 127
    for fd in (cut.stdin, cut.out_r, cut.err_r):
        os.close(fd)

    nowhere = Stub(path)
    nowhere.go(_spec(["true"]), ["/nonexistent/cgroup.procs"])
    assert b"/nonexistent/cgroup.procs" in _read_all(nowhere.exec_err_r)
    assert _wait_exit(nowhere.pid) == 127
    for fd in (nowhere.stdin, nowhere.out_r, nowhere.err_r):
        os.close(fd)
