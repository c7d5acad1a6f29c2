"""Reading HumanEval-style Python prompts: the entry point's signature."""

from __future__ import annotations

import ast


def signature_of(prompt: str, entry_point: str) -> str:
    """The `def` header of `entry_point` in `prompt` (all its lines, up to the colon).

    Falls back to the whole prompt when the function is not found, so that a model is never
    shown less than the benchmark itself shows.
    """
    try:
        tree = ast.parse(prompt)
    except SyntaxError:
        return prompt
    lines = prompt.splitlines()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == entry_point:
            first = node.lineno - 1
            if node.decorator_list:
                first = node.decorator_list[0].lineno - 1
            # The header ends on the line before the body starts (the docstring, usually).
            last = max(node.body[0].lineno - 1, node.lineno)
            return "\n".join(lines[first:last]).strip()
    return prompt
