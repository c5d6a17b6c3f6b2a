"""Stage 6 for a device function compiled on its own (``cuda.compile``): an LLVM module
whose one visible function other code can call, in numba's ABI or the C ABI.

The typed function is lowered as a kernel's callees are (``functions.py``: on the
CUDA target in a module of its own), and a visible entry wraps it:

    numba ABI:  define i32 @name(<ret>* %retptr, <args>)   ; status 0, result stored
    C ABI:      define <ret> @name(<args>)                 ; the result itself

A bool crosses either ABI as one byte (C's ``bool``; numba's in-memory boolean), and
a function that returns nothing returns ``void`` (C) or stores nothing (numba).  The
entry's arguments are the values' register forms: scalars, complex numbers (a
``{re, im}`` struct) and tuples of them.  An array argument is numba's array
members, in its order: ``i8* meminfo, i8* parent, i64 nitems, i64 itemsize, T* data``,
then ``ndim`` extents and ``ndim`` byte strides (cujit reads the last three; the rest
are numba's bookkeeping).  No array is returned.
"""

from __future__ import annotations

import re

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen import checks, debuginfo
from cujit.codegen.functions import DeviceFunctions
from cujit.codegen.lltypes import I8, I32, VOID, memory_type, value_type
from cujit.diagnostics import UnsupportedError
from cujit.types import Array, CPointer, Scalar, Type

ABIS = ("numba", "c")


def entry_symbol(name: str) -> str:
    """A PTX-safe symbol from a Python name (``<lambda>`` -> ``_lambda_``)."""
    sym = re.sub(r"[^A-Za-z0-9_$]", "_", name) or "function"
    return "_" + sym if sym[0].isdigit() else sym


def abi_type(t: Type, where: str, loc) -> ll.Type | None:
    """How a value of type ``t`` crosses either ABI (None: it has no machine form)."""
    if isinstance(t, Array):
        raise UnsupportedError(
            f"{where} is an array ({t}): functions called across an ABI "
            "take and return scalars, complex numbers and tuples",
            loc,
        )
    if isinstance(t, Scalar) and t.kind == "b":
        return I8
    if isinstance(t, CPointer):  # a pointer crosses as one: T*
        return ll.PointerType(memory_type(t.dtype))
    return value_type(t)


def _array_params(t: Array) -> list[ll.Type]:
    """numba's members of an array argument (its data model's argument form)."""
    i8p, i64 = ll.PointerType(I8), ll.IntType(64)
    return [i8p, i8p, i64, i64, ll.PointerType(memory_type(t.dtype))] + [i64] * (2 * t.ndim)


def _param_types(t: Type, where: str, loc) -> list[ll.Type]:
    if isinstance(t, Array):
        return _array_params(t)
    lt = abi_type(t, where, loc)
    return [] if lt is None else [lt]


def _argument(b: ll.IRBuilder, t: Type, given: list[ll.Value]) -> ll.Value:
    """The callee's value of one argument, from its entry parameters (consumed)."""
    if not isinstance(t, Array):
        return from_abi(b, given.pop(0), t)
    members = [given.pop(0) for _ in _array_params(t)]
    data, shape, strides = members[4], members[5 : 5 + t.ndim], members[5 + t.ndim :]
    value = b.insert_value(ll.Constant(value_type(t), ll.Undefined), data, 0)
    for k in range(t.ndim):
        value = b.insert_value(value, shape[k], [1, k])
        value = b.insert_value(value, strides[k], [2, k])
    return value


def to_abi(b: ll.IRBuilder, value: ll.Value, t: Type) -> ll.Value:
    if isinstance(t, CPointer):
        return b.inttoptr(value, ll.PointerType(memory_type(t.dtype)))
    return b.zext(value, I8) if isinstance(t, Scalar) and t.kind == "b" else value


def from_abi(b: ll.IRBuilder, value: ll.Value, t: Type) -> ll.Value:
    if isinstance(t, CPointer):
        return b.ptrtoint(value, ll.IntType(64))
    if isinstance(t, Scalar) and t.kind == "b":
        return b.icmp_unsigned("!=", value, ll.Constant(I8, 0))
    return value


