"""Calls: the one table from Python callables to the rules that type them.

A call's callee is always a compile-time object (``PyObject``) by the time it
is typed, so resolution is a plain dictionary lookup by the object itself:
``CALLS[math.sqrt]``, ``CALLS[cuda.atomic.add]``, ``CALLS[np.float32]``.  The
one other callee is a ``DeviceFunction`` (``function_calls``: compiled for the
call's argument types, called through ``CallFunction``).
Every rule takes the ``Typer`` and a ``CallSite`` and returns the typed value
of the call; nothing else registers implementations.

    %4 = call %3(%2)             # %3 = const <math.sqrt>, %2: float32
  becomes
    %4: float32 = intrinsic math.sqrt (%2)
"""

from __future__ import annotations

import math
import types as pytypes
from collections.abc import Callable

import numpy as np

from cujit import device_api as cuda
from cujit.diagnostics import Loc, TypingError, UnsupportedError
from cujit.foreign import DeclaredFunction
from cujit.frozen import mutable
from cujit.hints import NUMPY_ALLOCATORS, hint
from cujit.infer import atomic_calls as at
from cujit.infer import bf16_calls, closures
from cujit.infer import builtin_calls as bi
from cujit.infer import complex_calls as cx
from cujit.infer import cuda_calls as cu
from cujit.infer import warp_calls as wp
from cujit.infer.access import namedtuple_constructor
from cujit.infer.array_methods import array_method_rules
from cujit.infer.context import Typer
from cujit.infer.extension_calls import extension_rule, overload_device_function
from cujit.infer.extension_templates import templated_builtin
from cujit.infer.foreign_calls import call_foreign
from cujit.infer.function_calls import (
    as_device_function,
    call_device_function,
    refuse_closed_dispatcher,
)
from cujit.infer.iteration import iteration_rules
from cujit.infer.list_display import list_display_rules
from cujit.infer.math_extra_calls import math_extra_rules
from cujit.infer.numeric import describe
from cujit.infer.reduction_calls import reduction_rules
from cujit.infer.slicing import slicing_rules
from cujit.infer.vector_calls import vector_rule
from cujit.ir import Call, Const, Value, intrinsics
from cujit.types import (
    SCALARS,
    PyObject,
    Scalar,
    Type,
    describe_object,
    int64,
    is_namedtuple_class,
)

_MISSING = object()


@mutable
class CallSite:
    """One call being typed: its op, typed arguments and helpers to read them."""

    op: Call
    name: str
    args: list[Value]
    kwargs: dict[str, Value]

    @property
    def loc(self) -> Loc:
        return self.op.loc

    def result(self, t: Type) -> Value:
        """The call's own result id, typed ``t`` (for the op that computes it)."""
        return Value(self.op.result.id, t)

    def expect(self, lo: int, hi: int, keywords: tuple[str, ...] = ()) -> None:
        """Check the argument count and that only ``keywords`` are passed by name."""
        for k in self.kwargs:
            if k not in keywords:
                raise TypingError(
                    f"{self.name}() got an unexpected keyword argument '{k}'", self.loc
                )
        n = len(self.args) + len(self.kwargs)
        if not lo <= n <= hi:
            want = (
                "no"
                if hi == 0
                else str(lo)
                if lo == hi
                else f"{lo} to {hi}"
                if hi < 99
                else f"at least {lo}"
            )
            noun = "argument" if want == "1" else "arguments"
            raise TypingError(f"{self.name}() takes {want} {noun} ({n} given)", self.loc)

    def arg(self, pos: int, name: str, default=_MISSING) -> Value:
        """Argument ``pos`` or keyword ``name``."""
        if pos < len(self.args):
            if name in self.kwargs:
                raise TypingError(f"{self.name}() got multiple values for '{name}'", self.loc)
            return self.args[pos]
        if name in self.kwargs:
            return self.kwargs[name]
        if default is _MISSING:
            raise TypingError(f"{self.name}() is missing its '{name}' argument", self.loc)
        return default


Rule = Callable[[Typer, CallSite], Value]


