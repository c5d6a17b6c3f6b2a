"""Stage 1: decode a Python function's CPython bytecode into cujit's own
instruction list (see ``instr.py`` for the instruction set).

Every CPython 3.11/3.12/3.13 difference is absorbed here: caches, RESUME,
NULL pushes, PRECALL/KW_NAMES/CALL_KW, superinstructions, RETURN_CONST,
forward/backward jump variants, FOR_ITER/END_FOR layouts, TO_BOOL, and the
3.11 JUMP_IF_*_OR_POP, which becomes ``COPY 1; POP_JUMP_IF_*; POP_TOP`` as
3.12 spells it.  Nothing after this stage tests ``sys.version_info``.
"""

from __future__ import annotations

import builtins
import dis
import inspect
import sys
from types import MappingProxyType

from cujit.bytecode.instr import CAPTURED_ATTR, Bytecode, Instr
from cujit.bytecode.unsupported import (
    MESSAGES,
    TRY_MESSAGE,
    flags_message,
    nested_function_message,
)
from cujit.diagnostics import Loc, UnsupportedError
from cujit.hints import hint

# Bookkeeping that has no meaning once NULLs and caches are gone.
_DROP = frozenset(
    {
        "CACHE",
        "RESUME",
        "NOP",
        "PRECALL",
        "PUSH_NULL",
        "EXTENDED_ARG",
        "COPY_FREE_VARS",
        "MAKE_CELL",
        "TO_BOOL",
        "END_FOR",
    }
)
_RENAME = {
    "LOAD_FAST_CHECK": "LOAD_FAST",
    "LOAD_METHOD": "LOAD_ATTR",
    "RETURN_VALUE": "RETURN",
    "JUMP_FORWARD": "JUMP",
    "JUMP_BACKWARD": "JUMP",
    "JUMP_BACKWARD_NO_INTERRUPT": "JUMP",
    "JUMP_NO_INTERRUPT": "JUMP",
}
# Opcodes whose CPython name and stack effect are already ours; arg is argval.
_SAME = frozenset(
    {
        "LOAD_CONST",
        "LOAD_FAST",
        "STORE_FAST",
        "LOAD_GLOBAL",
        "LOAD_ATTR",
        "POP_TOP",
        "COPY",
        "SWAP",
        "BINARY_SUBSCR",
        "STORE_SUBSCR",
        "STORE_ATTR",
        "BUILD_TUPLE",
        "UNPACK_SEQUENCE",
        "GET_ITER",
        "LOAD_ASSERTION_ERROR",
        "RETURN",
        "JUMP",
        "FOR_ITER",
    }
)
_UNARY = {"UNARY_NEGATIVE": "-", "UNARY_POSITIVE": "+", "UNARY_INVERT": "~", "UNARY_NOT": "not"}
# NB_* order of BINARY_OP's argument (the same in 3.11-3.13); 13+ are the inplace forms.
_NB_OPS = ("+", "&", "//", "<<", "@", "*", "%", "|", "**", ">>", "-", "/", "^")
# 3.13's END_FOR pops only the value; the POP_TOP after it pops the iterator.
_POPS_AFTER_END_FOR = 1 if sys.version_info >= (3, 13) else 0


def _locs(raw: list[dis.Instruction], filename: str, default: Loc) -> list[Loc]:
    out, last = [], default
    for ins in raw:
        p = ins.positions
        if p is not None and p.lineno is not None:
            end = p.end_col_offset if p.end_lineno == p.lineno else None
            last = Loc(filename, p.lineno, p.col_offset or 0, end)
        out.append(last)
    return out


def _within(inner: Loc, stmt: Loc) -> bool:
    """Whether ``inner`` starts inside the statement that starts at ``stmt``: the jump
    before an ``assert`` is its own condition's only then (``assert False`` has no
    test, and the jump before it is an enclosing ``if``'s)."""
    return (inner.line, inner.col) >= (stmt.line, stmt.col)


def _protected_offsets(code) -> set[int]:
    """Offsets covered by the exception table: the body of a try or with."""
    parse = getattr(dis, "_parse_exception_table", None)
    if parse is None:  # pragma: no cover - present in 3.11-3.13
        return {0} if code.co_exceptiontable else set()
    return {o for e in parse(code) for o in range(e.start, e.end, 2)}


