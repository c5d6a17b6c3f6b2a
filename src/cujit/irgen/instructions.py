"""Stage 3, per instruction: cujit bytecode -> untyped SSA ops.

Straight-line instructions update the abstract ``State`` (locals and stack)
and emit ops into the current block; the last instruction of a CFG block
becomes the IR block's terminator.  Globals and closure variables are frozen
into ``Const`` ops holding the Python object seen at compile time.
"""

from __future__ import annotations

from cujit.bytecode import Instr
from cujit.cfg import BasicBlock
from cujit.diagnostics import CompileError, TypingError
from cujit.ir import (
    CALL_STAR,
    DECORATE,
    LIST_DISPLAY,
    MAKE_FUNCTION,
    SET_FUNCTION_ATTRIBUTE,
    TUPLE_CONCAT,
    BinOp,
    Branch,
    BuildTuple,
    Call,
    Compare,
    Const,
    GetAttr,
    GetItem,
    GetIter,
    IterNext,
    IterValid,
    IterValue,
    Jump,
    Raise,
    Return,
    SetAttr,
    SetItem,
    TupleGet,
    UnaryOp,
    Undef,
)
from cujit.irgen.builder import IRBuilder, State


def _load_fast(b: IRBuilder, st: State, ins: Instr) -> None:
    v = st.locals.get(ins.arg)
    st.push(v if v is not None else b.emit(Undef, ins.loc, name=ins.arg))


def _store_fast(b: IRBuilder, st: State, ins: Instr) -> None:
    st.locals[ins.arg] = v = st.pop()
    b.var_names[(v.id, ins.arg)] = None


def _load_global(b: IRBuilder, st: State, ins: Instr) -> None:
    name = ins.arg
    if name in b.bc.globals:
        value = b.bc.globals[name]
    elif name in b.bc.builtins:
        value = b.bc.builtins[name]
    else:
        # A TypingError with Python's words, as numba reports an unknown global.
        raise TypingError(f"NameError: name '{name}' is not defined", ins.loc)
    st.push(b.emit(Const, ins.loc, value=value))


def _load_deref(b: IRBuilder, st: State, ins: Instr) -> None:
    if ins.arg not in b.bc.closure:
        raise CompileError(f"free variable '{ins.arg}' referenced before assignment", ins.loc)
    st.push(b.emit(Const, ins.loc, value=b.bc.closure[ins.arg]))


def _copy(b: IRBuilder, st: State, ins: Instr) -> None:
    st.push(st.stack[-ins.arg])


def _swap(b: IRBuilder, st: State, ins: Instr) -> None:
    s, n = st.stack, ins.arg
    s[-1], s[-n] = s[-n], s[-1]


def _binary(cls):
    def handler(b: IRBuilder, st: State, ins: Instr) -> None:
        rhs, lhs = st.pop(), st.pop()
        st.push(b.emit(cls, ins.loc, op=ins.arg, lhs=lhs, rhs=rhs))

    return handler


def _store_subscr(b: IRBuilder, st: State, ins: Instr) -> None:
    index, obj, value = st.pop(), st.pop(), st.pop()
    b.cur.ops.append(SetItem(loc=ins.loc, obj=obj, index=index, value=value))


def _store_attr(b: IRBuilder, st: State, ins: Instr) -> None:
    obj, value = st.pop(), st.pop()
    b.cur.ops.append(SetAttr(loc=ins.loc, obj=obj, name=ins.arg, value=value))


def _build_tuple(b: IRBuilder, st: State, ins: Instr) -> None:
    items = tuple(st.stack[len(st.stack) - ins.arg :])
    del st.stack[len(st.stack) - ins.arg :]
    st.push(b.emit(BuildTuple, ins.loc, items=items))


def _tuple_append(b: IRBuilder, st: State, ins: Instr) -> None:
    value = st.pop()
    tup = st.stack[-ins.arg]
    made = b.defs.get(tup.id)
    if isinstance(made, BuildTuple):
        st.stack[-ins.arg] = b.emit(BuildTuple, ins.loc, items=made.items + (value,))
    else:  # after a ``*s``: concatenated by stage 4
        one = b.emit(BuildTuple, ins.loc, items=(value,))
        func = b.emit(Const, ins.loc, value=TUPLE_CONCAT)
        st.stack[-ins.arg] = b.emit(Call, ins.loc, func=func, args=(tup, one), kwargs=())


