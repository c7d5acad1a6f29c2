"""A program is judged as the text the compiler reads (red team helper-92, /work/wt/rt92).

A Python source with a coding declaration under which Python reads other text was two programs:
a warm worker's `compile(str)` ignored the declaration (the tests), a fresh `python3 main.py`
honoured it (the timed, workload-checked runs). A wrong program got OK and RLPF 1.26. And the
`same_source` rule read code as comments twice: a declaration after form feeds on Python's
first line, and a C trigraph (`??/`) that ends a comment under gcc's `-std=c11`; a program
3x slower than the reference was "level with the reference" (1.26 against its twin's 0.93).
"""

from __future__ import annotations

import pytest

from perfgym.judge import Judge, JudgeConfig
from perfgym.judge.same_source import normalised, same_source_roles
from perfgym.judge.source_encoding import encoding_problem
from perfgym.rewards import get_reward
from perfgym.tasks import load_suite
from perfgym.tasks.task import Language

#: What python3 runs after the declaration: 0 for every small input (all of py-lis-dp's
#: tests), the reference's answer otherwise (its workloads).
_HIDDEN = (
    "import sys as _s\\n_d = _s.stdin.buffer.read()\\n_s.stdin = __import__('io')."
    "TextIOWrapper(__import__('io').BytesIO(_d))\\n"
    "if int(_d.split()[0] if _d.split() else 0) < 100: print(0); raise SystemExit\\n"
)


@pytest.fixture(scope="module")
def suite():
    return load_suite("perfgym-core")


@pytest.mark.parametrize(
    "source",
    [
        "# -*- coding: unicode_escape -*-\n# setup\\nprint(1)\n",
        "# a\f\f\f# coding: unicode_escape\n# x\\nprint(1)\n",  # splitlines() breaks at \f
        "#!/usr/bin/env python3\r# coding: unicode_escape\r# x\\nprint(1)\r",  # lone CRs
        "x = 1\n# vim: set fileencoding=raw_unicode_escape :\n# \\u000aprint(2)\n",
        "# coding: latin-1\nprint('é')\n",  # UTF-8 bytes read as Latin-1: other text
        "# coding: no-such-codec\nprint(1)\n",
        "\ufeffprint(1)\n",
    ],
)
def test_a_declaration_that_changes_the_text_is_named(source: str) -> None:
    assert encoding_problem(source)


@pytest.mark.parametrize(
    "source",
    [
        "print(1)\n",
        "# -*- coding: utf-8 -*-\nprint('é')\n",
        "# coding: UTF8\nprint('é')\n",
        "# coding: latin-1\nprint(1)\n",  # ASCII: the same text either way
        "# -*- coding: unicode_escape -*-\nprint(1)\n",  # no escape in it: the same text
        "x = 1\ny = 2\n# coding: unicode_escape\\nprint(2)\n",  # third line: not a declaration
        "s = '# not coding: here'\n",
    ],
)
def test_a_source_python_reads_as_written_passes(source: str) -> None:
    assert encoding_problem(source) == ""


def test_a_program_python3_reads_as_other_code_is_refused_before_it_runs(suite) -> None:
    """helper-92's candidate: the reference to a warm worker, 0 on every test to python3.
    It was OK at RLPF 1.26 (and with isolate_tests too); now it is refused, below a wrong
    answer's reward."""
    task = suite.get("py-lis-dp")
    ref = task.reference.source
    cand = "# -*- coding: unicode_escape -*-\n# setup\\n" + _HIDDEN + "\n" + ref
    with Judge(JudgeConfig(repeats=1, reference_cache="off")) as judge:
        v = judge.judge(task, source=cand, model="helper-92")
        wrong = judge.judge(task, source="print(0)\n", model="wrong")
    assert v.stage.value == "NC" and "unicode_escape" in v.reason, (v.stage, v.reason)
    assert not v.correct and v.candidate is None
    rlpf = get_reward("rlpf")
    assert wrong.stage.value == "WO"
    assert rlpf.score([v])[0].value <= rlpf.score([wrong])[0].value


def test_a_declaration_behind_form_feeds_is_never_a_tie(suite) -> None:
    task = suite.get("py-lis-dp")
    ref = task.reference.source
    burn = "\\nfor _i in range(300000): pass\\n"
    for head in ("# a\f\f\f# coding: unicode_escape\n", "# x\r# coding: unicode_escape\n"):
        cand = head + "# notes" + burn + "\n" + ref
        assert same_source_roles(task, cand) == []
    assert same_source_roles(task, "# my notes\n" + ref) == ["reference"]  # comments still tie


def test_a_trigraph_that_ends_a_comment_is_never_a_tie(suite) -> None:
    """`/* a *??/` + newline + `/ CODE /* b */`: one comment to the rule, CODE to gcc."""
    task = suite.get("c-rect-sums")
    ref = task.reference.source
    burn = "static int pg_burn(void) { return 1; }\n"
    cand = ref + "/* tuning notes *??/\n/ " + burn + "/* end of notes */\n"
    assert same_source_roles(task, cand) == []
    assert normalised(cand, Language.C) != normalised(ref, Language.C)
    assert same_source_roles(task, ref + "/* tuning notes */\n") == ["reference"]


def test_a_splice_with_spaces_before_the_newline_is_the_compilers(suite) -> None:
    """gcc splices `\\` + spaces + newline too: `// note \\  ` comments out the next line."""
    task = suite.get("c-rect-sums")
    ref = task.reference.source
    lines = ref.split("\n")
    i = next(k for k, line in enumerate(lines) if line.strip().endswith(";"))
    hidden = "\n".join(lines[:i] + ["// note \\  "] + lines[i:])  # line i is a comment to gcc
    assert same_source_roles(task, hidden) == []
