"""A command whose optional dependency is not installed says so in one line, with the extra that
installs it (it printed a raw ModuleNotFoundError traceback for `openai`)."""

from __future__ import annotations

import subprocess
import sys

BLOCK = """
import sys
class _Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == {name!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, _Blocked())
sys.argv = ["perfgym", *{argv!r}]
from perfgym.cli import main
main()
"""


def _run(blocked: str, argv: list[str], cwd) -> subprocess.CompletedProcess[str]:  # type: ignore[no-untyped-def]
    code = BLOCK.format(name=blocked, argv=argv)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=cwd, timeout=300)  # fmt: skip


def test_generate_without_openai_names_the_llm_extra(tmp_path):
    r = _run("openai", ["generate", "perfgym-core", "--model", "scripted", "--limit", "1",
                        "-o", str(tmp_path / "c.jsonl")], tmp_path)  # fmt: skip
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2, r.stderr
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert "'openai'" in lines[0] and "pip install 'perfgym[llm]'" in lines[0], lines[0]
    assert list(tmp_path.iterdir()) == [], "nothing is written before the error"


def test_an_unknown_missing_module_is_not_dressed_up(tmp_path):
    """Only optional dependencies get the install line; anything else is a real bug."""
    from perfgym.cli import missing_extra

    assert missing_extra(ModuleNotFoundError("No module named 'nosuch'", name="nosuch")) is None
    line = missing_extra(ModuleNotFoundError("x", name="ray.util"))
    assert line is not None and "perfgym[service]" in line
