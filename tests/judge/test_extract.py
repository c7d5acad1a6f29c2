"""Extraction rules: RLPF JSON, fenced blocks by language, untagged, whole file, NX reasons."""

import json

from perfgym.judge import extract
from perfgym.tasks.task import Language


def test_rlpf_json_answer():
    text = json.dumps({"summary": "faster", "solution_source": "int main(){}"})
    ex = extract(text, Language.CPP)
    assert ex.source == "int main(){}" and ex.rule == "json.solution_source"
    fenced = "```json\n" + text + "\n```"
    assert extract(fenced, Language.CPP).rule == "json.solution_source"


def test_picks_block_in_task_language():
    text = "```bash\nls\n```\n```python\nprint(1)\n```\n```python\nimport sys\nprint(2)\n```"
    ex = extract(text, Language.PYTHON)
    assert ex.source == "import sys\nprint(2)\n" and ex.rule == "fence:python:longest"


def test_untagged_and_whole_file():
    assert extract("```\nprint(1)\n```", Language.PYTHON).rule == "fence:untagged:longest"
    ex = extract("#include <stdio.h>\nint main(){return 0;}", Language.C)
    assert ex.rule == "whole-file" and ex.source.startswith("#include")


def test_nx_reasons():
    assert extract("", Language.GO).reason == "empty answer"
    ex = extract("```rust\nfn main(){}\n```", Language.GO)
    assert not ex.ok and "no code block in go" in ex.reason and "rust" in ex.reason
    assert (
        extract("I cannot help with that.", Language.JAVA).reason == "no code found in the answer"
    )
    assert not extract('{"summary": "x", "solution_source": ""}', Language.C).ok
