"""Red team of "one program, judged once" (perfgym.judge.twins) and the batch changes beside it.

Each attack is a pair of candidates of one task that normalise equal (so they are twins) but
do different things: the first is correct, the second is wrong on its own. Judged together,
the wrong one must not take the first one's verdict (a wrong program scoring as a correct
one); judged alone it fails.

The ways in that were open (found by red-teaming the first version, which keyed twins on the
normalised source and screened a word list):
  * Python: a program can read its own line numbers or text without any listed word
    (tb_lineno, warnings, getattr with split names, the script's path as a literal). A second
    version keyed twins on the compiled module and a longer word list; `posixpath.getsize` got
    past it (tests/security/test_identity.py). Twins now need the same bytes
    (`perfgym.judge.twins.twin_key`): no list at all.
  * Python: a coding cookie is a comment to the normaliser; the key compiles the bytes.
  * C family: the normaliser's comment/literal rule was not the compiler's: a `//` comment
    ending in a backslash swallows the next line (C, C++), and a raw string holding `"` then
    `//` was cut there. Twins in other languages need the same text, and the normaliser (ties
    with the baseline and reference) splices backslash-newlines and compares raw-string
    sources by lines.

Run: PYTHONPATH=src python3 -m pytest -q tests/security/test_redteam_twins.py
"""

from __future__ import annotations

import pytest

from perfgym.judge import Candidate, Judge, JudgeConfig
from perfgym.judge.same_source import normalised
from perfgym.judge.twins import SAME_PROGRAM, twin_key
from perfgym.rewards import get_reward
from perfgym.tasks.suite import load_suite

WRONG = "    print('not the answer'); raise SystemExit\n"

# Headers that make a program read its own layout without an INTROSPECTION word. Each sets
# `_k` to something that differs once a comment line is put at the top of the program.
PY_BYPASSES = {
    # the line of a raise, from the traceback object (`tb_lineno`: no listed word)
    "exc_info_tb_lineno": (
        "import sys as _s\ntry:\n    1/0\nexcept ZeroDivisionError:\n"
        "    _k = _s.exc_info()[2].tb_lineno\nif _k != 3:\n" + WRONG
    ),
    # the warnings machinery records the caller's line number
    "warnings_lineno": (
        "import warnings as _w\nwith _w.catch_warnings(record=True) as _r:\n"
        "    _w.simplefilter('always')\n    _w.warn('x')\n_k = _r[0].lineno\nif _k != 4:\n" + WRONG
    ),
    # the frame functions under split names
    "getattr_split_names": (
        "import sys as _s\n_k = getattr(getattr(_s, '_get' 'frame')(0), 'f_line' 'no')\n"
        "if _k != 2:\n" + WRONG
    ),
    # the script itself, by its path (a program task's script is /tmp/build/main.py)
    "script_path_literal": (
        "_k = open('/tmp/build/' 'main.py').read()\nif _k.startswith('#'):\n" + WRONG
    ),
    # no reading at all: a coding cookie is a comment to the normaliser (and to the warm
    # worker's compile(str)), but the fresh build and every measured `python3 main.py` honour
    # it; an unknown one makes the copy NC on its own, and a twin is never built
    "coding_cookie": "",
}
#: What is put on top of the good copy to make the wrong one (a plain comment by default).
BAD_PREFIX = {"coding_cookie": "# -*- coding: bogus -*-\n"}


def _pool(task) -> str:
    return (task.pool or task.references)[0].source


def _judged(pairs: list[tuple[object, str, str]]) -> list:
    """Every (task, good, bad) pair judged in one batch: good first, its twin right after."""
    cands = []
    for task, good, bad in pairs:
        for src in (good, bad):
            cands.append(Candidate(task, None, src, "m", len(cands), "perfgym-core"))
    # noise_rounds 0: no A/A band, no speed decided: a wrong twin must fall below a correct
    # program's floor, and the band's runs were most of this file's time (58.6 s to 9.6 s)
    with Judge(JudgeConfig(repeats=1, noise_rounds=0, clock="cpu")) as judge:
        return judge.judge_many(cands)


@pytest.fixture(scope="module")
def suite():
    return load_suite("perfgym-core")


@pytest.fixture(scope="module")
def py_pairs(suite):
    task = suite.get("py-topk-words")
    pairs = {}
    for name, header in PY_BYPASSES.items():
        good = header + _pool(task)
        pairs[name] = (task, good, BAD_PREFIX.get(name, "# a comment\n") + good)
    return pairs


@pytest.fixture(scope="module")
def py_verdicts(py_pairs):
    names = list(py_pairs)
    vs = _judged([py_pairs[n] for n in names])
    return {n: (vs[2 * i], vs[2 * i + 1]) for i, n in enumerate(names)}


