"""Extraction is linear in the answer's size, capped, and keeps the rules of the regexes it
replaced (issue 13, hole 8: 2,000 unclosed fences in 1 MB took 150 s to extract).

Every blow-up runs in a child process under a deadline, so the quadratic code fails fast
instead of hanging the suite; the bounds are orders of magnitude, never tight ratios."""

import importlib
import re
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfgym.judge import extract
from perfgym.rewards import afterburner_format_ok
from perfgym.tasks.task import Language

# The rules as they were (d1bff82): the reference the line scanner must agree with.
OLD_FENCE = re.compile(
    r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+#.-]*)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.M | re.S
)
OLD_FORMAT = re.compile(r"\s*<thinking>(.*?)</thinking>\s*<solution>(.*)</solution>\s*", re.DOTALL)


def old_blocks(text):
    return [(m.group(2), m.group(3)) for m in OLD_FENCE.finditer(text)]


_ext = importlib.import_module("perfgym.judge.extract")
#: The cap (1 MiB when the code under test has none: the blow-ups stay under it either way).
CAP = getattr(_ext, "MAX_ANSWER_CHARS", 1 << 20)
#: The scanner (the old regex itself on code without one: the agreement tests then hold
#: trivially; they guard the rewrite, not a hole).
fenced_blocks = getattr(_ext, "fenced_blocks", old_blocks)


def old_format_ok(text):
    m = OLD_FORMAT.fullmatch(text)
    if m is None:
        return False
    thinking, solution = m.group(1), m.group(2)
    return "<thinking>" not in thinking and not any(
        t in solution for t in ("<thinking>", "<solution>")
    )


# Builders of hostile answers, by name, run in the child (the texts are too big for argv).
BUILDERS = r"""
def unclosed(n, size):  # n unclosed python fences spread over `size` characters
    unit = size // n
    return ("```python\n" + "x" * (unit - 11) + "\n") * n
def openers(size):  # nothing but tagged openers, none of them closed
    return "```py\n" * (size // 6)
def long_run(size):  # one opener of a huge run of backticks, then many lines
    return "`" * (size // 2) + "\n" + "x\n" * (size // 4)
def nested(size):  # ~~~~ and ``` openers interleaved, closers of other lengths
    return ("~~~~ c\n```py\n`````\n~~~\n") * (size // 26)
def many_lengths(size):  # openers of every length against closers of every length
    out, n = [], 3
    while sum(map(len, out)) < size:
        out.append("`" * n + "py\nx\n" + "`" * (n + 1) + "\n")
        n += 1
    return "".join(out)[:size]
def thinking(size):  # Afterburner: </thinking><solution> repeated, no </solution>
    return "<thinking>" + "</thinking><solution>" * (size // 21)
def openers_t(size):  # Afterburner: <thinking> openers only
    return "<thinking>" * (size // 10) + "</solution>"
"""

CHILD = (
    "import sys, time\n"
    "from perfgym.judge import extract\n"
    "from perfgym.rewards import afterburner_format_ok\n"
    "from perfgym.tasks.task import Language\n" + BUILDERS + "text = eval(sys.argv[1])\n"
    "t = time.perf_counter()\n"
    "if sys.argv[2] == 'format':\n"
    "    r = afterburner_format_ok(text)\n"
    "else:\n"
    "    r = extract(text, Language.PYTHON).ok\n"
    "print(time.perf_counter() - t, r, len(text))\n"
)


def timed(expr, what="extract", deadline_s=30):
    """Seconds the check of the answer `expr` builds took in a child, or fail at the deadline."""
    try:
        p = subprocess.run([sys.executable, "-c", CHILD, expr, what], capture_output=True,
                           text=True, timeout=deadline_s)  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail(f"{what} of {expr} took over {deadline_s} s (quadratic?)")
    assert p.returncode == 0, p.stderr
    seconds, _ok, n = p.stdout.split()
    assert int(n) <= CAP, "the answer must be under the cap, or the cap is what is timed"
    return float(seconds)


MB = 1_000_000


def test_two_thousand_unclosed_fences_in_one_megabyte_are_linear():
    """The red team's case: 150 s before; now well under a second (bound: 10 s, loaded box)."""
    big = timed(f"unclosed(2000, {MB})")
    assert big < 10
    small = timed(f"unclosed(1000, {MB // 10})")
    # Quadratic would be ~100x for 10x the text; allow 30x (plus a floor for tiny timings).
    assert big < 30 * max(small, 0.01)


@pytest.mark.parametrize("builder", ["openers", "long_run", "nested", "many_lengths"])
def test_other_fence_blowups_are_linear(builder):
    assert timed(f"{builder}({MB})") < 10


@pytest.mark.parametrize("builder", ["thinking", "openers_t"])
def test_afterburner_format_check_is_linear(builder):
    assert timed(f"{builder}({MB})", "format") < 10


def test_answer_over_the_cap_is_nx_with_a_reason():
    cap = CAP
    text = "```python\nprint(1)\n```\n" + "#" * cap
    ex = extract(text, Language.PYTHON)
    assert not ex.ok and ex.rule == "none"
    assert "over the extraction cap" in ex.reason and str(len(text)) in ex.reason
    # At the cap exactly, the answer is still read.
    assert extract("```python\nprint(1)\n```\n".ljust(cap, "#"), Language.PYTHON).ok


@pytest.mark.parametrize(
    "text",
    [
        "````python\nprint(1)\n```\n",  # a 4-run closed by 3: untagged, as before
        "```python\nprint(1)\n````\n```\n",  # a longer line does not close
        "  ```py  extra words\nx = 1\n\t```  \n",  # indentation, trailing blanks, info text
        "~~~c\nint x;\n~~~",  # a closer on the last line without a newline
        "```py\n```\n",  # an empty block
        "```py\r\nx\r\n```\r\n",  # CRLF: the closer line holds \r, so nothing closes
        "```python\nprint(1)\n```\n```python\nprint(22)\n```",  # longest of two
        "```\nécrit\n```\n```Python3\nok\n```",  # non-ASCII body, tag case
        "```py",  # an opener without a newline
        "text\n```py\nunclosed\n",
    ],
)
def test_scanner_agrees_with_the_old_regex_on_edge_cases(text):
    assert fenced_blocks(text) == old_blocks(text)


TOKENS = ["```", "~~~", "`", "~", " ", "\t", "\n", "\n", "py", "python", "c", "x", "\r", "é"]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=40).map("".join))
def test_scanner_agrees_with_the_old_regex(text):
    assert fenced_blocks(text) == old_blocks(text)


FORMAT_TOKENS = ["<thinking>", "</thinking>", "<solution>", "</solution>", " ", "\n", "x",
                 "\u00a0", "<"]  # fmt: skip


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(FORMAT_TOKENS), max_size=14).map("".join))
def test_format_check_agrees_with_the_old_regex(text):
    assert afterburner_format_ok(text) is old_format_ok(text)


def test_format_check_keeps_its_meaning():
    assert afterburner_format_ok(" <thinking>a</thinking>\n<solution>b</solution> ")
    assert not afterburner_format_ok("<thinking>a<thinking></thinking><solution>b</solution>")
    assert not afterburner_format_ok("<thinking>a</thinking><solution>b<solution></solution>")
    assert not afterburner_format_ok("<thinking>a</thinking>x<solution>b</solution>")