# The table.  Casts are spelled three ways in kernels (cujit/numba type objects,
# numpy scalar types, Python's int/float/bool) and all mean an astype-style Cast.
CALLS: dict[object, Rule] = {
    range: bi.call_range,
    len: bi.call_len,
    tuple: bi.call_tuple,
    min: bi.min_max("min"),
    max: bi.min_max("max"),
    abs: bi.call_abs,
    int: bi.cast_to(int64),
    float: bi.call_float,
    bool: bi.call_bool,
    cuda.grid: cu.grid("cuda.grid"),
    cuda.gridsize: cu.grid("cuda.gridsize"),
    cuda.syncthreads: cu.call_syncthreads,
    cuda.syncthreads_count: cu.barrier_reduce("syncthreads_count"),
    cuda.syncthreads_and: cu.barrier_reduce("syncthreads_and"),
    cuda.syncthreads_or: cu.barrier_reduce("syncthreads_or"),
    cuda.syncwarp: cu.call_syncwarp,
    cuda.cg.this_grid: cu.call_this_grid,
    cuda.grid_group.sync: cu.call_grid_sync,
    cuda.threadfence: cu.fence("threadfence"),
    cuda.nanosleep: cu.call_nanosleep,
    cuda.threadfence_block: cu.fence("threadfence_block"),
    cuda.threadfence_system: cu.fence("threadfence_system"),
    cuda.shared.array: cu.array_alloc("shared.array"),
    cuda.local.array: cu.array_alloc("local.array"),
    cuda.const.array_like: cu.call_const_array_like,
    **{getattr(cuda.atomic, f): at.atomic_rmw(f) for f in at.ATOMIC_OPS},
    cuda.atomic.cas: at.call_cas,
    cuda.atomic.compare_and_swap: at.call_compare_and_swap,
    **{getattr(cuda, f): wp.shuffle(f) for f in wp.SHUFFLES},
    **{getattr(cuda, f): wp.vote(f) for f in wp.VOTES},
    cuda.match_any_sync: wp.match("match_any_sync"),
    cuda.match_all_sync: wp.match("match_all_sync"),
    cuda.activemask: wp.lane_mask("activemask"),
    cuda.lanemask_lt: wp.lane_mask("lanemask_lt"),
    cuda.popc: wp.bit_count("popc"),
    cuda.clz: wp.bit_count("clz"),
    cuda.ffs: wp.call_ffs,
    cuda.brev: wp.call_brev,
    cuda.fma: wp.call_fma,
    cuda.cbrt: wp.call_cbrt,
    cuda.selp: wp.call_selp,
    math.isnan: bi.float_test("isnan", False),
    math.isinf: bi.float_test("isinf", False),
    math.isfinite: bi.float_test("isfinite", True),
    **{getattr(math, f): bi.math_unary(f) for f in intrinsics.MATH_UNARY},
    **{getattr(math, f): bi.math_binary(f) for f in intrinsics.MATH_BINARY},
    math.trunc: bi.math_trunc,
    math.degrees: bi.math_scale("degrees", 180.0 / math.pi),
    math.radians: bi.math_scale("radians", math.pi / 180.0),
    **{s: bi.cast_to(s) for s in SCALARS},
    **{s.dtype.type: bi.cast_to(s) for s in SCALARS},
    **cx.complex_rules(),  # complex(), z.conjugate()
    **iteration_rules(),  # zip(), enumerate()
    **slicing_rules(),  # a:b:c
    **math_extra_rules(),  # math.exp2, frexp, ldexp, modf, nextafter, remainder
    **reduction_rules(),  # np.sum(a), np.nanmax(a)... of whole arrays
    **closures.closure_rules(),  # nested functions, f(*args)
    **array_method_rules(),  # a.reshape(), a.view(dtype), a.copy()
    **list_display_rules(),  # [a, b]: refused where used (a shape's in numba's words)
}
CALLS.update(bf16_calls.bf16_rules(CALLS))  # cuda.bf16; math/abs on bfloat16

