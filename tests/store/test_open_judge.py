"""`open_judge` (store/): the judge `perfgym eval` uses, a registry backend behind the result
store; a local eval or a replay loads nothing of the service, a replay nothing of the judge."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from perfgym.errors import ConfigError
from perfgym.judge.config import JudgeConfig
from perfgym.store.open_judge import open_judge

_LOADED = "import json, sys; print(json.dumps(sorted(m for m in sys.modules if 'perfgym' in m)))"


def _fresh(*codes: str) -> list[list[str]]:
    """The perfgym modules each code loads, each in its own fresh interpreter, run at once."""
    procs = [subprocess.Popen([sys.executable, "-c", f"{code}\n{_LOADED}"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for code in codes]  # fmt: skip
    out = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr[-2000:]
        out.append(json.loads(stdout.splitlines()[-1]))
    return out


def test_a_local_eval_loads_no_service_and_a_replay_no_judge(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    head = "from perfgym.judge.config import JudgeConfig\nfrom perfgym.store.open_judge import open_judge\n"
    local, replay = _fresh(
        f"{head}open_judge(JudgeConfig(), store={str(store)!r}, run='r').close()",
        f"{head}open_judge(JudgeConfig(), store={str(store)!r}, replay=True).close()",
    )
    assert "perfgym.judge.judge" in local  # it built the local Judge ...
    assert [m for m in local if m.startswith("perfgym.service")] == []  # ... and no service
    engine = ("perfgym.service", "perfgym.judge.judge", "perfgym.judge.local_backend")
    assert [m for m in replay if m.startswith(engine)] == []  # nothing that could execute


def test_malformed_choices_are_one_line_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--replay needs a result store"):
        open_judge(JudgeConfig(), replay=True)
    with pytest.raises(ConfigError, match="no judge backend named 'lokal'; registered: local"):
        open_judge(JudgeConfig(), backend="lokal", store=str(tmp_path / "s.sqlite"))
    with pytest.raises(ConfigError, match="needs a URL"):
        open_judge(JudgeConfig(), backend="service")
