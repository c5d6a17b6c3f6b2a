"""Stage 4 driver: ``infer_types`` sweeps the function until block parameter types settle.

Types flow forward: a sweep visits blocks in reverse post-order, rewriting each
op with the table ``RULES`` (one typing rule per op class) and unifying the
types of the arguments each edge passes into the target's parameters.  A loop
header's parameters may widen when its back edge is seen (``i = 0`` then
``i = i + x[k]`` with float ``x``: int64, then float64), so sweeps repeat until
nothing changes; the types only grow in a finite lattice, so this ends.  Only a
change to a block the sweep has already typed (a back edge) calls for another
sweep: a forward edge's target is typed later in the same sweep, with the new
types, so a loop-free kernel needs one sweep.  A last sweep then emits the typed function, with a
Cast on every edge whose
argument is narrower than its parameter:

    block1(%5: int64):  ...  jump block2(%5)        # block2(%7: float64)
  becomes
    block1(%5: int64):  %20: float64 = cast %5;  jump block2(%20)
"""

from __future__ import annotations

import dataclasses

from cujit.diagnostics import (
    KernelReturnError,
    Loc,
    RequireLiteralValue,
    TypingError,
    UnsupportedError,
)
from cujit.frozen import mutable
from cujit.hints import hint
from cujit.infer import access, arith, calls, conflicts, enums, optional
from cujit.infer.context import Typer
from cujit.infer.escapes import check_escaping_captures
from cujit.infer.function_calls import (
    Callees,
    LiteralArg,
    bake_constant_params,
    is_argument_type,
    is_constant_argument,
)
from cujit.infer.numeric import describe, unify
from cujit.infer.uninit import gather_var_types
from cujit.infer.unroll import MAX_LOOPS, UnrollLoop, unroll_literal_loops, unroll_loop
from cujit.ir import (
    BinOp,
    Block,
    Branch,
    BuildTuple,
    Call,
    Cast,
    Compare,
    Const,
    Function,
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
    Terminator,
    TupleGet,
    UnaryOp,
    Undef,
    Value,
    operands,
    replace,
)
from cujit.types import NoneType, PyObject, Type, none, void
from cujit.types.enums import EnumMember

RULES = {
    Const: arith.type_const,
    Undef: arith.type_undef,
    BinOp: arith.type_binop,
    UnaryOp: arith.type_unaryop,
    Compare: arith.type_compare,
    Cast: arith.type_cast,
    GetAttr: access.type_getattr,
    GetItem: access.type_getitem,
    SetItem: access.type_setitem,
    SetAttr: access.type_setattr,
    BuildTuple: access.type_build_tuple,
    TupleGet: access.type_tuple_get,
    GetIter: access.type_get_iter,
    IterValid: access.type_iter_step,
    IterValue: access.type_iter_step,
    IterNext: access.type_iter_step,
    Call: calls.type_call,
}

MAX_SWEEPS = 64  # far above the lattice height (scalars widen at most ~4 times)


def infer_types(
    fn: Function,
    arg_types: tuple[Type, ...],
    callees: Callees | None = None,
    *,
    device: bool = False,
    return_type: Type | None = None,
    escaping_captures: bool = False,
) -> Function:
    """The typed version of untyped ``fn`` for arguments of ``arg_types``.

    ``callees`` compiles the device functions ``fn`` calls (without it, such a
    call is an error); their typed IR lands in the result's ``callees``.  A
    kernel returns nothing; a device function (``device=True``) returns the
    unified type of its ``return`` values, or ``return_type`` when declared.
    Nested functions passed on may capture run-time values only with
    ``escaping_captures`` (``infer/escapes.py``: numba's rule).
    """
    what = "device function" if device else "kernel"
    if len(arg_types) != len(fn.args):
        raise TypingError(
            f"{what} '{fn.name}' takes {len(fn.args)} arguments but "
            f"{len(arg_types)} types were given",
            fn.loc,
        )
    for name, t in zip(fn.arg_names, arg_types, strict=True):
        if not (is_argument_type(t) or (device and is_constant_argument(t))):
            raise TypingError(
                f"argument '{name}' of type {describe(t)} cannot be passed to a {what}", fn.loc
            )
    check_escaping_captures(fn, escaping_captures)
    fn = unroll_literal_loops(fn, arg_types)
    literals = {
        p.id: t.value for p, t in zip(fn.args, arg_types, strict=True) if isinstance(t, LiteralArg)
    }
    arg_types = tuple(t.base if isinstance(t, LiteralArg) else t for t in arg_types)
    for _ in range(MAX_LOOPS):
        try:
            return _infer(fn, arg_types, literals, callees, device, return_type)
        except UnrollLoop as loop:  # a loop over a tuple of arrays, records...: unrolled
            fn = unroll_loop(fn, loop.iter_id, loop.length, loop.loc)
    raise UnsupportedError("too many loops over tuples in one function", fn.loc)


