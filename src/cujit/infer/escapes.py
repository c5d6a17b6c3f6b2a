"""numba's rule for nested functions that escape, checked on the untyped IR before typing.

A nested function passed as an argument (``consumer(inner, 1)``) escapes the function
that makes it.  numba compiles such a function on its own, with each captured variable
frozen to its one constant value, and refuses the others before typing anything:

- a variable assigned more than once ("Cannot capture a constant value for variable
  'x' as there are multiple definitions present"): which assignment the function sees
  would depend on when it runs, as Python's cells do;
- a variable holding a run-time value ("Cannot capture the non-constant value
  associated with variable 'z' in a function that may escape").

cujit can pass a run-time capture along with the function (``infer/closures.py``'s
``ClosureType``): ``Options.escaping_captures`` (``jit(escaping_captures=True)``)
turns that on, and the second rule off.  A nested function called where it is made
may capture anything.
"""

from __future__ import annotations

from cujit.diagnostics import TypingError
from cujit.ir import DECORATE, MAKE_FUNCTION, SET_FUNCTION_ATTRIBUTE, Call, Const, Function, Op

_CLOSURE = 8  # SET_FUNCTION_ATTRIBUTE's flag for the closure's values


def check_escaping_captures(fn: Function, allow_runtime: bool) -> None:
    """Raise numba's TypingError for the first escaping nested function of ``fn`` that
    captures a variable it may not."""
    defs = {op.result.id: op for b in fn.blocks for op in b.ops if op.result is not None}
    consts = {vid: op.value for vid, op in defs.items() if isinstance(op, Const)}
    made = _made_functions(fn, defs, consts)
    if not made:
        return
    escaping = _escaping(fn, consts, made)
    for vid in sorted(escaping):
        make, closure = made[vid]
        if closure is not None:
            _check_captures(fn, defs, make, closure, allow_runtime)


def _callee(op: Op, consts: dict) -> object:
    return consts.get(op.func.id) if isinstance(op, Call) else None


def _made_functions(fn: Function, defs: dict, consts: dict) -> dict:
    """Each value that is a nested function -> (its make_function call, the closure
    tuple's defining op or None)."""
    made: dict[int, tuple[Call, Op | None]] = {}
    for b in fn.blocks:
        for op in b.ops:
            callee = _callee(op, consts)
            if callee is MAKE_FUNCTION:
                made[op.result.id] = (op, None)
            elif callee in (SET_FUNCTION_ATTRIBUTE, DECORATE):
                func = op.args[0] if callee is SET_FUNCTION_ATTRIBUTE else op.args[1]
                if func.id not in made:
                    continue
                make, closure = made[func.id]
                if callee is SET_FUNCTION_ATTRIBUTE and consts.get(op.args[1].id) == _CLOSURE:
                    closure = defs.get(op.args[2].id)
                made[op.result.id] = (make, closure)
    _through_edges(fn, made)
    return made


def _through_edges(fn: Function, made: dict) -> None:
    """A block parameter fed a nested function holds it too."""
    changed = True
    while changed:
        changed = False
        for b in fn.blocks:
            for target, args in b.term.successors():
                for p, a in zip(fn.block(target).params, args, strict=True):
                    if a.id in made and p.id not in made:
                        made[p.id] = made[a.id]
                        changed = True


def _escaping(fn: Function, consts: dict, made: dict) -> set[int]:
    """The nested-function values passed as an argument of a call."""
    out: set[int] = set()
    for b in fn.blocks:
        for op in b.ops:
            if not isinstance(op, Call) or _callee(op, consts) in (
                SET_FUNCTION_ATTRIBUTE,
                DECORATE,
            ):
                continue
            for v in (*op.args, *(v for _, v in op.kwargs)):
                if v.id in made:
                    out.add(v.id)
    return out


def _check_captures(fn: Function, defs: dict, make: Call, closure: Op, allow_runtime: bool):
    code = _code_of(make, defs)
    items = getattr(closure, "items", None)
    if code is None or items is None:
        return
    assigned: dict[str, int] = {}
    params = {p.id for b in fn.blocks for p in b.params}
    for vid, name in fn.var_names:
        if vid not in params:
            assigned[name] = assigned.get(name, 0) + 1
    for name, v in zip(code.co_freevars, items, strict=False):
        if assigned.get(name, 0) > 1:
            raise TypingError(
                f"Cannot capture a constant value for variable '{name}' as there are "
                f"multiple definitions present (nested function '{code.co_name}' is "
                "passed on, so it must capture one value)",
                make.loc,
            )
        if not allow_runtime and not isinstance(defs.get(v.id), Const):
            raise TypingError(
                f"Cannot capture the non-constant value associated with variable "
                f"'{name}' in a function that may escape (nested function "
                f"'{code.co_name}' is passed on)",
                make.loc,
                hint="capture only constants, or pass the value as an argument; "
                "jit(escaping_captures=True) lets cujit pass run-time captures along",
            )


def _code_of(make: Call, defs: dict):
    op = defs.get(make.args[0].id)
    return op.value if isinstance(op, Const) else None
