"""The code watch of the pytest process (`repos/_inside/code_integrity.py`), each case in a fresh
interpreter (an audit hook cannot be removed): a module of the repository runs the code its
file compiles to, a test file is the original's, a test function's code stays its own."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

INSIDE = Path(__file__).resolve().parents[2] / "src/perfgym/repos/_inside"
TEST_SRC = "def test_one():\n    assert 1 + 1 == 2\n\n\ndef test_two():\n    assert [1] == [1]\n"
PKG_SRC = "VALUE = 3\n"

# Each case runs after the watch is installed over a repository holding tests/test_a.py and
# pkg.py; what it reports is printed.
CASES = {
    "honest": "import pkg\nimport test_a as t\nwatch.check_item(Item(t.test_one))\n",
    "planted_code": (
        "code = compile('def test_one():\\n    pass\\n', REPO + '/tests/test_a.py', 'exec')\n"
        "exec(code, {})\n"
    ),
    "planted_bytecode": (
        # what a .pyc of an emptied test file holds, loaded as the import system would
        "import marshal\n"
        "data = marshal.dumps(compile('def test_one():\\n    pass\\n', "
        "REPO + '/tests/test_a.py', 'exec'))\n"
        "exec(marshal.loads(data), {})\n"
    ),
    "code_swap": ("import test_a as t\nt.test_one.__code__ = (lambda: None).__code__\n"),
    "function_put_in_place": (
        "import test_a as t\n"
        "import pkg\n"
        "exec(compile('def fake():\\n    pass\\n', REPO + '/pkg.py', 'exec'), ns := {})\n"
        "watch.check_item(Item(ns['fake']))\n"
    ),
    "edited_test_file": (
        "open(REPO + '/tests/test_a.py', 'a').write('\\n# edited\\n')\nimport test_a\n"
    ),
    "library_test_function": (
        # a test made by a library (its code outside the repository) is not the watch's business
        "import json\nwatch.check_item(Item(json.dumps))\n"
    ),
    "wrapped_test_function": (
        "import functools\nimport test_a as t\n"
        "@functools.wraps(t.test_one)\ndef wrapper():\n    return t.test_one()\n"
        "watch.check_item(Item(wrapper))\n"
    ),
}

RUNNER = """
import json, sys
sys.path.insert(0, {inside!r})
import code_integrity
REPO = {repo!r}
reports = []
watch = code_integrity.Integrity(REPO, {originals!r}, ["tests/*"], reports.append)
watch.install()
sys.path[:0] = [REPO, REPO + "/tests"]


class Item:
    nodeid = "tests/test_a.py::case"

    def __init__(self, obj):
        self.obj = obj


{case}
print(json.dumps(reports))
"""


def _run(tmp_path: Path, case: str) -> list[str]:
    repo = tmp_path / case
    (repo / "tests").mkdir(parents=True)
    (repo / "tests" / "test_a.py").write_text(TEST_SRC)
    (repo / "pkg.py").write_text(PKG_SRC)
    originals = {
        "tests/test_a.py": hashlib.sha256(TEST_SRC.encode()).hexdigest(),
        "pkg.py": hashlib.sha256(PKG_SRC.encode()).hexdigest(),
    }
    script = RUNNER.format(inside=str(INSIDE), repo=str(repo), originals=originals,
                           case=CASES[case])  # fmt: skip
    out = subprocess.run([sys.executable, "-I", "-B", "-c", script], capture_output=True,
                         text=True, timeout=60)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_honest_modules_and_tests_report_nothing(tmp_path: Path) -> None:
    assert _run(tmp_path, "honest") == []


@pytest.mark.parametrize(
    ("case", "words"),
    [
        ("planted_code", "is not what the file compiles to"),
        ("planted_bytecode", "is not what the file compiles to"),
        ("code_swap", "code was replaced at run time"),
        ("function_put_in_place", "is not the code its file defines"),
        ("edited_test_file", "is not the original's"),
    ],
)
def test_each_change_of_the_tests_code_is_reported(tmp_path: Path, case: str, words: str) -> None:
    reports = _run(tmp_path, case)
    assert any(words in r for r in reports), reports


def test_library_and_wrapped_test_functions_are_not_reported(tmp_path: Path) -> None:
    assert _run(tmp_path, "library_test_function") == []
    assert _run(tmp_path, "wrapped_test_function") == []