def _infer(fn, arg_types, literals, callees, device, return_type) -> Function:
    """One typing of ``fn``: sweeps until the types settle, then the final sweep."""
    order = _reverse_postorder(fn)
    state = _State(
        {p.id: t for p, t in zip(fn.args, arg_types, strict=True)},
        callees=callees,
        literals=literals,
        device=device,
        declared_return=return_type,
        return_type=return_type,
    )
    if device and callees is not None:
        callees.attach(state)  # its own recursive calls read the return type found so far
    blocks = _settle(fn, order, state)
    if not state.clean:
        blocks = _sweep(fn, order, state, final=True)
    arg_names = fn.arg_names
    if device:
        blocks, arg_names = bake_constant_params(blocks, arg_names, fn.loc, literals)
    return Function(
        name=fn.name,
        arg_names=arg_names,
        blocks=tuple(blocks),
        loc=fn.loc,
        return_type=_return_type(state),
        callees=state.callees_used,
        var_names=fn.var_names,
    )


def _return_type(state: _State) -> Type:
    if state.returns_nothing is not None and state.returns_value is not None:
        return optional.optional_of(state.return_type)
    return state.return_type or void


def _settle(fn: Function, order: list[int], state: _State) -> list[Block]:
    """Non-final sweeps until no block's inputs change; the last one's blocks.

    Where that last sweep was clean (``_State.clean``) its blocks are what the final
    sweep would make, and the final sweep is skipped: the two differ only where a value
    is still untyped, a typing error waited, an edge needs a cast, a read finds no
    assignment (the final sweep warns) or a device function returns a value (the final
    sweep casts it), and a clean sweep met none of these."""
    for _ in range(MAX_SWEEPS):
        state.changed = False
        state.visited.clear()
        blocks = _sweep(fn, order, state, final=False)
        if state.self_called and state.self_seen != state.return_type:
            state.changed = True  # its recursive calls saw an older return type
        if not state.changed:
            return blocks
    if state.self_called:  # (n, f(n - 1)): a return type that grows with each sweep
        raise TypingError(
            f"Return type of recursive function does not converge: '{fn.name}' returns a "
            "type that grows with each call of itself",
            fn.loc,
        )
    raise RuntimeError(f"type inference of '{fn.name}' did not converge")  # pragma: no cover


@mutable
class _State:
    """What sweeps learn and keep: parameter types and the types of unset variables."""

    param_types: dict[int, Type]
    undef_types: dict[int, Type] = dataclasses.field(default_factory=dict)
    undef_params: dict[int, str] = dataclasses.field(default_factory=dict)
    var_types: dict[str, Type] = dataclasses.field(default_factory=dict)  # infer/uninit.py
    changed: bool = False  # a block already typed in this sweep saw its inputs change
    visited: set[int] = dataclasses.field(default_factory=set)  # typed in this sweep
    callees: Callees | None = None
    literals: dict[int, object] = dataclasses.field(default_factory=dict)  # param -> value
    callees_used: tuple[Function, ...] = ()  # by the last sweep's calls
    device: bool = False  # a device function: ``return`` may carry a value
    declared_return: Type | None = None
    return_type: Type | None = None  # unified over the ``return`` values seen so far
    returns_nothing: Loc | None = None  # a bare ``return`` seen there
    returns_value: Loc | None = None  # a ``return <value>`` seen there
    self_called: bool = False  # a recursive call read the return type
    self_seen: Type | None = None  # the return type it read last
    # The last non-final sweep typed every op and block parameter, no typing error
    # waited, every edge passes its target's types and no read went unassigned: its
    # blocks are the final ones (``_settle``).  Kernels only (a device function's
    # returns are cast in the final sweep).
    clean: bool = False