# The rest of the table: families of callees most kernels never call, whose modules are
# imported (and rows made) at the first callee the rows above lack.  Their keys are
# none of the rows above (tests/test_lazy_tables.py checks it), so loading them changes
# no rule already in the table.  (module in cujit.infer, function making its rows)
LAZY_FAMILIES: tuple[tuple[str, str], ...] = (
    ("print_calls", "print_rules"),  # print()
    ("cmath_calls", "cmath_rules"),  # cmath.*
    ("numpy_calls", "numpy_rules"),  # np.sin and friends on scalars
    ("fp16_calls", "fp16_rules"),  # cuda.fp16.h*
    ("libdevice_calls", "libdevice_rules"),  # cuda.libdevice.*
    ("operator_calls", "operator_rules"),  # operator.add... as values
    ("rounding_calls", "rounding_rules"),  # round(), pow()
    ("cache_hint_calls", "cache_hint_rules"),  # cuda.ldcg, cuda.stcs...
    ("dtype_calls", "dtype_rules"),  # np.dtype("int32"): a compile-time constant
    ("fp8_calls", "fp8_rules"),  # the fp8 types and conversions
    ("mma_calls", "mma_rules"),  # cuda.mma, cuda.ldmatrix, cuda.cp_async...
)
# Calls whose arguments include constant strings (cuda.mma's form, cp_async's cache).
_STRING_CALLS = (cuda.mma, cuda.cp_async)
_families_loaded = False


def family_rows() -> dict:
    """The rows of ``LAZY_FAMILIES``, in order (made afresh at each call)."""
    import importlib

    rows: dict = {}
    for module, function in LAZY_FAMILIES:
        rows.update(getattr(importlib.import_module(f"cujit.infer.{module}"), function)())
    return rows


def _load_families() -> bool:
    """Add ``LAZY_FAMILIES``' rows to ``CALLS`` once; whether this call added them."""
    global _families_loaded
    if _families_loaded:
        return False
    CALLS.update(family_rows())  # whole rows, each key once: a racing thread adds the same
    _families_loaded = True
    return True


def rule_for(fn: object) -> Rule | None:
    """``CALLS[fn]``, loading the lazy families at the first callee the table lacks;
    None for a callee it has no row for (or an unhashable object)."""
    try:
        rule = CALLS.get(fn)
        if rule is None and _load_families():
            rule = CALLS.get(fn)
    except TypeError:  # an unhashable object: certainly not in the table
        return None
    return rule


def callee_name(fn: object) -> str:
    """How a callee is named in messages: ``foo`` for user functions, else qualified."""
    if hasattr(fn, "py_func"):  # a @cuda.jit kernel or device function: the user's name
        return fn.__name__
    if isinstance(fn, (pytypes.FunctionType, type)) or getattr(fn, "__module__", "") in (
        "builtins",
        None,
    ):
        return getattr(fn, "__qualname__", None) or describe_object(fn)
    return user_spelling(describe_object(fn))


def user_spelling(name: str) -> str:
    """``cujit.cuda.syncthreads`` as kernels spell it: ``cuda.syncthreads``."""
    return name.removeprefix("cujit.")


def _not_callable_hint(fn: object, name: str) -> str | None:
    if isinstance(fn, pytypes.FunctionType):
        return hint("host-function", name=name)
    short = name.removeprefix("numpy.")  # the messages' spelling of NumPy's functions
    # np.median, np.linalg.norm...: array functions a kernel's threads compute together
    if short != name and "." not in short.removeprefix("linalg."):
        return (
            hint("numpy-allocation")
            if short in NUMPY_ALLOCATORS
            else hint("numpy-function", name=f"np.{short}")
        )
    return None


def _lookup(fn: object) -> Rule | None:
    rule = rule_for(fn)
    if rule is not None:
        return rule
    try:
        hash(fn)
    except TypeError:  # an unhashable object: no callee kernels know
        return None
    # cuda.float4(...) and the other vector types; bfloat16 from ml_dtypes
    return vector_rule(fn) or bf16_calls.ml_dtypes_rule(fn)


# Callees whose dtype argument (this position, or ``dtype=``) may be a NumPy dtype's name.
_DTYPE_NAME_CALLEES = ((cuda.shared.array, 1), (cuda.local.array, 1), (np.dtype, 0))
# Callees whose alignment (position 2, or ``alignment=``) their rule checks, strings included.
_ALIGNMENT_CALLEES = (cuda.shared.array, cuda.local.array)


def _is_shape(fn: object, site: CallSite, v: Value) -> bool:
    """Whether ``v`` is an array allocation's shape, which its rule checks itself (and
    refuses in numba's words: a string or a list display among them)."""
    if fn is not cuda.shared.array and fn is not cuda.local.array:
        return False
    return v is site.kwargs.get("shape") or (bool(site.args) and v is site.args[0])