@pytest.fixture(scope="module")
def alone(py_pairs, c_pairs):
    """Every wrong copy judged on its own, in one batch (distinct programs: no twins)."""
    pairs = {**py_pairs, **c_pairs}
    names = list(pairs)
    cands = [Candidate(pairs[n][0], None, pairs[n][2], "m", k, "perfgym-core")
             for k, n in enumerate(names)]  # fmt: skip
    with Judge(JudgeConfig(repeats=1, noise_rounds=0, clock="cpu")) as judge:
        return dict(zip(names, judge.judge_many(cands), strict=True))


def test_the_pairs_differ_only_in_comments_but_are_not_twins(py_pairs) -> None:
    """The attack's precondition (equal normalised sources) holds, but for a coding cookie,
    which the normaliser now compares by lines (a cookie can turn a comment into code); the
    twin rule says no to every pair."""
    for name, (task, good, bad) in py_pairs.items():
        same = normalised(good, task.language) == normalised(bad, task.language)
        assert same is (name != "coding_cookie"), name
        assert twin_key(task, bad) is None or twin_key(task, good) != twin_key(task, bad)


@pytest.mark.parametrize("name", [*PY_BYPASSES, "c_line_continuation", "cpp_raw_string"])
def test_the_wrong_copy_fails_when_judged_alone(alone, name) -> None:
    """The attack's other precondition: the second copy really is wrong."""
    assert not alone[name].correct and SAME_PROGRAM not in alone[name].flags


@pytest.mark.parametrize("name", list(PY_BYPASSES))
def test_python_layout_reader_twin_does_not_take_a_correct_verdict(py_verdicts, name) -> None:
    good, bad = py_verdicts[name]
    assert good.correct  # the representative really is correct
    # HOLE: the wrong copy is a twin and shares the pass (and the reward)
    assert not (bad.correct and SAME_PROGRAM in bad.flags), (
        f"{name}: a program that prints a wrong answer was judged correct as a twin"
    )


def test_a_wrong_twin_is_not_rewarded_as_the_correct_one(py_verdicts, alone) -> None:
    good, bad = py_verdicts["exc_info_tb_lineno"]
    reward = get_reward("rlpf")
    (r_good,), (r_bad,), (r_alone,) = (
        reward([good]),
        reward([bad]),
        reward([alone["exc_info_tb_lineno"]]),
    )
    assert r_alone < r_good
    assert r_bad == r_alone, f"wrong twin rewarded {r_bad} (alone: {r_alone}, its rep: {r_good})"


# -- C family: the normaliser's rule is not the compiler's -----------------------------------
def _c_continuation(suite):
    """C: `// ... \\` continues the comment onto the next line (translation phase 2), which
    the normaliser keeps as code; the swallowed line is the one counting close pairs."""
    task = suite.get("c-hamming-pairs")
    src = _pool(task)
    assert "                close++;" in src
    good = src.replace(
        "                close++;", "                // count it\n                close++;"
    )
    bad = src.replace(
        "                close++;", "                // count it \\\n                close++;"
    )
    return task, good, bad


def _cpp_raw_string(suite):
    """C++: a raw string R"(" //0)" is cut by the normaliser at its inner quote, and the rest
    (`//0)";`) read as a comment: R"(" //0)" and R"(" //1)" normalise equal."""
    task = suite.get("cpp-word-freq")
    src = _pool(task)
    good = src.replace(
        "int main() {\n",
        'static const char *K = R"(" //0)";\nint main() {\n'
        "    if (K[4] != '0') { std::cout << \"x\\n\"; return 0; }\n",
    )
    return task, good, good.replace('//0)"', '//1)"')


@pytest.fixture(scope="module")
def c_pairs(suite):
    return {"c_line_continuation": _c_continuation(suite), "cpp_raw_string": _cpp_raw_string(suite)}


def test_c_family_pairs_are_neither_twins_nor_ties(c_pairs) -> None:
    """Nor do they tie by construction (a false tie with the baseline or reference would give
    a slower program the role's timing, and the rewards' and metrics' tie)."""
    for task, good, bad in c_pairs.values():
        assert good != bad and twin_key(task, good) != twin_key(task, bad)
        assert normalised(good, task.language) != normalised(bad, task.language)


@pytest.fixture(scope="module")
def c_verdicts(c_pairs):
    names = list(c_pairs)
    vs = _judged([c_pairs[n] for n in names])
    return {n: (vs[2 * i], vs[2 * i + 1]) for i, n in enumerate(names)}


@pytest.mark.parametrize("name", ["c_line_continuation", "cpp_raw_string"])
def test_c_family_false_twin_does_not_take_a_correct_verdict(c_verdicts, name) -> None:
    good, bad = c_verdicts[name]
    assert good.correct
    assert not (bad.correct and SAME_PROGRAM in bad.flags), (
        f"{name}: a program that differs from its representative was judged correct as a twin"
    )