def _reverse_postorder(fn: Function) -> list[int]:
    """Reachable block ids, each after all its forward-edge predecessors."""
    seen: set[int] = set()
    post: list[int] = []
    stack = [(fn.blocks[0].id, iter(_succs(fn.blocks[0])))]
    seen.add(fn.blocks[0].id)
    while stack:
        bid, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            post.append(bid)
            stack.pop()
        elif nxt not in seen:
            seen.add(nxt)
            stack.append((nxt, iter(_succs(fn.block(nxt)))))
    return post[::-1]


def _succs(block: Block) -> list[int]:
    return [target for target, _ in block.term.successors()]


def _sweep(fn: Function, order: list[int], state: _State, final: bool) -> list[Block]:  # noqa: C901 -- one pass over the blocks; each op kind's typing is one branch
    t = Typer(fn, state.param_types, state.undef_types, final, state.callees)
    t.var_types = state.var_types
    clean = not final and not state.device
    typed: dict[int, Block] = {}
    live = {order[0]}  # blocks an edge typed so far reaches (a constant branch takes one)
    for bid in order:
        if bid not in live:
            continue
        block = fn.block(bid)
        state.visited.add(bid)
        params = []
        for p in block.params:
            ty = state.param_types.get(p.id)
            if ty is None:
                clean = False
                if final:
                    ty = none  # only ever fed by unset variables
            if p.id in state.undef_params and (ty is None or isinstance(ty, NoneType)):
                t.undef_names[p.id] = state.undef_params[p.id]
            params.append(Value(p.id, ty))
            t.env[p.id] = params[-1]
            if p.id in state.literals:
                t.consts[p.id] = state.literals[p.id]
        t.start_block()
        for op in block.ops:
            if any(t.value(v).type is None for v in operands(op)):
                # Reads a value whose type is not known yet: wait for a later sweep.
                if op.result is not None:
                    t.env[op.result.id] = Value(op.result.id, None)
                clean = False
                continue
            if not _type_op(t, op, final):
                clean = False
        term = _fold_branch(t, block.term, _type_terminator(t, block.term, state))
        live.update(target for target, _ in term.successors())
        if final:
            term = _convert_edges(t, fn, term)
        else:
            _join_edges(t, fn, term, state)
        typed[bid] = Block(bid, tuple(params), tuple(t.ops), term)
    state.callees_used = tuple(t.callee_fns.values())
    if not final and gather_var_types(t, state.var_types):
        state.changed = True  # an unassigned read takes the variable's type next sweep
    if not final:  # (each edge against its target's types once every edge is joined)
        clean = clean and not t.unassigned_reads and not t.undef_names
        state.clean = clean and all(_edges_match(t, fn, b.term) for b in typed.values())
    return [typed[b.id] for b in fn.blocks if b.id in typed]


def _edges_match(t: Typer, fn: Function, term: Terminator) -> bool:
    """Whether every argument ``term`` passes has its target parameter's type (what
    ``_convert_edges`` leaves as it is)."""
    for target, args in term.successors():
        for p, a in zip(fn.block(target).params, args, strict=True):
            if a.type is None or a.type != t.param_types.get(p.id):
                return False
    return True


def _type_op(t: Typer, op, final: bool) -> bool:
    """Type one op.  Before the final sweep a typing error waits: a value merged at a
    loop's header may not have its final type yet (``acc = 0`` before a loop that
    assigns it a library's masked value, the two unifying to the masked type), so the
    op's result is left unknown and the final sweep, with the settled types, reports
    what is still wrong."""
    if final:
        RULES[type(op)](t, op)
        return True
    try:
        RULES[type(op)](t, op)
    except RequireLiteralValue:
        raise
    except TypingError:
        if op.result is not None:
            t.env[op.result.id] = Value(op.result.id, None)
        return False
    return op.result is None or t.env.get(op.result.id, op.result).type is not None