def _raise_early(raw, locs, code, def_loc: Loc, device: bool) -> None:
    """Errors about the function as a whole, reported before any other."""
    msg = flags_message(code.co_flags, code, device)
    if msg is not None:
        at = next((locs[i] for i, x in enumerate(raw) if x.opname == "YIELD_VALUE"), def_loc)
        raise UnsupportedError(msg, at if "yield" in msg else def_loc)
    for i, ins in enumerate(raw):
        if ins.opname == "CALL_FUNCTION_EX" and ins.arg & 1:  # before `**kw`'s BUILD_MAP
            raise UnsupportedError(MESSAGES["CALL_FUNCTION_EX"], locs[i])
        if ins.opname == "MAKE_FUNCTION":
            prev = raw[i - 1].argval if i else None
            msg = nested_function_message(getattr(prev, "co_name", None), prev)
            if msg is not None:
                raise UnsupportedError(msg, locs[i])


def _try_loc(raw, locs, i: int) -> Loc:
    # The `try:` line survives as a NOP just before the protected range.
    return locs[i - 1] if i and raw[i - 1].opname == "NOP" else locs[i]


_NONLOCAL = "assigning to a 'nonlocal' variable is not supported in kernels"


def _cell_access(name: str, var: str, code, captured: tuple[str, ...], loc: Loc):
    """A cell's load or store.  The function's own cell variables (the ones nested
    functions capture) are plain locals, and ``LOAD_CLOSURE`` loads the value: a
    nested function captures values, not cells.  Free variables are the closure's
    (frozen by irgen), or parameters where ``captured`` names them."""
    if var in code.co_freevars and name == "STORE_DEREF":
        raise UnsupportedError(_NONLOCAL, loc)
    if var in code.co_freevars and var not in captured:
        return ("LOAD_DEREF", var)
    return ("STORE_FAST" if name == "STORE_DEREF" else "LOAD_FAST", var)


def _fast_access(op: str, var: str, code, captured: tuple[str, ...], loc: Loc):
    """A LOAD_FAST/STORE_FAST.  3.13 spells ``LOAD_CLOSURE`` of a free variable (the
    function's own closure, passed on to a nested function) as ``LOAD_FAST``."""
    if op == "LOAD_FAST" and var in code.co_freevars:
        return _cell_access("LOAD_CLOSURE", var, code, captured, loc)
    return (op, var)


_LIST_OPS = frozenset({"LIST_APPEND", "LIST_EXTEND"})
_SKIP_BACK = frozenset({"PRECALL", "CACHE", "EXTENDED_ARG", "KW_NAMES"})


def _decorator_call(raw, i: int) -> bool:
    """Whether the CALL 0 at ``i`` applies a decorator to the function made just
    before it: no NULL lies below that function's inputs (``(lambda: 1)()`` has one,
    before them in 3.11/3.12, after MAKE_FUNCTION in 3.13)."""
    j = i - 1
    while j >= 0 and raw[j].opname in _SKIP_BACK:
        j -= 1
    if j < 0 or raw[j].opname not in ("MAKE_FUNCTION", "SET_FUNCTION_ATTRIBUTE"):
        return False
    need = 1  # walk back over the instructions that leave the function on the stack
    while j >= 0 and need > 0:
        x = raw[j]
        need -= dis.stack_effect(x.opcode, x.arg if x.opcode >= dis.HAVE_ARGUMENT else None)
        j -= 1
    below = raw[j] if j >= 0 else None
    return not (
        below is None
        or below.opname == "PUSH_NULL"
        or (below.opname in ("LOAD_GLOBAL", "LOAD_ATTR") and below.argrepr.startswith("NULL"))
    )


def _ends_tuple(ins) -> bool:
    return ins.opname == "LIST_TO_TUPLE" or (
        ins.opname == "CALL_INTRINSIC_1" and ins.argrepr == "INTRINSIC_LIST_TO_TUPLE"
    )


def _tuple_displays(raw) -> set[int]:
    """Indices of the BUILD_LIST/LIST_APPEND/LIST_EXTEND/LIST_TO_TUPLE instructions
    that build a tuple display: CPython builds a long one (or one with ``*x``) as a
    list turned into a tuple, with no jump in between."""
    out: set[int] = set()
    for i, ins in enumerate(raw):
        if ins.opname != "BUILD_LIST":
            continue
        depth, used = 1, [i]
        for j in range(i + 1, len(raw)):
            x = raw[j]
            if depth == 1 and _ends_tuple(x):
                out.update(used + [j])
                break
            if x.opname in _LIST_OPS and x.arg == depth - 1:
                used.append(j)
            elif x.opname in _LIST_OPS or x.opname == "BUILD_LIST" or "JUMP" in x.opname:
                break
            depth += dis.stack_effect(x.opcode, x.arg if x.opcode >= dis.HAVE_ARGUMENT else None)
            if depth < 1:
                break
    return out