def _tuple_extend(b: IRBuilder, st: State, ins: Instr) -> None:
    # ``(a, *s)``: typed by stage 4, which knows how many items ``s`` has
    seq = st.pop()
    func = b.emit(Const, ins.loc, value=TUPLE_CONCAT)
    st.stack[-ins.arg] = b.emit(Call, ins.loc, func=func, args=(st.stack[-ins.arg], seq), kwargs=())


def _build_slice(b: IRBuilder, st: State, ins: Instr) -> None:
    # ``a:b:c`` is a call of the builtin ``slice``, typed by stage 4.
    items = tuple(st.stack[len(st.stack) - ins.arg :])
    del st.stack[len(st.stack) - ins.arg :]
    func = b.emit(Const, ins.loc, value=slice)
    st.push(b.emit(Call, ins.loc, func=func, args=items, kwargs=()))


def _unpack(b: IRBuilder, st: State, ins: Instr) -> None:
    seq = st.pop()
    items = [b.emit(TupleGet, ins.loc, tuple=seq, index=i) for i in range(ins.arg)]
    st.stack.extend(reversed(items))


def _call(b: IRBuilder, st: State, ins: Instr) -> None:
    args = st.stack[len(st.stack) - ins.arg :]
    del st.stack[len(st.stack) - ins.arg :]
    func = st.pop()
    npos = len(args) - len(ins.kwnames)
    kwargs = tuple(zip(ins.kwnames, args[npos:], strict=True))
    st.push(b.emit(Call, ins.loc, func=func, args=tuple(args[:npos]), kwargs=kwargs))


def _builtin_call(builtin, arity: int, extra=None):
    """A construct typed as a call of ``builtin`` on the top ``arity`` stack items
    (deepest first), followed by ``extra(b, ins)``'s constants."""

    def handler(b: IRBuilder, st: State, ins: Instr) -> None:
        items = st.stack[len(st.stack) - arity :]
        del st.stack[len(st.stack) - arity :]
        if extra is not None:
            items += [b.emit(Const, ins.loc, value=v) for v in extra(b, ins)]
        func = b.emit(Const, ins.loc, value=builtin)
        st.push(b.emit(Call, ins.loc, func=func, args=tuple(items), kwargs=()))

    return handler


def _list_display(b: IRBuilder, st: State, ins: Instr) -> None:
    # ``[a, b]``: a call of a builtin that stage 4 types (infer/list_display.py).
    _builtin_call(LIST_DISPLAY, ins.arg)(b, st, ins)


def _set_attribute(b: IRBuilder, st: State, ins: Instr) -> None:
    fn, value = st.pop(), st.pop()
    flag = b.emit(Const, ins.loc, value=ins.arg)
    func = b.emit(Const, ins.loc, value=SET_FUNCTION_ATTRIBUTE)
    st.push(b.emit(Call, ins.loc, func=func, args=(fn, flag, value), kwargs=()))