def _fold_branch(t: Typer, untyped: Terminator, term: Terminator) -> Terminator:
    """A branch on a compile-time constant (a constant argument, a global flag) as a
    jump: the other side is never typed, as numba prunes dead branches."""
    if not isinstance(term, Branch):
        return term
    cond = t.value(untyped.cond)
    if cond.type is None:
        return term
    value = t.const_value(cond, _MISSING)
    if value is _MISSING or not isinstance(value, (bool, int, float, NoneType, type(None))):
        return term
    if value:
        return Jump(loc=term.loc, target=term.then_target, args=term.then_args)
    return Jump(loc=term.loc, target=term.else_target, args=term.else_args)


_MISSING = object()


def _type_terminator(t: Typer, term: Terminator, state: _State) -> Terminator:
    mapped = t.value
    if isinstance(term, Branch):
        cond = t.value(term.cond)
        if cond.type is not None:
            cond = t.to_bool(cond, term.loc)
        return replace(
            term,
            cond=cond,
            then_args=tuple(map(mapped, term.then_args)),
            else_args=tuple(map(mapped, term.else_args)),
        )
    if isinstance(term, Jump):
        return replace(term, args=tuple(map(mapped, term.args)))
    if isinstance(term, Return):
        v = t.value(term.value) if term.value is not None else None
        if v is not None and (
            v.type is None or (isinstance(v.type, NoneType) and v.id not in t.undef_names)
        ):
            v = None  # ``return None``, or a value typed by a later sweep
        if state.device:
            return _type_return(t, term, v, state)
        if v is not None:
            raise KernelReturnError(
                "a kernel cannot return a value: kernels must have void return type",
                term.loc,
                hint=hint("kernel-return"),
            )
        return Return(loc=term.loc)
    if isinstance(term, Raise):
        exc = t.value(term.exc) if term.exc is not None else None
        message = term.message
        if message is None and exc is not None:
            message = t.exc_messages.get(exc.id)
        return Raise(loc=term.loc, exc=exc, message=message)
    raise TypeError(f"unknown terminator {type(term).__name__}")


def _type_return(t: Typer, term: Return, v: Value | None, state: _State) -> Return:
    """A device function's ``return``: unify the value's type into the return type,
    and in the final sweep cast the value to it."""
    if v is None:
        if term.value is not None and t.value(term.value).type is None:
            return Return(loc=term.loc)  # typed in a later sweep
        state.returns_nothing = state.returns_nothing or term.loc
        declared = state.declared_return
        if declared is not None and not isinstance(declared, NoneType):
            raise TypingError(
                f"this function is declared to return {declared} but returns nothing here", term.loc
            )
    else:
        t.check_defined(v, term.loc)
        v = enums.as_run_time(t, v, term.loc)  # an enum member returns as a run-time one
        if isinstance(state.declared_return, NoneType):
            raise TypingError(
                "this function is declared to return nothing (void) but returns a value", term.loc
            )
        if not is_argument_type(v.type) and state.self_called and state.returns_nothing:
            # ``return None`` on one path, ``(n, f(n - 1))`` on another: (n, None),
            # then (n, (n, None))...: no type holds every call's result
            raise TypingError(
                f"Return type of recursive function does not converge: '{t.fn.name}' "
                f"returns nothing on one path and {describe(v.type)}, built from its own "
                "result, on another",
                term.loc,
            )
        if not is_argument_type(v.type):
            raise TypingError(f"a device function cannot return {describe(v.type)}", term.loc)
        if state.declared_return is None:
            new = v.type if state.return_type is None else unify(state.return_type, v.type)
            if new is None and state.self_called:  # (n, f(n - 1)) after ``return None``
                raise TypingError(
                    f"Return type of recursive function does not converge: '{t.fn.name}' "
                    f"returns {describe(state.return_type)} and then {describe(v.type)}",
                    term.loc,
                )
            if new is None:
                raise TypingError(
                    f"this function returns {describe(state.return_type)} on "
                    f"one path and {describe(v.type)} on another; return one "
                    "type on every path",
                    term.loc,
                )
            state.return_type = new
        state.returns_value = state.returns_value or term.loc
    return Return(loc=term.loc, value=_returned(t, v, state, term.loc))


