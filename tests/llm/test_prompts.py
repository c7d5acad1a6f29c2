"""Prompts: the shipped templates render every field; a user's file overrides; ids and hashes."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from perfgym.errors import ConfigError
from perfgym.llm.prompts import (
    MAX_FEEDBACK_CHARS,
    generation_prompt,
    load_template,
    optimization_prompt,
    repair_prompt,
)
from perfgym.tasks.suite import load_suite

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tasks():  # type: ignore[no-untyped-def]
    return list(load_suite("perfgym-core").tasks)


def test_generation_prompt_holds_rlpf_fields_for_every_task(tasks) -> None:  # type: ignore[no-untyped-def]
    for task in tasks:
        p = generation_prompt(task)
        system, user = (m["content"] for m in p.messages)
        assert '"summary"' in system and '"solution_source"' in system
        for text in (task.id, task.goal.split()[0], task.baseline.source.strip().splitlines()[-1],
                     "Metric:", "Correctness rule:", "Allowed external includes:",
                     "Interface / task contract:"):  # fmt: skip
            assert text in user, (task.id, text)
        assert p.template_id == "perfgym/generate" and len(p.template_sha256) == 64


def test_optimization_prompt_feeds_back_the_measurements(tasks) -> None:  # type: ignore[no-untyped-def]
    task = tasks[0]
    ok = optimization_prompt(task, "int main(){}", passed=True, time_ratio=0.25,
                             memory_ratio=1.5, integral_ratio=0.375, objective="memory")  # fmt: skip
    text = ok.messages[-1]["content"]
    assert "int main(){}" in text and "Passed: yes" in text
    assert "0.25x" in text and "1.50x" in text and "0.38x" in text and "memory-efficient" in text
    failed = optimization_prompt(task, "x", passed=False, stage="WO")
    assert "Passed: no (it stopped at: WO)" in failed.messages[-1]["content"]
    assert "0.25x" not in failed.messages[-1]["content"]
    with pytest.raises(ConfigError, match="objective"):
        optimization_prompt(task, "x", passed=True, objective="speed")  # type: ignore[arg-type]


def test_repair_prompt_bounds_the_message(tasks) -> None:  # type: ignore[no-untyped-def]
    huge = "HEAD" + "x" * 100_000 + "TAIL"
    p = repair_prompt(tasks[0], "src", stage="NR", message=huge, test_id="t7")
    text = p.messages[-1]["content"]
    assert "HEAD" in text and "TAIL" in text and "characters elided" in text
    assert len(text) < MAX_FEEDBACK_CHARS + 3000 and "test t7" in text


def test_a_user_template_overrides_and_is_identified(tmp_path: Path, tasks) -> None:  # type: ignore[no-untyped-def]
    own = tmp_path / "mine.j2"
    own.write_text("{% block user %}Speed up {{ task_id }} please.{% endblock %}")
    p = generation_prompt(tasks[0], override=own)
    assert p.messages == [{"role": "user", "content": f"Speed up {tasks[0].id} please."}]
    assert p.template_id == "file:mine.j2"
    assert p.template_sha256 != generation_prompt(tasks[0]).template_sha256
    own.write_text("{% block user %}{{ no_such_field }}{% endblock %}")
    with pytest.raises(ConfigError, match="no_such_field"):
        generation_prompt(tasks[0], override=own)
    own.write_text("just text, no blocks")
    with pytest.raises(ConfigError, match="no 'user' block"):
        generation_prompt(tasks[0], override=own)
    with pytest.raises(ConfigError, match="cannot read"):
        generation_prompt(tasks[0], override=tmp_path / "absent.j2")


def test_templates_ship_as_package_data() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = data["tool"]["setuptools"]["package-data"]["perfgym"]
    shipped = sorted(p.name for p in (ROOT / "src/perfgym/llm/templates").iterdir())
    assert shipped == ["generate.j2", "optimize.j2", "repair.j2"]
    assert "llm/templates/*.j2" in patterns
    for kind in ("generate", "optimize", "repair"):
        assert (
            load_template(kind).text == (ROOT / f"src/perfgym/llm/templates/{kind}.j2").read_text()
        )  # type: ignore[arg-type]
