"""run_shell on a private copy: the command's confinement, patches in and out, git URLs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from perfgym.repos.copy import RepoFetchError, make_copy
from perfgym.repos.shell import REPO_DIR, PatchError, apply_patch, run_shell, take_patch


@pytest.fixture()
def host_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "lib"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "__init__.py").write_text("def f(x):\n    return x + 1\n")
    (repo / "README").write_text("a library\n")
    return repo


def test_hostile_commands_are_contained(host_repo: Path, repo_cache: Path, tree_hash) -> None:  # type: ignore[no-untyped-def]
    before = tree_hash(host_repo)
    outside = repo_cache / "outside.txt"
    outside.write_text("host file\n")
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    os.environ["OPENAI_API_KEY"] = "sk-host-secret"
    copy = make_copy(host_repo)
    try:
        script = "\n".join([
            "rm -rf ~ /tmp/* 2>/dev/null; echo home=$HOME",
            "ls -A /root 2>&1 | head -3; cat /root/.bashrc 2>&1 | head -1",
            "env | grep -c OPENAI_API_KEY",
            "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 80), timeout=3)\""
            " 2>&1 | tail -1",
            f"echo x > {outside} 2>&1; echo x > /usr/escape 2>&1; echo x > {REPO_DIR}/../esc 2>&1",
            "pkill python 2>&1; kill -9 -1 2>&1; echo survived",
        ])  # fmt: skip
        res = run_shell(copy, script, timeout_s=30, memory_mb=512)
    finally:
        del os.environ["OPENAI_API_KEY"]
    try:
        assert victim.poll() is None, "a host process was killed from inside the sandbox"
    finally:
        victim.kill()
    out = res.output
    assert "home=/tmp" in out
    assert "sk-host-secret" not in out and "\n0\n" in out
    assert "Network is unreachable" in out or "OSError" in out or "Errno" in out
    assert outside.read_text() == "host file\n"
    assert not Path("/usr/escape").exists()
    assert tree_hash(host_repo) == before
    # the copy itself was writable: rm -rf ~ did not touch it either
    assert (copy.path / "pkg" / "__init__.py").is_file()
    copy.remove()


def test_copy_is_writable_and_patch_roundtrips(host_repo: Path, repo_cache: Path) -> None:
    a, b = make_copy(host_repo), make_copy(host_repo)
    res = run_shell(a, "sed -i 's/x + 1/1 + x/' pkg/__init__.py && echo new > added.txt",
                    timeout_s=30, memory_mb=512)  # fmt: skip
    assert res.ok, res.output
    patch = take_patch(a)
    assert "+    return 1 + x" in patch and "added.txt" in patch
    apply_patch(b, patch)
    assert (b.path / "added.txt").read_text() == "new\n"
    assert take_patch(b) == patch
    with pytest.raises(PatchError, match="patch does not apply"):
        apply_patch(b, patch)
    a.remove()
    b.remove()


def test_timeout_and_exit_status(host_repo: Path, repo_cache: Path) -> None:
    copy = make_copy(host_repo)
    res = run_shell(copy, "sleep 20", timeout_s=1, memory_mb=256)
    assert res.timed_out and not res.ok
    res = run_shell(copy, "echo out; echo err >&2; exit 3", timeout_s=10, memory_mb=256)
    assert res.returncode == 3 and res.output.split() == ["out", "err"]
    copy.remove()


def test_git_url_cloned_once_and_unfetchable_url(host_repo: Path, repo_cache: Path) -> None:
    origin = repo_cache / "origin"  # a git repository served by file:// URL
    subprocess.run(["cp", "-r", str(host_repo), str(origin)], check=True)
    for args in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"],
    ):
        subprocess.run(["git", *args], cwd=origin, check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=origin, capture_output=True,
                          text=True, check=True).stdout.strip()  # fmt: skip
    url = f"file://{origin}"
    c1 = make_copy(url, head)
    c2 = make_copy(url, head)
    assert c1.base_commit == head == c2.base_commit
    assert len(list((repo_cache / "clones").iterdir())) == 1
    assert (c1.path / "pkg" / "__init__.py").read_text().startswith("def f")
    with pytest.raises(RepoFetchError) as err:
        make_copy("https://perfgym-no-such-host.invalid/x.git", "0" * 40)
    assert "cannot fetch" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(RepoFetchError, match="does not exist"):
        make_copy(repo_cache / "nowhere")
    with pytest.raises(RepoFetchError, match="cannot check out"):
        make_copy(url, "f" * 40)
    for c in (c1, c2):
        c.remove()
