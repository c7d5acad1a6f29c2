"""The perfgym-core script: every task, its graded solutions in order, each one extractable."""

from __future__ import annotations

from perfgym.judge.extract import extract
from perfgym.llm.core_script import broken, core_script
from perfgym.tasks.suite import load_suite


def test_every_task_ends_on_its_reference_with_broken_wrong_and_slower_mixed_in() -> None:
    suite = load_suite("perfgym-core")
    script = core_script()
    assert set(script.tasks) == {t.id for t in suite.tasks}
    for task in suite.tasks:
        answers = script.tasks[task.id]
        sources = [extract(a.content or "", task.language).source for a in answers]
        assert None not in sources, task.id
        pool = [p.source for p in sorted(task.pool, key=lambda p: p.quality or 0)]
        assert sources[-1].strip() == task.references[0].source.strip()
        assert [s.strip() for s in sources if s.strip() in {p.strip() for p in pool}] == [
            p.strip() for p in pool
        ]
        assert broken(task.baseline.source).strip() in [s.strip() for s in sources]
        assert task.baseline.source.strip() in [s.strip() for s in sources]  # the slower one
        assert len(answers) == len(pool) + 4
        assert len(answers) <= 6  # `optimize --iterations 6` reaches the reference


def test_each_task_id_selects_its_own_answers() -> None:
    script = core_script()
    for task_id in script.tasks:
        assert script.task_of(f"Task ID: {task_id}\nTitle: ...") == task_id
