"""Stage 6 entry: one typed IR function -> the LLVM module holding the kernel (and
the device functions it calls, in modules of their own where the target links
modules: ``functions.py``).

    module = lower_to_llvm(fn, CUDA_TARGET)
    module_texts(module)   # NVVM IR text of each module for stage 7

The kernel's parameters follow ``cujit.abi.param_kinds``: each entry block
parameter is flattened (an array is its data pointer, then ``ndim`` int64
extents, then for layout 'A' ``ndim`` int64 byte strides; a bool is one ``i8``;
a tuple is its items in order) and the entry block reassembles the IR's values
from them, a contiguous array's strides worked out from its extents.  Given a
``params.ParamUse``, the kernel declares only the parameters it marks passed;
the others, which nothing reads, are undefined values in the reassembled ones.
"""

from __future__ import annotations

import re

from llvmlite import ir as ll

from cujit import ir
from cujit.abi import INDEX32_LIMIT, param_kinds, param_names, passes_strides
from cujit.codegen import arrays, checks, control, debuginfo, scalars
from cujit.codegen.context import FunctionLowering
from cujit.codegen.folding import drop_unread_chains
from cujit.codegen.functions import DeviceFunctions, lower_call_function
from cujit.codegen.lltypes import (
    I8,
    RECORD_POINTER,
    VOID,
    const_int,
    memory_type,
    scalar_type,
    value_type,
)
from cujit.codegen.narrow import Narrowing
from cujit.codegen.params import ParamUse
from cujit.codegen.target import Target
from cujit.diagnostics import UnsupportedError
from cujit.ir import intrinsics as intrinsic_table
from cujit.types import Array, CPointer, Record, Scalar, Tuple, Type
from cujit.types.enums import EnumMember


def kernel_symbol(fn: ir.Function) -> str:
    """The kernel's symbol in the LLVM module, PTX and cubin (``cuModuleGetFunction``).

    The function's name with every character outside ``[A-Za-z0-9_]`` (the
    ``.`` and ``<locals>`` of a qualified name) replaced by ``_``: PTX
    identifiers allow no more ("PTX ISA", Identifiers).
    """
    name = re.sub(r"[^A-Za-z0-9_]", "_", fn.name) or "kernel"
    return "_" + name if name[0].isdigit() else name


def _flat_param_types(t: Type) -> list[ll.Type]:
    """LLVM parameter types for one argument, matching ``param_kinds`` one to one."""
    if isinstance(t, EnumMember):  # its value
        return _flat_param_types(t.dtype)
    if isinstance(t, Scalar):
        if t.kind == "c":  # a complex number travels as its two parts
            return [scalar_type(t.part_type)] * 2
        return [I8 if t.kind == "b" else scalar_type(t)]
    if isinstance(t, Array):
        n = 2 * t.ndim if passes_strides(t) else t.ndim
        return [ll.PointerType(memory_type(t.dtype))] + [ll.IntType(64)] * n
    if isinstance(t, Record):
        return [RECORD_POINTER]
    if isinstance(t, CPointer):  # its address
        return [ll.IntType(64)]
    if isinstance(t, Tuple):
        return [p for item in t.items for p in _flat_param_types(item)]
    raise TypeError(f"values of type {t} cannot be kernel parameters")


def _unpack_param(ctx: FunctionLowering, t: Type, params: list[ll.Value]) -> ll.Value:
    """Rebuild one argument's value from its flat parameters (consumed from the front)."""
    if isinstance(t, EnumMember):  # its value
        return _unpack_param(ctx, t.dtype, params)
    if isinstance(t, Scalar) and t.kind == "c":
        from cujit.codegen.complex import build

        return build(ctx, t, params.pop(0), params.pop(0))
    if isinstance(t, Scalar):
        p = params.pop(0)
        # A bool travels as a byte: any non-zero byte is True.
        return ctx.builder.icmp_unsigned("!=", p, const_int(I8, 0)) if t.kind == "b" else p
    if isinstance(t, Array):
        data = params.pop(0)
        shape = [params.pop(0) for _ in range(t.ndim)]
        strides = (
            [params.pop(0) for _ in range(t.ndim)]
            if passes_strides(t)
            else arrays.contiguous_strides(ctx, t, shape)
        )
        return arrays.make_array(ctx, t, data, shape, strides)
    if isinstance(t, (Record, CPointer)):
        return params.pop(0)
    if isinstance(t, Tuple):
        items = [_unpack_param(ctx, it, params) for it in t.items]
        return arrays.build_struct(ctx, t, items)
    raise TypeError(f"values of type {t} cannot be kernel parameters")


