"""House-style guards over `src/`: one name per class, one exception tree, one geometric mean.

Read statically (no module is imported), so they cost a parse of the tree. Each guard is a
function of a source root; the last tests point them at a small hostile tree to show they
see what they guard against.
"""

from __future__ import annotations

import ast
import builtins
import functools
import re
from collections import defaultdict
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "perfgym"
#: Code run inside the sandbox with the stdlib alone: it cannot import perfgym.errors.
STDLIB_ONLY = ("sandbox/_inside/", "tasks/_pinned_generate.py")
#: exp(mean(log x)) written out: `math.exp(sum(...log...` or `np.exp(np.mean(np.log(`.
GEOMEAN_SPELLED = re.compile(r"exp\(\s*(?:math\.f?sum|sum|np\.mean)\([^\n]*log", re.S)
GEOMEAN_HOME = "timing/estimators.py"
#: Errors, not interrupts: a KeyboardInterrupt subclass (cli.interrupted.Terminated, SIGTERM)
#: must stay outside `except Exception`, so outside the tree.
_BUILTIN_EXCEPTIONS = {
    n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, Exception)
}


@functools.cache
def _classes(root: Path) -> list[tuple[str, str, list[str]]]:
    """(class name, file relative to root, base names) for every class defined under root."""
    out = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases]
                out.append((node.name, rel, bases))
    return out


def defined_twice(root: Path) -> dict[str, list[str]]:
    where: dict[str, list[str]] = defaultdict(list)
    for name, rel, _ in _classes(root):
        where[name].append(rel)
    return {n: files for n, files in where.items() if len(files) > 1}


def exceptions_outside_the_tree(root: Path) -> list[str]:
    """Exception classes that do not derive from PerfgymError (stdlib-only code excepted)."""
    classes = _classes(root)
    bases = {name: b for name, _, b in classes}

    def reaches(name: str, target: set[str], seen: frozenset[str] = frozenset()) -> bool:
        if name in target:
            return True
        if name in seen or name not in bases:
            return False
        return any(reaches(b, target, seen | {name}) for b in bases[name])

    out = []
    for name, rel, _ in classes:
        if rel.startswith(STDLIB_ONLY) or name == "PerfgymError":
            continue
        if reaches(name, _BUILTIN_EXCEPTIONS) and not reaches(name, {"PerfgymError"}):
            out.append(f"{rel}:{name}")
    return out


def geometric_means_spelled_out(root: Path) -> list[str]:
    return [
        path.relative_to(root).as_posix()
        for path in sorted(root.rglob("*.py"))
        if path.relative_to(root).as_posix() != GEOMEAN_HOME
        and GEOMEAN_SPELLED.search(path.read_text())
    ]


def test_no_class_name_is_defined_twice() -> None:
    assert defined_twice(SRC) == {}


def test_every_exception_derives_from_perfgym_error() -> None:
    assert exceptions_outside_the_tree(SRC) == []


def test_the_exception_tree_in_errors_docstring_names_every_exception() -> None:
    doc = ast.get_docstring(ast.parse((SRC / "errors.py").read_text())) or ""
    classes = _classes(SRC)
    bases = {name: b for name, _, b in classes}

    def under_perfgym(name: str) -> bool:
        todo, seen = [name], set()
        while todo:
            n = todo.pop()
            if n == "PerfgymError":
                return True
            seen.add(n)
            todo += [b for b in bases.get(n, []) if b not in seen]
        return False

    ours = {name for name, _, _ in classes if under_perfgym(name)}
    missing = sorted(n for n in ours if not re.search(rf"\b{re.escape(n)}\b", doc))
    assert missing == [], "draw these in errors.py's docstring"


def test_the_geometric_mean_is_written_once() -> None:
    assert geometric_means_spelled_out(SRC) == []
    assert GEOMEAN_SPELLED.search((SRC / GEOMEAN_HOME).read_text())


def test_the_geometric_mean_refuses_what_has_no_logarithm() -> None:
    from perfgym.errors import ConfigError
    from perfgym.metrics import geometric_mean as metrics_geometric_mean
    from perfgym.timing.estimators import geometric_mean

    assert geometric_mean([2.0, 8.0]) == pytest.approx(4.0)
    assert metrics_geometric_mean([2.0, 8.0]) == pytest.approx(4.0)
    assert geometric_mean(iter([1.5])) == pytest.approx(1.5)  # a generator is read once
    for bad in ([], [1.0, 0.0], [2.0, -1.0], [float("nan")]):
        with pytest.raises(ConfigError, match="speed-up"):
            geometric_mean(bad, "speed-up")


def test_the_guards_see_a_hostile_tree(tmp_path: Path) -> None:
    """A duplicated name, an exception beside the tree (directly or through a builtin error)
    and a geometric mean spelled out again are each reported; the stdlib-only code is not."""
    (tmp_path / "errors.py").write_text("class PerfgymError(Exception):\n    pass\n")
    (tmp_path / "a.py").write_text(
        "class Dup:\n    pass\n\nclass Rogue(ValueError):\n    pass\n\n"
        "class Fine(PerfgymError, KeyError):\n    pass\n"
    )
    (tmp_path / "b.py").write_text(
        "import math\n\nclass Dup:\n    pass\n\nclass Sneaky(Rogue):\n    pass\n\n"
        "def gm(v):\n    return math.exp(sum(math.log(x) for x in v) / len(v))\n"
    )
    inside = tmp_path / "sandbox" / "_inside"
    inside.mkdir(parents=True)
    (inside / "codec.py").write_text("class Allowed(TypeError):\n    pass\n")
    (tmp_path / "c.py").write_text("class Stop(KeyboardInterrupt):\n    pass\n")
    assert defined_twice(tmp_path) == {"Dup": ["a.py", "b.py"]}
    assert exceptions_outside_the_tree(tmp_path) == ["a.py:Rogue", "b.py:Sneaky"]
    assert geometric_means_spelled_out(tmp_path) == ["b.py"]
