"""House-style guards over `src/`: one name per class, one exception tree, one geometric mean,
outcomes compared as enum members, CLI helpers with few parameters.

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


#: A name or attribute holding an outcome: compared with a string literal, it wants an enum.
OUTCOME_NAME = re.compile(r"(status|stage|outcome|state)$")
#: The marker on a line comparing someone else's outcome word (a library's, a foreign API's).
NOT_OURS = "# not ours:"
#: Where the option lists live: a typer command takes one parameter per option by design.
CLI_DIR = "cli/"
#: The most parameters a function in a CLI module (not a command) may take.
MAX_PARAMETERS = 12


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


def _outcome_operand(node: ast.expr) -> bool:
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", None)
    return isinstance(name, str) and bool(OUTCOME_NAME.search(name))


def _string_operand(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return bool(node.elts) and all(_string_operand(e) for e in node.elts)
    return False


def outcome_string_comparisons(root: Path) -> list[str]:
    """`file:line` of each comparison of a status/stage/outcome/state with a string literal
    (==, !=, in, not in), outside the stdlib-only code and the lines marked `# not ours:`."""
    out = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(STDLIB_ONLY):
            continue
        text = path.read_text()
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text, filename=str(path))):
            if not isinstance(node, ast.Compare):
                continue
            if not all(isinstance(op, ast.Eq | ast.NotEq | ast.In | ast.NotIn) for op in node.ops):
                continue
            operands = [node.left, *node.comparators]
            ours = NOT_OURS not in lines[node.lineno - 1]
            if (
                ours
                and any(map(_outcome_operand, operands))
                and any(map(_string_operand, operands))
            ):
                out.append(f"{rel}:{node.lineno}")
    return out


def long_cli_helpers(root: Path) -> list[str]:
    """`file:function (n)` for each function in a CLI module, other than a registered command,
    that takes more than MAX_PARAMETERS parameters (self and cls not counted)."""
    out = []
    for path in sorted((root / CLI_DIR).rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if any(".command" in ast.unparse(d) for d in node.decorator_list):
                continue
            a = node.args
            names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
            n = len([x for x in names if x not in ("self", "cls")])
            if n > MAX_PARAMETERS:
                out.append(f"{rel}:{node.name} ({n})")
    return out


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


def test_outcomes_are_compared_as_enum_members() -> None:
    assert outcome_string_comparisons(SRC) == [], "compare an enum member (enum.StrEnum)"


def test_no_cli_helper_takes_more_than_twelve_parameters() -> None:
    """A command parses its options into a config; what it calls takes the config."""
    assert long_cli_helpers(SRC) == []


def test_the_outcome_and_parameter_guards_see_a_hostile_tree(tmp_path: Path) -> None:
    """A status, stage, outcome or state compared with a string (or strings) is reported; a
    member, a marked foreign word, a number and the stdlib-only code are not. A CLI helper
    with 13 parameters is reported, a command with 30 and a method with 12 + self are not."""
    (tmp_path / "a.py").write_text(
        "def f(v, r, status, job):\n"
        '    if v.status == "ok" or "OK" != r.stage or job.state in ("queued", "running"):\n'
        "        pass\n"
        '    if status not in ["ok"] or v.outcome == Outcome.FASTER or r.status == 404:\n'
        "        pass\n"
        '    if v.exit_status != "Submitted":  # not ours: a library\'s word\n'
        "        pass\n"
    )
    inside = tmp_path / "sandbox" / "_inside"
    inside.mkdir(parents=True)
    (inside / "run.py").write_text('def g(r):\n    return r.status == "ok"\n')
    assert outcome_string_comparisons(tmp_path) == ["a.py:2"] * 3 + ["a.py:4"]
    cli = tmp_path / "cli"
    cli.mkdir()
    many = ", ".join(f"p{i}" for i in range(30))
    (cli / "x_cmd.py").write_text(
        f"@app.command()\ndef cmd({many}):\n    pass\n\n"
        f"def helper({', '.join(f'p{i}' for i in range(13))}):\n    pass\n\n"
        f"class C:\n    def m(self, {', '.join(f'p{i}' for i in range(12))}):\n        pass\n"
    )
    assert long_cli_helpers(tmp_path) == ["cli/x_cmd.py:helper (13)"]


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