def _is_dtype_name(fn: object, site: CallSite, v: Value) -> bool:
    """Whether ``v`` is the dtype argument of a callee that takes ``dtype="int32"`` (or
    the alignment argument that callee's rule refuses in its own words)."""
    if any(fn is c for c in _ALIGNMENT_CALLEES) and (
        v is site.kwargs.get("alignment") or (len(site.args) > 2 and v is site.args[2])
    ):
        return True
    pos = next((p for c, p in _DTYPE_NAME_CALLEES if fn is c), None)
    if pos is None:
        return False
    return v is site.kwargs.get("dtype") or (len(site.args) > pos and v is site.args[pos])


def type_call(t: Typer, op: Call) -> None:  # noqa: C901 -- dispatch on the kind of callee (exception, device function, bound method, namedtuple, table rule)
    callee = t.value(op.func)
    if isinstance(callee.type, closures.ClosureType):  # a nested function with captures
        devfn, captured = closures.closure_call_args(t, callee, op.loc)
        site = CallSite(
            op, devfn.__name__, [t.value(a) for a in op.args], {k: t.value(v) for k, v in op.kwargs}
        )
        call_device_function(t, op, devfn, site, captured=captured)
        return
    if not isinstance(callee.type, PyObject):
        t.check_defined(callee, op.loc)
        raise TypingError(f"a value of type {describe(callee.type)} is not callable", op.loc)
    fn = callee.type.value
    t.check_not_string(callee, op.loc)
    site = CallSite(
        op, callee_name(fn), [t.value(a) for a in op.args], {k: t.value(v) for k, v in op.kwargs}
    )
    if isinstance(fn, type) and issubclass(fn, BaseException):
        # Building an exception is only ever followed by a Raise: keep the class as
        # a constant and remember a string argument as the message.
        t.emit(Const(loc=op.loc, result=site.result(PyObject(fn)), value=fn))
        if (
            site.args
            and isinstance(site.args[0].type, PyObject)
            and isinstance(site.args[0].type.value, str)
        ):
            t.exc_messages[op.result.id] = site.args[0].type.value
        return
    refuse_closed_dispatcher(fn, site)
    devfn = as_device_function(fn) or overload_device_function(fn, site, t)
    if devfn is not None:
        call_device_function(t, op, devfn, site)
        return
    if isinstance(fn, DeclaredFunction):  # cuda.declare_device: infer/foreign_calls.py
        call_foreign(t, fn, site)
        return
    if isinstance(fn, cx.BoundMethod):  # z.conjugate(): the object is the first argument
        site.args.insert(0, fn.obj)
        fn = fn.func
        devfn = overload_device_function(fn, site, t)  # a library's method (overload_method)
        if devfn is not None:
            call_device_function(t, op, devfn, site)
            return
    # a built-in (abs, math.sin) of a library's value: the library's templates of it
    rule = extension_rule(fn) if templated_builtin(fn, site.args) else _lookup(fn)
    if rule is None and cuda.is_literal_unroll(fn):  # cujit's or numba's: infer/unroll.py
        rule = bi.call_literal_unroll
    if rule is None and is_namedtuple_class(fn):
        rule = namedtuple_constructor(fn)
    if rule is None and isinstance(fn, Scalar):  # datetime64[D](x): its unit's types
        rule = bi.cast_to(fn)
    if rule is None:
        rule = extension_rule(fn)  # a library's callable (cujit.extending)
    if rule is None:
        raise UnsupportedError(
            f"call to unsupported function '{site.name}'",
            op.loc,
            hint=_not_callable_hint(fn, site.name),
        )
    # print and float take string constants, as do the tensor-core calls' forms (and
    # dtype names: below)
    if fn is not print and fn is not float and not any(fn is f for f in _STRING_CALLS):
        for v in (*site.args, *site.kwargs.values()):
            if not (_is_dtype_name(fn, site, v) or _is_shape(fn, site, v)):
                t.check_not_string(v, op.loc)
            t.check_defined(v, op.loc)
    else:
        for v in (*site.args, *site.kwargs.values()):
            t.check_not_list(v, op.loc)
            t.check_defined(v, op.loc)
    result = rule(t, site)
    if result.id != op.result.id:
        t.alias(op.result, result)