def _translate(raw, locs, code, captured=()) -> list[tuple[int, Instr]]:  # noqa: C901 -- one branch per CPython opcode family; a table would scatter the per-version decoding of stage 1
    """CPython instructions -> (origin offset, Instr) with targets still offsets."""
    out: list[tuple[int, Instr]] = []
    protected = _protected_offsets(code)
    kwnames: tuple[str, ...] = ()
    in_assert = False
    assert_loc = None  # where a failed assert's RAISE points: its condition
    skip_pops = 0
    tuple_lists = _tuple_displays(raw)
    decorated = -1  # len(out) just after a decorator's call
    for i, ins in enumerate(raw):
        name, loc, off = ins.opname, locs[i], ins.offset
        if i in tuple_lists:  # a tuple display built as a list: a tuple throughout
            if not _ends_tuple(ins):
                what = {"BUILD_LIST": "BUILD_TUPLE", "LIST_APPEND": "TUPLE_APPEND"}
                out.append((off, Instr(what.get(name, "TUPLE_EXTEND"), ins.arg, loc)))
            continue
        if off in protected and name not in _DROP:
            at = _try_loc(raw, locs, i)
            raise UnsupportedError(MESSAGES.get(name, TRY_MESSAGE), at)
        if name == "POP_TOP" and skip_pops:
            skip_pops -= 1
            continue
        skip_pops = _POPS_AFTER_END_FOR if name == "END_FOR" else 0
        if name in _DROP:
            continue
        if name == "BUILD_LIST":  # a display of its items; appends and extends are refused
            out.append((off, Instr("BUILD_LIST", ins.arg, loc)))
            continue
        if name in MESSAGES and name != "CALL_FUNCTION_EX":  # f(*args) is kept; **kw is not
            raise UnsupportedError(
                MESSAGES[name], loc, hint=hint("global-store") if name == "STORE_GLOBAL" else None
            )
        name = _RENAME.get(name, name)

        def emit(op, arg=None, **kw):
            out.append((off, Instr(op, arg, loc, **kw)))  # noqa: B023 -- called within this iteration

        if name in ("LOAD_FAST", "STORE_FAST"):
            emit(*_fast_access(name, ins.argval, code, captured, loc))
        elif name in _SAME:
            emit(name, ins.argval)
            if name == "LOAD_ASSERTION_ERROR":
                in_assert = True
                # 3.11 places the RAISE at the condition, 3.12 at the whole statement
                # and 3.13 at the condition again; the jump that tests the condition
                # is at the condition on all three.
                if i and raw[i - 1].opname.startswith("POP_JUMP_") and _within(locs[i - 1], loc):
                    assert_loc = locs[i - 1]
        elif name == "BUILD_SLICE":
            emit("BUILD_SLICE", ins.arg)
        elif name in ("BINARY_SLICE", "STORE_SLICE"):  # 3.12+: obj[a:b] in one opcode
            emit("BUILD_SLICE", 2)
            emit("BINARY_SUBSCR" if name == "BINARY_SLICE" else "STORE_SUBSCR")
        elif name == "RETURN_CONST":
            emit("LOAD_CONST", ins.argval)
            emit("RETURN")
        elif name in ("LOAD_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST", "STORE_FAST_LOAD_FAST"):
            first, second = name.split("_FAST_")[0], name.split("_FAST_")[1].replace("_FAST", "")
            emit(*_fast_access(first + "_FAST", ins.argval[0], code, captured, loc))
            emit(*_fast_access(second + "_FAST", ins.argval[1], code, captured, loc))
        elif name.startswith("POP_JUMP_"):
            cond = name.replace("_FORWARD", "").replace("_BACKWARD", "")
            emit(cond, ins.argval)
        elif name in ("JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP"):
            emit("COPY", 1)
            emit("POP_JUMP_IF_" + name.split("_")[2], ins.argval)
            emit("POP_TOP")
        elif name in _UNARY:
            emit("UNARY_OP", _UNARY[name])
        elif name == "CALL_INTRINSIC_1" and ins.argrepr == "INTRINSIC_UNARY_POSITIVE":
            emit("UNARY_OP", "+")
        elif name == "BINARY_OP":
            op = _NB_OPS[ins.arg % len(_NB_OPS)]
            if op == "@":
                raise UnsupportedError("the '@' operator is not supported in kernels", loc)
            emit("BINARY_OP", op, inplace=ins.arg >= len(_NB_OPS))
        elif name == "COMPARE_OP":
            # dis already undoes the 3.12 (arg>>4) and 3.13 (arg>>5) encodings.
            assert ins.argval in dis.cmp_op, ins.argval
            emit("COMPARE_OP", ins.argval)
        elif name == "IS_OP":
            emit("COMPARE_OP", "is not" if ins.arg else "is")
        elif name == "CONTAINS_OP":
            emit("COMPARE_OP", "not in" if ins.arg else "in")
        elif name == "KW_NAMES":
            kwnames = code.co_consts[ins.arg]
        elif name in ("CALL", "CALL_KW"):
            if name == "CALL_KW":  # 3.13 pushes the names as a constant just before
                _, prev = out.pop()
                kwnames = prev.arg
            argc = ins.arg
            nxt = raw[i + 1].opname if i + 1 < len(raw) else None
            if in_assert and nxt == "RAISE_VARARGS":
                # AssertionError(msg) is compiled as CALL 0 with msg in the `self` slot.
                argc, in_assert = argc + 1, False
            if argc == 0 and (decorated == len(out) or _decorator_call(raw, i)):
                # ``@d def f``: d is called on the function with no NULL below it
                emit("DECORATE")
                decorated = len(out)
            else:
                emit("CALL", argc, kwnames=tuple(kwnames))
            kwnames = ()
        elif name == "RAISE_VARARGS":
            if ins.arg == 0:
                raise UnsupportedError(
                    "re-raising with a bare 'raise' is not supported in kernels", loc
                )
            if assert_loc is not None:
                loc, assert_loc = assert_loc, None
            emit("RAISE", ins.arg)
            in_assert = False
        elif name in ("LOAD_DEREF", "STORE_DEREF", "LOAD_CLOSURE"):
            emit(*_cell_access(name, ins.argval, code, captured, loc))
        elif name == "MAKE_FUNCTION":  # 3.11/3.12 take the attributes' flags here
            emit("MAKE_FUNCTION")
            for flag in (8, 4, 2, 1):  # the closure sits nearest the code, defaults deepest
                if (ins.arg or 0) & flag:
                    emit("SET_FUNCTION_ATTRIBUTE", flag)
        elif name == "SET_FUNCTION_ATTRIBUTE":  # 3.13
            emit("SET_FUNCTION_ATTRIBUTE", ins.arg)
        elif name == "CALL_FUNCTION_EX":  # f(*args); **kwargs was refused early
            emit("CALL_STAR")
        else:
            raise UnsupportedError(f"unsupported Python construct (bytecode {name})", loc)
    return out


