"""The helpers a task's prompt defines, for test code that calls them: taken from the task's own
source, so a candidate that redefines one (HumanEval/32's `poly`) cannot decide its tests."""

from __future__ import annotations

import ast
import builtins


def free_names(code: str) -> set[str]:
    """Names `code` reads that it never binds and that are not built-ins (what an assertion
    test's namespace would look up elsewhere)."""
    tree = ast.parse(code)
    bound: set[str] = set()
    read: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return {n for n in read - bound if not hasattr(builtins, n)}


def helpers_for(test: str, trusted_source: str, entry_point: str) -> str:
    """The top-level statements of `trusted_source` (the task's prompt and canonical solution)
    that `test` needs: its imports, and the definitions of the names `test` reads without
    defining, other than the entry point (the candidate's to supply). '' when it needs none."""
    wanted = free_names(test) - {entry_point}
    tree = ast.parse(trusted_source)
    defined = {
        node.name
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    if not wanted & defined:
        return ""
    kept = [
        ast.unparse(node)
        for node in tree.body
        if isinstance(node, (ast.Import, ast.ImportFrom))
        or (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and node.name != entry_point
        )
    ]
    return "\n\n".join(kept) + "\n\n"
