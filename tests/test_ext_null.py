"""A library's null value in kernels, in the style of cuDF's ``NA``: an opaque-model
type, a global object typed by ``typeof_impl`` and built by ``lower_constant``, merged
with numbers and masked values through the types' ``unify`` and ``lower_cast``, and
tested with ``x is NA`` / ``x is not NA`` through a template of ``operator.is_``.

Kernels run on the CPU target (and compile for the CUDA target); values are checked
against plain Python's meaning of the user's function.
"""

from __future__ import annotations

import operator

import numpy as np
import pytest

from cujit import cuda, types
from cujit.cuda import cgutils
from cujit.cuda.cudadecl import registry as cuda_decl_registry
from cujit.cuda.cudaimpl import lower as cuda_lower
from cujit.cuda.cudaimpl import registry as cuda_lowering_registry
from cujit.cuda.extending import make_attribute_wrapper, models, register_model, typeof_impl
from cujit.cuda.typing import signature as nb_signature
from cujit.cuda.typing.templates import AbstractTemplate


class _Null:
    """The host's null: one object, as cuDF's NA."""

    def __repr__(self) -> str:
        return "NULL"


NULL = _Null()


class NullType(types.Type):
    def __init__(self):
        super().__init__(name="Null")

    def unify(self, context, other):
        if isinstance(other, OptType):
            return None  # OptType.unify answers
        if isinstance(other, NullType):
            return self
        return OptType(other)  # a number or NULL: an optional number


null_type = NullType()
register_model(NullType)(models.OpaqueModel)


@typeof_impl.register(_Null)
def _typeof_null(val, c):
    return null_type


@cuda_lowering_registry.lower_constant(NullType)
def _null_constant(context, builder, ty, pyval):
    return context.get_dummy_value()


class OptType(types.Type):
    """A value and whether it is there (cuDF's MaskedType)."""

    def __init__(self, value):
        self.value_type = value
        super().__init__(name=f"Opt({value})")

    def unify(self, context, other):
        if isinstance(other, NullType):
            return self
        inner = other.value_type if isinstance(other, OptType) else other
        merged = context.unify_pairs(self.value_type, inner)
        return None if merged is None else OptType(merged)


@register_model(OptType)
class OptModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("value", fe_type.value_type), ("valid", types.bool_)])


make_attribute_wrapper(OptType, "value", "value")


@cuda_lowering_registry.lower_cast(types.Number, OptType)
def _number_to_opt(context, builder, fromty, toty, val):
    out = cgutils.create_struct_proxy(toty)(context, builder)
    out.value = context.cast(builder, val, fromty, toty.value_type)
    out.valid = context.get_constant(types.boolean, 1)
    return out._getvalue()


@cuda_lowering_registry.lower_cast(NullType, OptType)
def _null_to_opt(context, builder, fromty, toty, val):
    out = cgutils.create_struct_proxy(toty)(context, builder)
    out.value = context.get_constant(toty.value_type, 0)
    out.valid = context.get_constant(types.boolean, 0)
    return out._getvalue()


@cuda_lowering_registry.lower_cast(OptType, OptType)
def _opt_to_opt(context, builder, fromty, toty, val):
    src = cgutils.create_struct_proxy(fromty)(context, builder, value=val)
    out = cgutils.create_struct_proxy(toty)(context, builder)
    out.value = context.cast(builder, src.value, fromty.value_type, toty.value_type)
    out.valid = src.valid
    return out._getvalue()


@cuda_decl_registry.register_global(operator.is_)
class OptIsNull(AbstractTemplate):
    def generic(self, args, kws):
        if isinstance(args[0], OptType) and isinstance(args[1], NullType):
            return nb_signature(types.boolean, args[0], null_type)
        return None


@cuda_lower(operator.is_, OptType, NullType)
def _opt_is_null(context, builder, sig, args):
    opt = cgutils.create_struct_proxy(sig.args[0])(context, builder, value=args[0])
    return builder.not_(opt.valid)


def cpu(fn):
    return cuda.jit(target="cpu")(fn)


@cuda.jit(device=True)
def _udf(x, k):
    # the user's function: a number, a number of another type, or NULL
    if x > 4.0:
        return NULL
    if k % 2 == 0:
        return k
    return x * 2.0


def _py_udf(x, k):
    if x > 4.0:
        return NULL
    if k % 2 == 0:
        return k
    return x * 2.0


def _apply(out_v, out_ok, x, n):
    i = cuda.grid(1)
    if i < x.size:
        r = _udf(x[i], n[i])
        if r is NULL:
            out_ok[i] = False
        else:
            out_ok[i] = True
            out_v[i] = r.value


def _apply_not(out_v, out_ok, x, n):
    i = cuda.grid(1)
    if i < x.size:
        r = _udf(x[i], n[i])
        out_ok[i] = r is not NULL
        out_v[i] = r.value if r is not NULL else -1.0


X = np.array([1.5, 6.0, -2.25, 3.0, 9.5, 0.5])
N = np.array([3, 4, 8, 7, 1, 2], np.int64)


def _want():
    return [_py_udf(x, k) for x, k in zip(X, N, strict=True)]


@pytest.mark.parametrize("kernel", [_apply, _apply_not])
def test_null_number_and_other_number_returned_and_tested_cpu(kernel):
    out_v = np.full(6, np.nan)
    out_ok = np.zeros(6, np.bool_)
    cpu(kernel)[1, 8](out_v, out_ok, X, N)
    want = _want()
    np.testing.assert_array_equal(out_ok, [w is not NULL for w in want])
    for got, w in zip(out_v, want, strict=True):
        if w is not NULL:
            assert got == float(w)
        elif kernel is _apply_not:
            assert got == -1.0


def test_null_merged_on_a_branch_cpu():
    @cpu
    def k(out_v, out_ok, x):
        i = cuda.grid(1)
        if i < x.size:
            r = NULL
            if x[i] > 0.0:
                r = x[i] + 1.0  # NULL and float64 on two paths: an Opt(float64)
            missing = r is NULL
            out_ok[i] = not missing
            out_v[i] = r.value

    out_v = np.full(6, np.nan)
    out_ok = np.zeros(6, np.bool_)
    k[1, 6](out_v, out_ok, X)
    np.testing.assert_array_equal(out_ok, X > 0)
    np.testing.assert_array_equal(out_v, np.where(X > 0, X + 1.0, 0.0))


def test_null_kernel_compiles_for_the_cuda_target():
    ptx, _ = cuda.compile_ptx(
        _apply, (types.float64[::1], types.bool_[::1], types.float64[::1], types.int64[::1])
    )
    assert ".entry" in ptx


def test_a_library_object_without_lower_constant_stays_a_compile_time_object_cpu():
    class Plain:
        scale = 3.0

    @cpu
    def k(out):
        out[0] = Plain.scale  # a class attribute read at compile time

    out = np.full(1, np.nan)
    k[1, 1](out)
    assert out[0] == 3.0
