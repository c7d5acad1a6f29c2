"""What the judge knows of a task's suite: it stamps the suite's name on the verdict, and
hides the suite's directory in every run of the task without changing the sandbox's config."""

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from sum_programs import PROGRAMS, sum_task

from perfgym.judge import Candidate, Stage
from perfgym.tasks.task import Language

CORRECT = PROGRAMS[Language.PYTHON][0]


def test_a_judged_verdict_carries_its_suite_name(judge):
    task = sum_task(Language.PYTHON)
    (named, unnamed) = judge.judge_many(
        [Candidate(task, source=CORRECT, model="m", suite="sums"), Candidate(task, source=CORRECT)]
    )
    assert named.stage is Stage.OK and named.suite == "sums"
    assert unnamed.suite == ""
    assert judge.judge(task, source=CORRECT, suite="sums:test").suite == "sums:test"


@pytest.fixture
def suite_dir():
    """A suite directory runs could see if nothing hid it (under the exec stub's helpers)."""
    from perfgym.sandbox.exec_stub import HELPERS

    HELPERS.mkdir(parents=True, exist_ok=True)
    if not os.access(HELPERS, os.W_OK):
        pytest.skip(f"no writable {HELPERS}")
    path = Path(tempfile.mkdtemp(prefix="suite-", dir=HELPERS))
    path.chmod(0o755)
    (path / "sum-python").mkdir(mode=0o755)
    (path / "sum-python" / "reference.py").write_text(CORRECT)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_runs_of_a_task_cannot_list_its_suite_and_the_config_is_unchanged(judge, suite_dir):
    task = sum_task(Language.PYTHON).model_copy(update={"root": suite_dir / "sum-python"})
    # Correct only where the suite directory looks empty; "saw" where its reference shows.
    peek = f"import os\nif os.listdir({str(suite_dir)!r}):\n    print('saw')\nelse:\n" + "".join(
        f"    {line}\n" for line in CORRECT.splitlines()
    )
    assert os.listdir(suite_dir)  # the host sees it
    hidden_before = list(judge.sandbox.config.hide_paths)
    v = judge.judge(task, source=peek)
    assert v.stage is Stage.OK, (v.stage, v.reason)
    assert judge.sandbox.config.hide_paths == hidden_before
    ex = judge.sandbox.run(["python3", "-c", f"import os; print(os.listdir({str(suite_dir)!r}))"])
    assert "sum-python" in ex.stdout_text  # other runs of the sandbox are as they were
