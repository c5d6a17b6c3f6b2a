"""cujit's own bytecode: a version-independent instruction list.

Stage 1 (``decode``) turns CPython 3.11/3.12/3.13 bytecode into this form, so
that no later stage needs to know which interpreter compiled the function.
Jump targets are indices into ``Bytecode.instrs``; every instruction carries
the ``Loc`` of the source it came from.

The instruction set (stack effects as ``before -> after``, TOS rightmost):

    LOAD_CONST value          -> value
    LOAD_FAST name            -> local
    STORE_FAST name     value ->
    LOAD_GLOBAL name          -> global or builtin (frozen by irgen)
    LOAD_DEREF name           -> closure variable (frozen by irgen)
    LOAD_ATTR name        obj -> obj.name   (also method lookups: a bound method)
    LOAD_ASSERTION_ERROR      -> AssertionError
    POP_TOP               x  ->
    COPY n                    -> pushes a copy of the n-th item (1 = TOS)
    SWAP n                    swaps TOS with the n-th item
    UNARY_OP op           x  -> op x           ('-', '+', '~', 'not')
    BINARY_OP op [inplace] a b -> a op b       (op in cujit.ir.BINARY_OPS)
    COMPARE_OP op         a b -> a op b        ('<' ... '!=', 'is', 'is not')
    BINARY_SUBSCR     obj idx -> obj[idx]
    STORE_SUBSCR  v obj idx  ->                 (obj[idx] = v)
    STORE_ATTR name   v obj  ->                 (obj.name = v)
    BUILD_TUPLE n    x1..xn  -> (x1, ..., xn)
    BUILD_LIST n     x1..xn  -> [x1, ..., xn]  (a list display: typed as a constant, if any)
    TUPLE_APPEND n  t .. x   -> t + (x,) .. (t at depth n once x is popped:
                                 a long tuple display, which CPython builds as a list)
    TUPLE_EXTEND n  t .. s   -> t + tuple(s) ..   (``(a, *s)``)
    BUILD_SLICE n   a b [c]  -> slice(a, b[, c])  (3.12's BINARY_SLICE/STORE_SLICE: this + SUBSCR)
    UNPACK_SEQUENCE n    seq -> seq[n-1] ... seq[0]   (seq[0] on top)
    CALL argc [kwnames] f a1..an -> f(...)      (last len(kwnames) args are keywords)
    CALL_STAR           f args -> f(*args)
    DECORATE              d fn -> d(fn)          (``@d`` on a nested function)
    MAKE_FUNCTION           code -> a nested function (attributes set below)
    SET_FUNCTION_ATTRIBUTE flag   value fn -> fn   (1 defaults, 2 kwdefaults,
                                                 4 annotations, 8 closure values)
    GET_ITER              obj -> iter
    FOR_ITER target      iter -> iter value, or pops iter and jumps when exhausted
    JUMP target
    POP_JUMP_IF_TRUE / _FALSE / _NONE / _NOT_NONE target   x ->
    RETURN                 x ->
    RAISE n           exc [cause] ->
"""

from __future__ import annotations

from dataclasses import field
from types import MappingProxyType
from typing import Mapping

from cujit.diagnostics import Loc
from cujit.frozen import frozen


def _empty() -> Mapping[str, object]:
    return MappingProxyType({})


JUMP_OPS = frozenset(
    {
        "JUMP",
        "FOR_ITER",
        "POP_JUMP_IF_TRUE",
        "POP_JUMP_IF_FALSE",
        "POP_JUMP_IF_NONE",
        "POP_JUMP_IF_NOT_NONE",
    }
)
# Instructions after which control never falls through to the next one.
NO_FALLTHROUGH = frozenset({"JUMP", "RETURN", "RAISE"})


@frozen
class Instr:
    """One normalised instruction; ``arg`` is resolved (a name, a value, an
    operator string, a count or a target instruction index)."""

    op: str
    arg: object = None
    loc: Loc = field(default=Loc("<unknown>", 0), compare=False)
    inplace: bool = False  # BINARY_OP only: ``x += y``
    kwnames: tuple[str, ...] = ()  # CALL only

    @property
    def is_jump(self) -> bool:
        return self.op in JUMP_OPS

    @property
    def ends_block(self) -> bool:
        return self.op in JUMP_OPS or self.op in NO_FALLTHROUGH


@frozen
class Bytecode:
    """A decoded function: its instructions plus what irgen needs to freeze
    globals and closure variables."""

    name: str
    arg_names: tuple[str, ...]
    local_names: tuple[str, ...]  # every local, arguments first
    instrs: tuple[Instr, ...]
    loc: Loc  # the ``def`` line
    globals: Mapping[str, object] = field(default_factory=_empty, compare=False)
    builtins: Mapping[str, object] = field(default_factory=_empty, compare=False)
    # Free variables that hold a value; an empty cell is absent.
    closure: Mapping[str, object] = field(default_factory=_empty, compare=False)
    freevars: tuple[str, ...] = ()
    # The function's globals dict itself: the nested functions it makes share it.
    function_globals: dict | None = field(default=None, compare=False)


# A function object's attribute naming the free variables that decode makes its
# leading parameters (the run-time values a nested function captures).
CAPTURED_ATTR = "_cujit_captured"


def _arg_text(ins: Instr) -> str:
    if ins.op == "CALL":
        return f"{ins.arg}" + (f" kw={ins.kwnames!r}" if ins.kwnames else "")
    if ins.op == "BINARY_OP":
        return f"{ins.arg}=" if ins.inplace else str(ins.arg)
    if ins.is_jump:
        return f"-> {ins.arg}"
    if ins.op == "LOAD_CONST":
        return repr(ins.arg)
    return "" if ins.arg is None else str(ins.arg)


def format_instr(index: int, ins: Instr) -> str:
    text = f"{index:4d}  {ins.op:<22s}{_arg_text(ins)}"
    return f"{text:<52s}  # {ins.loc.line}:{ins.loc.col + 1}"


def format_bytecode(bc: Bytecode) -> str:
    """The deterministic listing used by golden tests and ``--emit=bytecode``."""
    lines = [f"bytecode {bc.name}({', '.join(bc.arg_names)})"]
    lines += [format_instr(i, ins) for i, ins in enumerate(bc.instrs)]
    return "\n".join(lines) + "\n"