def lower_intrinsic(ctx: FunctionLowering, op: ir.Intrinsic) -> None:
    lower = ctx.target.intrinsics.get(op.name)
    if lower is None:
        raise UnsupportedError(intrinsic_table.refusal(op.name, ctx.target.name), op.loc)
    args = [ctx.values.get(a.id) for a in op.args]
    ctx.set(op.result, lower(ctx, op, args))


# Op class -> lowering function (terminators are handled by control.lower_terminator).
OP_LOWERING = {
    ir.Const: scalars.lower_const,
    ir.Undef: scalars.lower_undef,
    ir.BinOp: scalars.lower_binop,
    ir.UnaryOp: scalars.lower_unaryop,
    ir.Compare: scalars.lower_compare,
    ir.Cast: scalars.lower_cast,
    ir.GetItem: arrays.lower_getitem,
    ir.SetItem: arrays.lower_setitem,
    ir.BuildTuple: arrays.lower_build_tuple,
    ir.TupleGet: arrays.lower_tuple_get,
    ir.Intrinsic: lower_intrinsic,
    ir.CallFunction: lower_call_function,
    ir.GetIter: control.lower_get_iter,
    ir.IterValid: control.lower_iter_valid,
    ir.IterValue: control.lower_iter_value,
    ir.IterNext: control.lower_iter_next,
}


def _lower_op(ctx: FunctionLowering, op: ir.Op) -> None:
    result = op.result
    # Ops that only make compile-time values (modules, functions, None) and have
    # no effect produce nothing; intrinsics, calls and SetItem may have effects.
    if (
        result is not None
        and not isinstance(op, (ir.Intrinsic, ir.CallFunction))
        and value_type(result.type) is None
    ):
        ctx.set(result, None)
        debuginfo.define(ctx, result)  # a variable may name it (debug info)
        return
    lower = OP_LOWERING.get(type(op))
    if lower is None:
        raise AssertionError(f"{type(op).__name__} must not reach lowering (see typed-ir.md)")
    ctx.loc = op.loc
    debuginfo.at(ctx, op.loc)
    lower(ctx, op)
    if result is not None:
        debuginfo.define(ctx, result)


def module_texts(module: ll.Module) -> list[str]:
    """The text of ``module`` and of its device functions' own modules, in order."""
    return [str(m) for m in (module, *getattr(module, "cujit_callee_modules", ()))]


def llvm_text(module: ll.Module) -> str:
    """All of ``module_texts`` as one text (``inspect_llvm``, numba's joined modules)."""
    return join_texts(module_texts(module))


def join_texts(texts: list[str]) -> str:
    """``module_texts``' texts as ``llvm_text`` joins them."""
    return "\n\n".join(texts)