def lower_device_entry(
    fn: ir.Function,
    target,
    abi: str,
    symbol: str,
    version: tuple[int, ...],
    debug: bool = False,
    debug_info: str | None = None,
    forceinline: bool = False,
    bounds: bool = False,
) -> ll.Module:
    """The module holding ``fn`` behind a visible entry ``symbol`` in ``abi``;
    ``version``: the ``!nvvmir.version`` a module without a kernel needs too;
    ``forceinline``: the entry is ``alwaysinline`` (for the LTO linker's callers);
    ``debug``: debug mode's checks, ``bounds``: array bounds checks (``checks``)."""
    module = ll.Module(name=fn.name)
    module.triple, module.data_layout = target.triple, target.data_layout
    debuginfo.enable(module, debug_info, fn.loc)
    checks.enable(module, target.global_addrspace, bounds=bounds, errors=debug)
    from cujit.codegen.module import lower_body  # module imports this package's parts

    inner = DeviceFunctions(module, target, lower_body).get(fn)
    arg_types = [p.type for p in fn.args]
    params = [
        ty
        for n, t in zip(fn.arg_names, arg_types, strict=True)
        for ty in _param_types(t, f"argument {n!r}", fn.loc)
    ]
    ret = abi_type(fn.return_type, "the return value", fn.loc)
    if abi == "c":
        fnty = ll.FunctionType(ret or VOID, params)
    else:
        fnty = ll.FunctionType(I32, [ll.PointerType(ret or I8), *params])
    entry = ll.Function(module, fnty, symbol)
    entry.attributes.add("nounwind")
    if forceinline:
        entry.attributes.add("alwaysinline")
    given = list(entry.args) if abi == "c" else list(entry.args)[1:]
    _name_params(given, fn.arg_names, arg_types)
    b = ll.IRBuilder(entry.append_basic_block("entry"))
    info = getattr(module, "cujit_debuginfo", None)
    if info is not None:  # the entry's own lines: the call it makes is the def line's
        loc = debuginfo.def_line(fn.loc)
        scope = info.subprogram(entry, fn.name, loc, tuple(arg_types))
        b.debug_metadata = info.location(loc, scope)
    out_type = inner.function_type.args[0].pointee  # the callee convention (functions.py)
    with b.goto_entry_block():
        out = b.alloca(out_type, name="result")
    status = b.call(inner, [out, *(_argument(b, t, given) for t in arg_types)])
    result = b.load(out) if ret is not None else None
    if abi == "c":
        if ret is None:
            b.ret_void()
        else:
            b.ret(to_abi(b, result, fn.return_type))
    else:
        entry.args[0].name = "retptr"
        if ret is not None:
            b.store(to_abi(b, result, fn.return_type), entry.args[0])
        b.ret(status)  # numba's: 0, or the callee's failure
    checks.define_record(module)
    module.add_named_metadata("nvvmir.version", [ll.Constant(I32, v) for v in version])
    return module


def _name_params(given: list[ll.Argument], names, arg_types) -> None:
    it = iter(given)
    for name, t in zip(names, arg_types, strict=True):
        if isinstance(t, Array):
            for member in ("meminfo", "parent", "nitems", "itemsize", "data"):
                next(it).name = f"{name}.{member}"
            for k in range(2 * t.ndim):
                next(it).name = f"{name}.{'shape' if k < t.ndim else 'strides'}{k % t.ndim}"
        elif _param_types(t, "", None):
            next(it).name = name


def keep_function(module: ll.Module, fn: ll.Function) -> None:
    """List ``fn`` in ``@llvm.used``: nvJitLink's link-time optimisation drops a kernel
    that nothing in the linked program calls unless the module says to keep it."""
    i8p = ll.PointerType(I8)
    used = ll.GlobalVariable(module, ll.ArrayType(i8p, 1), "llvm.used")
    used.linkage = "appending"
    used.section = "llvm.metadata"
    used.initializer = ll.Constant(ll.ArrayType(i8p, 1), [fn.bitcast(i8p)])


# numba's launch bounds -> the NVVM IR kernel annotations ("Global Property Annotation").
_BOUNDS = ("maxntidx", "minctasm", "cluster_max_blocks")


def annotate_launch_bounds(module: ll.Module, fn: ll.Function, bounds: tuple[int, ...]) -> None:
    """Mark kernel ``fn`` with (max threads per block, min blocks per multiprocessor,
    max blocks per cluster), as many as ``bounds`` gives: PTX ``.maxntid`` and so on."""
    for key, value in zip(_BOUNDS, bounds, strict=False):  # bounds may give fewer
        module.add_named_metadata(
            "nvvm.annotations", [fn, ll.MetaDataString(module, key), ll.Constant(I32, value)]
        )
