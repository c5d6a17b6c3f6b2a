"""A variable given two types that do not unify: the message names the variable, and,
where one side is ``None``, points at the assignment that gives it the other type (the
loop header or the merge point, where the conflict is found, is rarely the line to fix).
"""

from __future__ import annotations

import ast
import linecache

from cujit.diagnostics import Loc
from cujit.infer.numeric import describe
from cujit.ir import Function
from cujit.types import Array, NoneType, Scalar, Tuple, Type


def variable_name(fn: Function, value_id: int) -> str | None:
    """The Python variable an SSA value (a block parameter, an assignment) holds."""
    return next((n for vid, n in fn.var_names if vid == value_id), None)


def conflict(old: Type, new: Type, name: str | None = None) -> str:
    if name is not None:
        what = f"variable {name!r}"
    else:
        what = "a variable" if isinstance(old, (Scalar, Array, Tuple)) else "a name"
    return (
        f"{what} holds {describe(old)} on one path and {describe(new)} on another; "
        "give it one type on every path"
    )


def assignment_loc(fn: Function, name: str | None, old: Type, new: Type) -> Loc | None:
    """Where ``name`` is given its value of the type that is not None, when the other
    side of the conflict is None: the first such assignment in the function's source."""
    if name is None or isinstance(old, NoneType) == isinstance(new, NoneType):
        return None
    node = _function_node(fn)
    if node is None:
        return None
    for stmt in _statements(node):
        if _assigns(stmt, name) and not _is_none(getattr(stmt, "value", None)):
            same_line = stmt.end_lineno == stmt.lineno
            return Loc(
                fn.loc.file,
                stmt.lineno,
                stmt.col_offset,
                stmt.end_col_offset if same_line else None,
            )
    return None


def _function_node(fn: Function) -> ast.FunctionDef | None:
    source = "".join(linecache.getlines(fn.loc.file))
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    found = None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.FunctionDef)
            and node.name == fn.name
            and _first_line(node) <= fn.loc.line <= (node.end_lineno or node.lineno)
        ):
            if found is None or node.lineno > found.lineno:  # the innermost
                found = node
    return found


def _first_line(node: ast.FunctionDef) -> int:
    return min([node.lineno, *(d.lineno for d in node.decorator_list)])


def _statements(node: ast.FunctionDef):
    """The function's own statements in source order (not those of nested functions)."""
    todo = list(reversed(node.body))
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        yield stmt
        for field in ("orelse", "finalbody", "body"):
            todo.extend(reversed(getattr(stmt, field, None) or []))
        for handler in getattr(stmt, "handlers", None) or []:
            todo.extend(reversed(handler.body))


def _assigns(stmt: ast.stmt, name: str) -> bool:
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        targets = [stmt.target]
    else:
        return False
    return any(isinstance(t, ast.Name) and t.id == name for t in targets)


def _is_none(value: ast.expr | None) -> bool:
    return isinstance(value, ast.Constant) and value.value is None
