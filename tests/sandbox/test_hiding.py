"""Hiding per run: `Sandbox.run(hide=...)`, the `hiding` views of a sandbox and of a worker
pool, and the one place a run's arguments are checked."""

import json

import pytest

from perfgym.errors import ConfigError
from perfgym.sandbox import RunRequest
from perfgym.sandbox.base import Sandbox, SandboxConfig
from perfgym.sandbox.pyworker import PythonWorkerPool

LOOK = "import os, sys\nprint(os.listdir(sys.argv[1]))\n"


@pytest.fixture
def secret(outside_tmp):
    d = outside_tmp / "suite"
    d.mkdir(mode=0o755)
    (d / "reference.py").write_text("print('the answer')\n")
    return d


def _listing(sb, path, **kw):  # type: ignore[no-untyped-def]
    ex = sb.run(["python3", "-c", LOOK, str(path)], **kw)
    assert ex.status.value == "OK", (ex.status, ex.reason, ex.stderr_text)
    return ex.stdout_text.strip()


def test_a_run_hides_what_it_asks_for_and_no_more(sandbox, secret):
    hide_before = list(sandbox.config.hide_paths)
    assert _listing(sandbox, secret) == "['reference.py']"
    assert _listing(sandbox, secret, hide=[str(secret)]) == "[]"
    assert _listing(sandbox, secret) == "['reference.py']"  # the next run sees it again
    assert sandbox.config.hide_paths == hide_before  # nothing shared was changed


def test_a_hiding_view_hides_in_its_runs_only(warm, secret):
    view = warm.hiding([str(secret)])
    assert view.config is warm.config and view.name == warm.name
    assert _listing(view, secret) == "[]"
    assert _listing(view.hiding([]), secret) == "[]"
    assert _listing(warm, secret) == "['reference.py']"
    view.close()  # closing a view leaves its sandbox open
    assert _listing(warm, secret) == "['reference.py']"


def test_a_worker_pool_view_restarts_a_worker_once_to_hide_more(secret):
    look = f"import os\nprint(os.listdir({str(secret)!r}))\n"
    with PythonWorkerPool(size=1, config=SandboxConfig()) as pool:
        assert pool.run_program(look).stdout == b"['reference.py']\n"
        view = pool.hiding([str(secret)])
        assert view.workers is pool.workers and pool.hide == ()
        assert view.run_program(look).stdout == b"[]\n"
        assert (
            view.call("import os\ndef f(p): return os.listdir(p)\n", "f", [str(secret)]).value == []
        )
        assert pool.stats()["restarts"] == 1  # restarted once to hide it, then reused
        # The worker now hides it for every call: one that hides less is served as it is.
        assert pool.run_program(look).stdout == b"[]\n"
        assert pool.stats()["restarts"] == 1


class _Recording(Sandbox):
    """A backend that keeps the requests `run` hands it."""

    name = "recording"

    def __init__(self) -> None:
        self.requests: list[RunRequest] = []

    def _run(self, request):  # type: ignore[no-untyped-def]
        self.requests.append(request)
        return "ran"


def test_run_checks_the_call_once_and_hands_the_backend_a_request():
    sb = _Recording()
    assert sb.run(["echo", "hi"], stdin="é", files={"a/b.txt": "x"}, cpu=0, hide=["/srv"]) == "ran"
    (req,) = sb.requests
    assert (
        req.command == ["echo", "hi"]
        and req.stdin == "é".encode()
        and req.files == {"a/b.txt": b"x"}
    )
    assert req.cpu == 0 and req.hide == ["/srv"]
    for bad in ("echo hi", [], ["a\x00b"]):
        with pytest.raises(ConfigError, match="argv|NUL"):
            sb.run(bad)
    for name in ("../x", "/etc/passwd", ""):
        with pytest.raises(ConfigError, match="relative to the work dir"):
            sb.run(["true"], files={name: "x"})
        with pytest.raises(ConfigError, match="relative to the work dir"):
            sb.run(["true"], collect=[name])
    assert len(sb.requests) == 1  # nothing bad reached the backend


def test_a_request_sent_elsewhere_leaves_this_hosts_core_and_paths_out():
    from perfgym.sandbox.pool import RunRequest as PoolRunRequest

    assert PoolRunRequest is RunRequest
    req = RunRequest(command=["true"], cpu=3, hide=["/srv/suite"])
    assert "cpu" not in json.loads(req.model_dump_json()) and "hide" not in req.model_dump()
    assert req.keywords()["cpu"] == 3 and req.keywords()["hide"] == ["/srv/suite"]
    assert RunRequest.model_validate_json(req.model_dump_json()).hide == []