HANDLERS = {
    "MAKE_FUNCTION": _builtin_call(MAKE_FUNCTION, 1, lambda b, ins: [b.bc.function_globals]),
    "SET_FUNCTION_ATTRIBUTE": _set_attribute,
    "CALL_STAR": _builtin_call(CALL_STAR, 2),
    "DECORATE": _builtin_call(DECORATE, 2),
    "TUPLE_APPEND": _tuple_append,
    "TUPLE_EXTEND": _tuple_extend,
    "LOAD_CONST": lambda b, st, ins: st.push(b.emit(Const, ins.loc, value=ins.arg)),
    "LOAD_FAST": _load_fast,
    "STORE_FAST": _store_fast,
    "LOAD_GLOBAL": _load_global,
    "LOAD_DEREF": _load_deref,
    "LOAD_ATTR": lambda b, st, ins: st.push(b.emit(GetAttr, ins.loc, obj=st.pop(), name=ins.arg)),
    "LOAD_ASSERTION_ERROR": lambda b, st, ins: st.push(
        b.emit(Const, ins.loc, value=AssertionError)
    ),
    "POP_TOP": lambda b, st, ins: st.pop(),
    "COPY": _copy,
    "SWAP": _swap,
    "UNARY_OP": lambda b, st, ins: st.push(b.emit(UnaryOp, ins.loc, op=ins.arg, operand=st.pop())),
    "BINARY_OP": _binary(BinOp),
    "COMPARE_OP": _binary(Compare),
    "BINARY_SUBSCR": lambda b, st, ins: st.push(
        b.emit(GetItem, ins.loc, index=st.pop(), obj=st.pop())
    ),
    "STORE_SUBSCR": _store_subscr,
    "STORE_ATTR": _store_attr,
    "BUILD_TUPLE": _build_tuple,
    "BUILD_LIST": _list_display,
    "BUILD_SLICE": _build_slice,
    "UNPACK_SEQUENCE": _unpack,
    "CALL": _call,
    "GET_ITER": lambda b, st, ins: st.push(b.emit(GetIter, ins.loc, obj=st.pop())),
}


def _raise_message(b: IRBuilder, exc) -> str | None:
    op = b.defs.get(exc.id)
    if isinstance(op, Call) and len(op.args) == 1:
        arg = b.defs.get(op.args[0].id)
        if isinstance(arg, Const) and isinstance(arg.value, str):
            return arg.value
    return None


def _terminate(b: IRBuilder, block: BasicBlock, st: State, ins: Instr, prev: Instr | None):
    src, loc = b.cur, ins.loc
    if ins.op == "JUMP":
        tid, args = b.edge(src, st, block.target, loc)
        return Jump(loc=loc, target=tid, args=args)
    if ins.op == "RETURN":
        value = st.pop()
        if prev is not None and prev.op == "LOAD_CONST" and prev.arg is None:
            src.ops.pop()  # `return None` needs no constant
            return Return(loc=loc, value=None)
        return Return(loc=loc, value=value)
    if ins.op == "RAISE":
        exc = st.stack[-ins.arg]
        return Raise(loc=loc, exc=exc, message=_raise_message(b, exc))
    if ins.op == "FOR_ITER":
        it = st.pop()
        valid = b.emit(IterValid, loc, iter=it)
        value, nxt = b.make(IterValue, loc, iter=it), b.make(IterNext, loc, iter=it)
        body = State(st.locals, [*st.stack, nxt.result, value.result])
        then_id, then_args = b.edge(src, body, block.next, loc, (value, nxt))
        else_id, else_args = b.edge(src, st, block.target, loc)
        return Branch(
            loc=loc,
            cond=valid,
            then_target=then_id,
            then_args=then_args,
            else_target=else_id,
            else_args=else_args,
        )
    # POP_JUMP_IF_*
    v = st.pop()
    kind = ins.op[len("POP_JUMP_IF_") :]
    if kind in ("NONE", "NOT_NONE"):
        none = b.emit(Const, loc, value=None)
        v = b.emit(Compare, loc, op="is" if kind == "NONE" else "is not", lhs=v, rhs=none)
    jump_id, jump_args = b.edge(src, st, block.target, loc)
    next_id, next_args = b.edge(src, st, block.next, loc)
    if kind == "FALSE":
        return Branch(
            loc=loc,
            cond=v,
            then_target=next_id,
            then_args=next_args,
            else_target=jump_id,
            else_args=jump_args,
        )
    return Branch(
        loc=loc,
        cond=v,
        then_target=jump_id,
        then_args=jump_args,
        else_target=next_id,
        else_args=next_args,
    )


def translate_block(b: IRBuilder, block: BasicBlock, st: State) -> None:
    instrs = b.cfg.instrs(block)
    prev = None
    for ins in instrs:
        if ins.ends_block:
            b.cur.term = _terminate(b, block, st, ins, prev)
            return
        HANDLERS[ins.op](b, st, ins)
        prev = ins
    last = instrs[-1]
    tid, args = b.edge(b.cur, st, block.next, last.loc)
    b.cur.term = Jump(loc=last.loc, target=tid, args=args)