def _returned(t: Typer, v: Value | None, state: _State, loc: Loc) -> Value | None:
    """The value a ``return`` gives: in the final sweep cast to the return type, or
    made an optional where the function returns a number on some paths only."""
    both = state.returns_nothing is not None and state.returns_value is not None
    if both and optional.optional_of(state.return_type) is None:
        raise TypingError(
            "this function returns a value here and nothing on another path; "
            "return a value on every path (or a number, which makes it optional)",
            state.returns_value,
        )
    if t.final and both:  # a number on some paths, nothing on others: optional(T)
        return optional.wrap(t, v, optional.optional_of(state.return_type), loc)
    if t.final and v is not None:
        return t.cast(v, state.return_type, loc)
    return v


def _join_edges(t: Typer, fn: Function, term: Terminator, state: _State) -> None:
    """Unify each edge argument's type into its target parameter's type."""
    for target, args in term.successors():
        for p, a in zip(fn.block(target).params, args, strict=True):
            if a.id in t.undef_names:
                # An unset variable adopts its merge partner's type, never imposes one.
                if p.id not in state.undef_params:
                    state.undef_params[p.id] = t.undef_names[a.id]
                    state.changed |= target in state.visited
                if p.id in state.param_types and a.id not in state.undef_types:
                    state.undef_types[a.id] = state.param_types[p.id]
                    state.changed = True  # the Undef is in the block just typed
                continue
            if a.type is None:
                continue
            old = state.param_types.get(p.id)
            new = a.type if old is None else unify(old, a.type)
            if new is None:
                raise _conflict_error(t, p, a, old, term.loc)
            if new != old:
                state.param_types[p.id] = new
                # An unset variable merged into ``p`` (its Undef typed earlier in the
                # sweep) takes this type: also a change to what was already typed.
                state.changed |= target in state.visited or p.id in state.undef_params


def _conflict_error(t: Typer, p: Value, a: Value, old: Type, loc: Loc) -> TypingError:
    """``p`` (a merge of a variable) holds ``old``, and ``a`` a type that does not unify."""
    name = conflicts.variable_name(t.fn, p.id) or conflicts.variable_name(t.fn, a.id)
    where = conflicts.assignment_loc(t.fn, name, old, a.type) or _def_loc(t, a, loc)
    return TypingError(conflicts.conflict(old, a.type, name), where)


def _def_loc(t: Typer, v: Value, default: Loc) -> Loc:
    return t.def_locs.get(v.id, default)


def _convert_edges(t: Typer, fn: Function, term: Terminator) -> Terminator:
    """Cast (or re-Undef) each edge argument to its parameter's type."""

    def convert(target: int, args: tuple[Value, ...]) -> tuple[Value, ...]:
        out = []
        for p, a in zip(fn.block(target).params, args, strict=True):
            pt = t.param_types.get(p.id, none)
            if a.type != pt:
                if a.id in t.undef_names:
                    a = t.emit(Undef(loc=term.loc, result=t.fresh(pt), name=t.undef_names[a.id]))
                elif isinstance(pt, EnumMember):  # an enum member's constant among others
                    a = t.cast(a, pt, term.loc)
                elif isinstance(a.type, PyObject) or isinstance(pt, PyObject):
                    raise _conflict_error(t, p, a, pt, term.loc)
                else:
                    a = t.cast(a, pt, term.loc)
            out.append(a)
        return tuple(out)

    if isinstance(term, Jump):
        return replace(term, args=convert(term.target, term.args))
    if isinstance(term, Branch):
        return replace(
            term,
            then_args=convert(term.then_target, term.then_args),
            else_args=convert(term.else_target, term.else_args),
        )
    return term
