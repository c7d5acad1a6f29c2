"""Oracles on real outputs: exact, tokens, float tolerance, checker."""

from perfgym.judge.oracle import check
from perfgym.tasks.task import Oracle, TestCase

CASE = TestCase(id="t", stdin="x")


def test_exact_and_tokens():
    assert check(Oracle(kind="exact"), CASE, "1 2\n", "1 2")[0]
    assert not check(Oracle(kind="exact"), CASE, "1 2", "1  2")[0]
    assert check(Oracle(kind="tokens"), CASE, "1 2", " 1\n2 \n")[0]
    ok, msg = check(Oracle(kind="tokens"), CASE, "1 2", "1 3")
    assert not ok and "expected" in msg


def test_float_tolerance():
    o = Oracle(kind="float", tolerance=1e-6)
    assert check(o, CASE, "0.3333333 x", "0.33333331 x")[0]
    assert not check(o, CASE, "0.3333333", "0.34")[0]
    assert check(o, CASE, [1.0, (2.0,)], [1.0000000001, (2.0,)])[0]


def test_checker_function_and_its_failures():
    src = (
        "def check(test_input, expected, output):\n    return sorted(output) == sorted(expected)\n"
    )
    o = Oracle(kind="checker", checker=src)
    assert check(o, CASE, [1, 2, 3], [3, 1, 2])[0]
    assert not check(o, CASE, [1, 2, 3], [3, 1])[0]
    ok, msg = check(o, CASE, [1], 5)  # the checker itself raises on this output
    assert not ok and "checker rejected" in msg
