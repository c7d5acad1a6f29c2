"""Every Python block in README.md and docs/ runs as written, or says it is a fragment.

A block is a fragment when the line before its fence is `<!-- fragment: why -->` (it needs a
running service, a trainer, a model or data the reader brings). Every other block runs in a
fresh interpreter; the blocks of one page run in order in one scratch folder, so a later block
may read what an earlier one wrote. The README's own "In Python" block has its own test
(test_readme_snippet.py) and is run there."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)
FRAGMENT = re.compile(r"<!-- fragment: [^>]+-->\s*$")


def blocks(page: Path) -> list[tuple[int, str, bool]]:
    """(line, code, is a fragment) of each python block of `page`."""
    text = page.read_text()
    out = []
    for m in FENCE.finditer(text):
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        line = text.count("\n", 0, m.start()) + 1
        out.append((line, m.group(1), bool(FRAGMENT.search(before))))
    return out


PAGES = sorted(p for p in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")] if blocks(p))


def test_every_fragment_is_still_python():
    """A fragment is not run, but it is valid Python (an `await` outside a function was not)."""
    for page in PAGES:
        for line, code, fragment in blocks(page):
            if fragment:
                try:
                    compile(code, f"{page.name}:{line}", "exec")
                except SyntaxError as exc:
                    pytest.fail(f"{page.name}:{line}: {exc}")


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("page", [p for p in PAGES if p.name != "README.md"], ids=lambda p: p.name)
def test_the_blocks_of_a_page_run(page: Path, tmp_path: Path) -> None:
    runnable = [(line, code) for line, code, fragment in blocks(page) if not fragment]
    if not runnable:
        pytest.skip(f"{page.name}: fragments only")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PERFGYM_DOCS_ROOT": str(ROOT)}
    for line, code in runnable:
        done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=600)  # fmt: skip
        assert done.returncode == 0, f"{page.name}:{line}:\n{done.stderr[-3000:]}"
