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
        # a test whose function a library made is not the test file's either
        "import json\nwatch.check_item(Item(json.dumps))\n"
    ),
    "package_codegen": (
        # the package generating its own code under its own file's name is its business
        "exec(compile('def g():\\n    return 1\\n', REPO + '/pkg.py', 'exec'), {})\n"
        "import test_a as t\nwatch.check_item(Item(t.test_one))\n"
    ),
    "names_rebound": (
        "import test_a as t\n"
        "t.helper = print\n"
        "watch.snapshot([Item(t.test_one, t)])\n"
        "t.helper = len\n"
        "watch.check_names(Item(t.test_one, t))\n"
    ),
    "names_kept": (
        "import test_a as t\n"
        "t.helper = print\n"
        "watch.snapshot([Item(t.test_one, t)])\n"
        "t.DATA = [1, 2]  # data a test changes is not watched\n"
        "watch.check_names(Item(t.test_one, t))\n"
    ),
    "profile_from_package": (
        "open(REPO + '/pkg2.py', 'w').write('import sys\\nsys.setprofile(lambda *a: None)\\n"
        "sys.setprofile(None)\\n')\n"
        "import pkg2\n"
    ),
    "profile_from_elsewhere": "import sys\nsys.setprofile(lambda *a: None)\nsys.setprofile(None)\n",
    "wrapped_test_function": (
        # a decorator's wrapper: it holds the test in its closure
        "import functools\nimport test_a as t\n"
        "def deco(fn):\n    @functools.wraps(fn)\n    def wrapper():\n        return fn()\n"
        "    return wrapper\n"
        "watch.check_item(Item(deco(t.test_one)))\n"
    ),
    "wrapped_in_name_only": (
        # `__wrapped__` set on a no-op (here a library's function): it names the test, holds nothing
        "import functools, tempfile\nimport test_a as t\n"
        "fake = functools.wraps(t.test_one)(tempfile.gettempdir)\n"
        "watch.check_item(Item(fake))\n"
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

    def __init__(self, obj, module=None):
        self.obj = obj
        self.path = REPO + "/tests/test_a.py"
        self.module = module


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
        ("function_put_in_place", "is not one its test file defines"),
        ("library_test_function", "is not one its test file defines"),
        ("wrapped_in_name_only", "is not one its test file defines"),
        ("names_rebound", "names were rebound: helper"),
        ("profile_from_package", "(pkg2.py) set a setprofile function"),
        ("edited_test_file", "is not the original's"),
    ],
)
def test_each_change_of_the_tests_code_is_reported(tmp_path: Path, case: str, words: str) -> None:
    reports = _run(tmp_path, case)
    assert any(words in r for r in reports), reports


@pytest.mark.parametrize(
    "case", ["wrapped_test_function", "package_codegen", "names_kept", "profile_from_elsewhere"]
)
def test_honest_uses_are_not_reported(tmp_path: Path, case: str) -> None:
    assert _run(tmp_path, case) == []