def lower_to_llvm(
    fn: ir.Function,
    target: Target,
    debug: bool = False,
    params: ParamUse | None = None,
    debug_info: str | None = None,
    bounds: bool = False,
    opt: int = 3,
    index32: bool = False,
) -> ll.Module:
    """Lower typed IR function ``fn`` to an LLVM module with one kernel for ``target``;
    ``debug`` adds debug mode's checks of ``checks.py`` (``raise``, ``assert``, division
    by zero; their table: ``checks.error_sites``), ``bounds`` its array bounds checks;
    ``params`` (``params.read_params``): the kernel takes only the parameters it reads;
    ``debug_info`` ("lines" or "full") adds debug metadata (``debuginfo.py``);
    ``opt=0`` (``jit(opt=False)``): the kernel's parameters live in stack slots, as a C
    compiler's ``-O0`` keeps them (libNVVM's ``-opt=0`` leaves them in local memory);
    ``index32``: the 32-bit index variant's int32 forms of index arithmetic (``narrow``)."""
    module = ll.Module(name=fn.name)
    debuginfo.enable(module, debug_info, fn.loc)
    checks.enable(module, target.global_addrspace, bounds=bounds, errors=debug)
    module.triple = target.triple
    module.data_layout = target.data_layout
    functions = DeviceFunctions(module, target, lower_body)
    arg_types = [p.type for p in fn.args]
    for t in arg_types:
        param_kinds(t)  # the ABI's own check: raises for an unpassable type
    hidden = list(target.hidden_params)  # target-private state (the CPU target's thread ids)
    abi_types = [ty for t in arg_types for ty in _flat_param_types(t)]
    passed = params.passed if params is not None else (True,) * len(abi_types)
    if len(passed) != len(abi_types):
        raise AssertionError(f"{len(passed)} parameter flags for {len(abi_types)} parameters")
    flat = [ty for _, ty in hidden] + [ty for ty, p in zip(abi_types, passed, strict=True) if p]
    llfn = ll.Function(module, ll.FunctionType(VOID, flat), kernel_symbol(fn))
    abi_names = [n for a, t in zip(fn.arg_names, arg_types, strict=True) for n in param_names(a, t)]
    names = [n for n, _ in hidden] + [n for n, p in zip(abi_names, passed, strict=True) if p]
    for arg, name in zip(llfn.args, names, strict=True):
        arg.name = name

    ctx = FunctionLowering(fn, target, module, llfn, functions)
    if params is not None:
        ctx.unwrapped = params.unwrapped
        ctx.step_signs = dict(params.step_signs)
    if index32:
        ctx.narrow = Narrowing(fn, INDEX32_LIMIT)
    debuginfo.begin_function(ctx, fn.name, fn.loc, tuple(arg_types))
    given = iter(
        _spilled(ctx, list(llfn.args)[len(hidden) :]) if opt == 0 else llfn.args[len(hidden) :]
    )
    values = [
        next(given) if p else ll.Constant(ty, ll.Undefined)  # never read: not passed
        for ty, p in zip(abi_types, passed, strict=True)
    ]
    for p in fn.args:
        ctx.set(p, _unpack_param(ctx, p.type, values))
    debuginfo.describe_params(ctx, fn.args)
    lower_body(ctx, target.prologue)
    checks.define_record(module)
    if target.kernel_metadata is not None:
        target.kernel_metadata(module, llfn)
    drop_unread_chains(module)
    return module


def _spilled(ctx: FunctionLowering, args: list[ll.Argument]) -> list[ll.Value]:
    """The parameters stored to one stack record, a field each, and read back from it.
    One record rather than a slot each: libNVVM's ``-opt=0`` still promotes whole
    scalar slots to registers, not the fields of a record (as a debugger wants them)."""
    if not args:
        return []
    frame = ctx.alloca(ll.LiteralStructType([a.type for a in args]), 8, name="params")
    b, zero = ctx.builder, const_int(ll.IntType(32), 0)
    fields = [b.gep(frame, [zero, const_int(ll.IntType(32), k)]) for k in range(len(args))]
    for arg, field in zip(args, fields, strict=True):
        b.store(arg, field)
    return [
        b.load(field, name=f"{arg.name}.value") for arg, field in zip(args, fields, strict=True)
    ]


def lower_body(ctx: FunctionLowering, prologue=None) -> None:
    """Lower ``ctx.fn``'s blocks into ``ctx.llfn``, whose parameters are already mapped;
    ``prologue(ctx)`` (a target hook) emits into the entry block first."""
    fn = ctx.fn
    # Debug builds lay the blocks out as the source reads (``if`` bodies first).
    order = control.reverse_postorder(fn, source_order=ctx.debug_vars is not None)
    if any(fn.blocks[0].id == t for b in order for t, _ in b.term.successors()):
        # Its params are the arguments, not phis; irgen always starts loops in a new block.
        raise AssertionError("the entry block must have no predecessors")
    start = ctx.builder.block  # the entry, or in debug builds the block after it
    blocks = control.BlockMap(ctx, order)
    located = ctx.builder.debug_metadata
    for block in order[1:]:
        # A merged value read from its slot (debug builds) is read at the block's line.
        debuginfo.at(ctx, _first_loc(block))
        blocks.create_phis(block)
    ctx.builder.debug_metadata = located
    ctx.builder.position_at_end(start)
    if prologue is not None:
        prologue(ctx)
    ctx.builder.branch(blocks.llblocks[order[0].id])
    for block in order:
        ctx.builder.position_at_end(blocks.llblocks[block.id])
        # A merged value is described where the block's code starts.
        debuginfo.at(ctx, _first_loc(block))
        for p in block.params:  # after the block's phis
            debuginfo.define(ctx, p)
        for op in block.ops:
            _lower_op(ctx, op)
        ctx.loc = block.term.loc
        debuginfo.at(ctx, ctx.loc)
        control.lower_terminator(ctx, blocks, block.term)
    blocks.fill_phis()


def _first_loc(block: ir.Block):
    return block.ops[0].loc if block.ops else block.term.loc
