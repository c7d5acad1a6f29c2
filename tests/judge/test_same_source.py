"""Normalised sources: comments and layout do not make another program; anything else does."""

from __future__ import annotations

import pytest

from perfgym.judge.same_source import normalised, same_source_roles
from perfgym.tasks.task import Language, Oracle, Solution, Task, TaskKind, TestCase

PY = "import sys\n\ndef f(x):\n    return x+1\n\nprint(f(int(sys.stdin.read())))\n"


def same(a: str, b: str, language: Language) -> bool:
    return normalised(a, language) == normalised(b, language)


def test_python_comments_blank_lines_and_spacing_are_layout() -> None:
    padded = "# faster!\n" + PY.replace("x+1", "x + 1   # one more").replace("\n\n", "\n\n\n\n")
    assert same(PY, padded + "\n\n# end\n", Language.PYTHON)
    assert same(PY, PY.replace("\n", "\r\n"), Language.PYTHON)


@pytest.mark.parametrize(
    "other",
    [PY.replace("x+1", "x+2"), PY.replace("    return", "  return").replace("print", " print"),
     PY.replace("def f(x):\n    return x+1\n", "def f(x):\n    '''doc'''\n    return x+1\n")],
)  # fmt: skip
def test_python_code_strings_and_structure_count(other: str) -> None:
    assert not same(PY, other, Language.PYTHON)


C = 'int main(void) {\n  int i = 1, j = 2;\n  printf("%d // x\\n", i++ + j);\n  return 0;\n}\n'


def test_c_comments_and_spacing_are_layout_but_not_inside_strings() -> None:
    padded = "/* tuned */\n" + C.replace("return 0;", "return 0; // done").replace("i = 1", "i=1")
    assert same(C, padded, Language.C)
    assert not same(C, C.replace("// x", "//  x"), Language.C)  # inside a string literal
    assert not same(C, C.replace("i++ + j", "i + ++j"), Language.C)  # punctuation kept apart


def test_unknown_layouts_fall_back_to_lines() -> None:
    broken = "def f(:\n    pass   \n\n"
    assert same(broken, "def f(:\n    pass\n", Language.PYTHON)  # does not tokenize
    assert not same(broken, "def f(:\n  pass\n", Language.PYTHON)


def test_the_roles_a_candidate_is() -> None:
    task = Task(id="t", family="f", language=Language.PYTHON, kind=TaskKind.STDIO,
                baseline=Solution(label="baseline", source=PY),
                references=[Solution(label="reference", source=PY.replace("x+1", "x + 1"))],
                tests=[TestCase(id="t1", stdin="1", expected="2")],
                oracle=Oracle(kind="tokens"))  # fmt: skip
    assert same_source_roles(task, PY + "# padded\n") == ["baseline", "reference"]
    assert same_source_roles(task, PY.replace("+1", "+0+1")) == []
    assert same_source_roles(task, None) == []


def test_a_coding_cookie_makes_comments_count():
    """`# coding: unicode_escape` decodes `\\u000a` in a comment into a newline: what tokenize
    reads as a comment is code. Such a source is compared by lines, never tied by comments."""
    plain = "x = 1\nprint(x)\n"
    hidden = "# coding: unicode_escape\nx = 1\nprint(x)  # \\u000aprint(2)\n"
    assert normalised(plain, "python") != normalised(hidden, "python")
    utf8 = "# -*- coding: utf-8 -*-\nx = 1\nprint(x)  # note\n"
    assert normalised(plain, "python") == normalised(utf8, "python")