def _resolve_targets(pairs: list[tuple[int, Instr]], raw) -> tuple[Instr, ...]:
    """Jump targets: CPython offsets -> indices of our instructions.  A target whose
    instruction was dropped lands on the next one kept."""
    index_at: dict[int, int] = {}
    j = 0
    for ins in raw:
        while j < len(pairs) and pairs[j][0] < ins.offset:
            j += 1
        index_at[ins.offset] = j
    out = []
    for _, ins in pairs:
        if ins.is_jump:
            ins = Instr(ins.op, index_at[ins.arg], ins.loc, ins.inplace, ins.kwnames)
        out.append(ins)
    return tuple(out)


def _closure(fn) -> dict[str, object]:
    out = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True):
        try:
            out[name] = cell.cell_contents
        except ValueError:  # an empty cell: reported by irgen if read
            pass
    return out


def decode(fn, device: bool = True) -> Bytecode:
    """Decode the Python function ``fn`` into a ``Bytecode``; ``device=False``: a kernel,
    whose parameters must all be positional (a device function may take ``*args``)."""
    fn = getattr(fn, "py_func", fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        raise TypeError(f"cannot compile {fn!r}: not a Python function")
    def_loc = Loc(code.co_filename, code.co_firstlineno, 0)
    raw = list(dis.get_instructions(code))
    locs = _locs(raw, code.co_filename, def_loc)
    _raise_early(raw, locs, code, def_loc, device)
    # A nested function's free variables that hold run-time values: leading parameters.
    captured = tuple(getattr(fn, CAPTURED_ATTR, ()))
    instrs = _resolve_targets(_translate(raw, locs, code, captured), raw)
    nargs = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & inspect.CO_VARARGS)
    cells = tuple(v for v in code.co_cellvars if v not in code.co_varnames)
    fn_builtins = getattr(fn, "__builtins__", builtins.__dict__)
    if not isinstance(fn_builtins, dict):
        fn_builtins = vars(fn_builtins)
    return Bytecode(
        name=code.co_name,
        arg_names=captured + tuple(code.co_varnames[:nargs]),
        local_names=captured + tuple(code.co_varnames) + cells,
        instrs=instrs,
        loc=def_loc,
        globals=MappingProxyType(fn.__globals__),
        function_globals=fn.__globals__,
        builtins=MappingProxyType(fn_builtins),
        closure=MappingProxyType(_closure(fn)),
        freevars=tuple(code.co_freevars),
    )
