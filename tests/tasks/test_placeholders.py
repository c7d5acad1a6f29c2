"""Harness placeholders: known names expand, anything else is refused with the reason."""

from __future__ import annotations

import pytest

from perfgym.errors import TaskFormatError
from perfgym.tasks import PLACEHOLDERS, check_placeholders, expand_placeholders
from perfgym.tasks.placeholders import placeholders_in


def test_expansion_of_every_placeholder() -> None:
    argv = [
        "{task_dir}/harness/main.cpp",
        "-I{root}/external",
        "{variant_dir}/s.cpp",
        "{build_dir}/bench",
    ]
    out = expand_placeholders(
        argv, task_dir="/r/executable_tasks/t", variant_dir="/v", build_dir="/b"
    )
    assert out == [
        "/r/executable_tasks/t/harness/main.cpp",
        "-I/r/external",
        "/v/s.cpp",
        "/b/bench",
    ]
    assert expand_placeholders(
        ["{root}"], task_dir="/a/b/c", variant_dir="", build_dir="", root="/x"
    ) == ["/x"]
    assert set(PLACEHOLDERS) == {"task_dir", "variant_dir", "build_dir", "root"}


def test_doubled_braces_are_literal() -> None:
    assert placeholders_in("-DX={{1,2}} {build_dir}") == ["build_dir"]
    assert expand_placeholders(["-DX={{1}}"], task_dir="/t", variant_dir="/v", build_dir="/b") == [
        "-DX={1}"
    ]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("{tsk_dir}/x", "unknown placeholder {tsk_dir}"),
        ("{}", "unknown placeholder {}"),
        ("{0}", "unknown placeholder {0}"),
        ("{task_dir.parent}", "unknown placeholder {task_dir.parent}"),
        ("{task_dir!r}", "format spec or conversion"),
        ("{build_dir:>10}", "format spec or conversion"),
        ("{build_dir", "bad placeholder"),
        ("build_dir}", "bad placeholder"),
    ],
)
def test_bad_placeholders_name_task_field_and_text(text: str, reason: str) -> None:
    with pytest.raises(TaskFormatError) as info:
        check_placeholders(["ok-{task_dir}", text], task="t1", field="build.sources")
    message = str(info.value)
    assert (
        message.startswith("task 't1': build.sources:")
        and reason in message
        and repr(text) in message
    )
    with pytest.raises(TaskFormatError, match="cannot expand"):
        expand_placeholders([text], task_dir="/t", variant_dir="/v", build_dir="/b")
