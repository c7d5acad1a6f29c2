"""Reading Python's spellings of one thing as that thing: a string joined, reversed or built in
an f-string of constants (`folded`), and an attribute read through a constant name
(`Spelled`: `getattr(o, "name")`, `vars(o)["name"]`, `o.__dict__["name"]` are `o.name`).
The static checks read names and attributes; red teams helper-111 and helper-112 spelled them
another way (`'_py' + 'test.reports'`, `"tsetyp"[::-1]`, `getattr(gc, "get_objects")`)."""

from __future__ import annotations

import ast


def folded(node: ast.AST) -> str | None:
    """The text a constant string expression joins to (`'a' + 'b'`, an f-string of constants),
    or None."""
    if isinstance(node, ast.Constant):
        v = node.value
        return v.decode("latin-1") if isinstance(v, bytes) else v if isinstance(v, str) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = folded(node.left), folded(node.right)
        return left + right if left is not None and right is not None else None
    if (  # "".join(("_py", "test"))
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "join"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.List | ast.Tuple)
    ):
        sep = folded(node.func.value)
        parts = [folded(e) for e in node.args[0].elts]
        if sep is None or any(p is None for p in parts):
            return None
        return sep.join(parts)  # type: ignore[arg-type]
    if (  # "tsetyp"[::-1]
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Slice)
        and node.slice.lower is None
        and node.slice.upper is None
        and isinstance(node.slice.step, ast.UnaryOp)
        and isinstance(node.slice.step.op, ast.USub)
        and isinstance(node.slice.step.operand, ast.Constant)
        and node.slice.step.operand.value == 1
    ):
        text = folded(node.value)
        return text[::-1] if text is not None else None
    if isinstance(node, ast.JoinedStr):
        parts = [folded(v.value if isinstance(v, ast.FormattedValue) else v) for v in node.values]
        return "".join(parts) if all(p is not None for p in parts) else None  # type: ignore[arg-type]
    return None


class Spelled(ast.NodeTransformer):
    """An attribute read through a constant name written as one: `getattr(o, "name")`,
    `vars(o)["name"]` and `o.__dict__["name"]` become `o.name`, so every check that reads
    attributes reads these too (red team helper-112: `getattr(gc, "get_objects")`,
    `getattr(frame, "f_globals")`, names spelled backwards)."""

    def _attribute(self, owner: ast.expr, key: ast.AST, like: ast.AST) -> ast.AST | None:
        name = folded(key)
        if name is None or not name.isidentifier():
            return None
        return ast.copy_location(ast.Attribute(value=owner, attr=name, ctx=ast.Load()), like)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Name) and f.id == "getattr" and len(node.args) in (2, 3):
            return self._attribute(node.args[0], node.args[1], node) or node
        return node

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        self.generic_visit(node)
        v = node.value
        if isinstance(node.ctx, ast.Load) and (
            (isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "vars"
             and len(v.args) == 1)
            or (isinstance(v, ast.Attribute) and v.attr == "__dict__")
        ):  # fmt: skip
            owner = v.args[0] if isinstance(v, ast.Call) else v.value
            return self._attribute(owner, node.slice, node) or node
        return node
