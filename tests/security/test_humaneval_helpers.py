"""HumanEval's tests call the prompt's own helpers, never the candidate's (red team helper-86).

HumanEval/32's test asserts `poly(coeffs, candidate(coeffs))` is near zero, /38 and /50 decode
`encode_cyclic(s)` / `encode_shift(s)`: the helpers are the prompt's, and upstream (one shared
namespace) took them from the candidate, whose redefinition decided its own test. A wrong
candidate with a lying helper was judged OK on all three, 3 of 3."""

from __future__ import annotations

import pytest

from perfgym.judge import Judge, JudgeConfig
from perfgym.judge.candidate import Candidate
from perfgym.judge.verdict import Stage
from perfgym.tasks import load_suite
from perfgym.tasks.prompt_helpers import free_names, helpers_for

LYING = {
    "HumanEval/32": "def poly(xs, x):\n    return 0.0\n\ndef find_zero(xs):\n    return 12345.0\n",
    "HumanEval/38": "def encode_cyclic(s):\n    return s\n\ndef decode_cyclic(s):\n    return s\n",
    "HumanEval/50": "def encode_shift(s):\n    return s\n\ndef decode_shift(s):\n    return s\n",
}


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    suite = load_suite("humaneval")
    base = tmp_path_factory.mktemp("helpers")
    cfg = JudgeConfig(repeats=1, measure_baseline=False, measure_reference=False,
                      reference_cache=str(base / "refs"), build_cache=str(base / "builds"))  # fmt: skip
    lying = [Candidate(suite.get(t), source=s, sample=0) for t, s in LYING.items()]
    # The canonical solutions, each with the helper redefined honestly beside it: they pass.
    honest = [Candidate(suite.get(t), source=suite.get(t).reference.source, sample=1)
              for t in LYING]  # fmt: skip
    with Judge(cfg) as judge:
        verdicts = judge.judge_many(lying + honest)
    return verdicts[: len(lying)], verdicts[len(lying) :]


def test_a_candidate_that_redefines_the_prompts_helper_does_not_decide_its_test(judged):
    lying, _ = judged
    # A failed assertion in HumanEval's `check` is the run's failure (NR), as for any wrong
    # answer on these tasks; before the fix all three were OK.
    assert all(v.stage is not Stage.OK and "AssertionError" in v.reason for v in lying), [
        (v.stage, v.reason) for v in lying
    ]


def test_honest_solutions_that_define_the_helper_still_pass(judged):
    _, honest = judged
    assert [v.stage for v in honest] == [Stage.OK] * 3, [(v.stage, v.reason) for v in honest]


def test_only_the_tests_that_call_a_prompt_helper_get_one():
    suite = load_suite("humaneval")
    prefixed = [t.id for t in suite.tasks if not t.oracle.checker.startswith(("\n", "METADATA",
                                                                              "def check"))]  # fmt: skip
    assert prefixed == sorted(LYING)
    assert free_names("def check(c):\n    assert poly([1], c(1)) == 0\n") == {"poly"}
    assert helpers_for("def check(c):\n    assert c(1)\n", "def f(x):\n    return x\n", "f") == ""
    # the entry point is the candidate's, even where the test names it (HumanEval/33)
    assert helpers_for("def check(c):\n    assert g(1) == c(1)\n",
                       "import math\ndef g(x):\n    return x\n", "g") == ""  # fmt: skip
