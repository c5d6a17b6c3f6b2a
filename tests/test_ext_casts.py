"""Casts of the extension API (``lower_cast``), in the style of cuDF's masked values.

A small library written against numba's names (``numba.cuda.cudaimpl.registry.lower_cast``,
``Type.unify``), imported from cujit: a ``MaskedType(value_type)`` struct of a value and
its validity, a cast turning any number into a valid masked value (cuDF's
``lower_cast(types.Any, MaskedType)``), one between masked types, and one from another
library type.  Kernels on the CPU target merge numbers and masked values on branches,
return both from a device function, store numbers into arrays of masked values and
pass numbers where a masked value is asked for; every value is checked against plain
Python.  Bad casts are cujit errors at the user's line.
"""

from __future__ import annotations

import inspect
import os

import numpy as np
import pytest
from llvmlite import ir as ll

import cujit
from cujit import cuda, types
from cujit.cache.key import kernel_key
from cujit.cuda import cgutils
from cujit.cuda.cudaimpl import lower as cuda_lower
from cujit.cuda.cudaimpl import registry as cuda_lowering_registry
from cujit.cuda.extending import (
    intrinsic,
    make_attribute_wrapper,
    models,
    register_model,
    type_callable,
)
from cujit.diagnostics import LoweringError, TypingError
from cujit.options import Options


class Masked:
    """The host's masked value: what a kernel's masked values mean."""

    def __init__(self, value, valid):
        self.value, self.valid = value, valid


class MaskedType(types.Type):
    def __init__(self, value):
        self.value_type = value
        super().__init__(name=f"Masked({value})")

    def unify(self, context, other):
        # as cuDF's: two masked types unify their values, a number joins the value type
        if isinstance(other, MaskedType):
            return MaskedType(context.unify_pairs(self.value_type, other.value_type))
        merged = context.unify_pairs(self.value_type, other)
        return None if merged is None else MaskedType(merged)


@register_model(MaskedType)
class MaskedModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("value", fe_type.value_type), ("valid", types.bool_)])


make_attribute_wrapper(MaskedType, "value", "value")
make_attribute_wrapper(MaskedType, "valid", "valid")


@type_callable(Masked)
def _type_masked(context):
    def typer(value, valid):
        if isinstance(value, types.Number) and isinstance(valid, types.Boolean):
            return MaskedType(value)
        return None

    return typer


@cuda_lower(Masked, types.Number, types.Boolean)
def _lower_masked(context, builder, sig, args):
    m = cgutils.create_struct_proxy(sig.return_type)(context, builder)
    m.value, m.valid = args
    return m._getvalue()


# Filed before the cast from Any, which also matches a masked source: the more
# specific one is chosen all the same, as numba chooses.
@cuda_lowering_registry.lower_cast(MaskedType, MaskedType)
def _masked_to_masked(context, builder, fromty, toty, val):
    operand = cgutils.create_struct_proxy(fromty)(context, builder, value=val)
    out = cgutils.create_struct_proxy(toty)(context, builder)
    out.value = context.cast(builder, operand.value, fromty.value_type, toty.value_type)
    out.valid = operand.valid
    return out._getvalue()


@cuda_lowering_registry.lower_cast(types.Any, MaskedType)
def _any_to_masked(context, builder, fromty, toty, val):
    out = cgutils.create_struct_proxy(toty)(context, builder)
    out.value = context.cast(builder, val, fromty, toty.value_type)
    out.valid = context.get_constant(types.boolean, 1)
    return out._getvalue()


class Reading:
    """Another library type: a sensor reading, negative where the sensor failed."""

    def __init__(self, v):
        self.v = v


class ReadingType(types.Type):
    def __init__(self):
        super().__init__(name="Reading")


reading = ReadingType()


@register_model(ReadingType)
class ReadingModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("v", types.float64)])


@type_callable(Reading)
def _type_reading(context):
    return lambda v: reading if isinstance(v, types.Float) else None


@cuda_lower(Reading, types.Float)
def _lower_reading(context, builder, sig, args):
    r = cgutils.create_struct_proxy(reading)(context, builder)
    r.v = args[0]
    return r._getvalue()


# Between two library types: a reading is valid where it is not negative.
@cuda_lowering_registry.lower_cast(ReadingType, MaskedType)
def _reading_to_masked(context, builder, fromty, toty, val):
    r = cgutils.create_struct_proxy(fromty)(context, builder, value=val)
    out = cgutils.create_struct_proxy(toty)(context, builder)
    out.value = context.cast(builder, r.v, types.float64, toty.value_type)
    zero = context.get_constant(types.float64, 0.0)
    out.valid = builder.fcmp_ordered(">=", r.v, zero)
    return out._getvalue()


MF64 = MaskedType(types.float64)


def cpu(fn):
    return cuda.jit(target="cpu")(fn)


def _merge(out_v, out_ok, x, flags):
    i = cuda.grid(1)
    if i < x.size:
        if flags[i]:
            r = Masked(x[i], x[i] > 0.0)
        else:
            r = i * 3  # an int64 on this path: the name is a Masked(float64)
        out_v[i] = r.value
        out_ok[i] = r.valid


def _poisoned(n):
    return np.full(n, np.nan), np.zeros(n, np.bool_)


def test_number_and_masked_value_merge_on_a_branch_cpu():
    x = np.array([-1.5, 2.25, 3.0, -0.5, 7.75, 1.0])
    flags = np.array([1, 0, 1, 1, 0, 0], np.bool_)
    out_v, out_ok = _poisoned(6)
    cpu(_merge)[1, 8](out_v, out_ok, x, flags)
    want = [Masked(x[i], x[i] > 0) if flags[i] else Masked(float(i * 3), True) for i in range(6)]
    np.testing.assert_array_equal(out_v, [m.value for m in want])
    np.testing.assert_array_equal(out_ok, [m.valid for m in want])


def test_number_before_a_loop_and_masked_value_in_it_merge_cpu():
    @cpu
    def k(out_v, out_ok, x):
        last = 0  # an int64 until the loop assigns a masked value: a Masked(float64)
        for i in range(x.size):
            if x[i] > 0.0:
                last = Masked(x[i], x[i] < 5.0)
        out_v[0] = last.value
        out_ok[0] = last.valid

    for x in ([1.0, -2.0, 3.0, 6.0], [4.5, -1.0], [-1.0, -3.0]):
        out_v, out_ok = _poisoned(1)
        k[1, 1](out_v, out_ok, np.array(x))
        positive = [v for v in x if v > 0]
        want = Masked(positive[-1], positive[-1] < 5.0) if positive else Masked(0.0, True)
        assert (out_v[0], out_ok[0]) == (want.value, want.valid)


def test_a_cast_filed_one_way_unifies_a_type_without_unify_cpu():
    @cpu
    def k(out_v, out_ok, x):
        i = cuda.grid(1)
        if i < x.size:
            if i % 2 == 0:
                r = Reading(x[i])  # a Reading, which converts to Masked(float64) only
            else:
                r = Masked(x[i] * 2.0, True)
            out_v[i] = r.value
            out_ok[i] = r.valid

    x = np.array([1.5, -2.0, -0.25, 3.0])
    out_v, out_ok = _poisoned(4)
    k[1, 4](out_v, out_ok, x)
    want = [Masked(v, v >= 0) if i % 2 == 0 else Masked(v * 2.0, True) for i, v in enumerate(x)]
    np.testing.assert_array_equal(out_v, [m.value for m in want])
    np.testing.assert_array_equal(out_ok, [m.valid for m in want])


@cuda.jit(device=True)
def _masked_or_zero(x):
    if x > 1.0:
        return Masked(x, x < 5.0)
    return 0  # an int64: the function returns Masked(float64)


def test_device_function_returns_masked_and_number_cpu():
    @cpu
    def k(out_v, out_ok, x):
        i = cuda.grid(1)
        if i < x.size:
            r = _masked_or_zero(x[i])
            out_v[i] = r.value
            out_ok[i] = r.valid

    x = np.array([-2.0, 0.5, 1.5, 4.0, 6.5])
    out_v, out_ok = _poisoned(5)
    k[1, 5](out_v, out_ok, x)
    want = [Masked(v, v < 5.0) if v > 1.0 else Masked(0.0, True) for v in x]
    np.testing.assert_array_equal(out_v, [m.value for m in want])
    np.testing.assert_array_equal(out_ok, [m.valid for m in want])


def test_stores_into_an_array_of_masked_values_cast_cpu():
    @cpu
    def k(out_v, out_ok, x, n):
        arr = cuda.local.array(6, MF64)
        for i in range(6):
            if i % 3 == 0:
                arr[i] = x[i]  # float64 -> Masked(float64): valid
            elif i % 3 == 1:
                arr[i] = Masked(n[i], n[i] % 2 == 0)  # Masked(int64) -> Masked(float64)
            else:
                arr[i] = Reading(x[i])  # another library type
        for i in range(6):
            out_v[i] = arr[i].value
            out_ok[i] = arr[i].valid

    x = np.array([1.25, -9.0, -3.5, 2.0, 8.0, 0.75])
    n = np.array([5, 4, 7, 1, 6, 3], np.int64)
    out_v, out_ok = _poisoned(6)
    k[1, 1](out_v, out_ok, x, n)
    want = []
    for i in range(6):
        if i % 3 == 0:
            want.append(Masked(x[i], True))
        elif i % 3 == 1:
            want.append(Masked(float(n[i]), n[i] % 2 == 0))
        else:
            want.append(Masked(x[i], x[i] >= 0))
    np.testing.assert_array_equal(out_v, [m.value for m in want])
    np.testing.assert_array_equal(out_ok, [m.valid for m in want])


@intrinsic
def _value_or(typingctx, m, default):
    """An intrinsic asking for a Masked(float64): a number passed converts to one."""
    sig = types.float64(MF64, types.float64)

    def codegen(context, builder, sig, args):
        s = cgutils.create_struct_proxy(MF64)(context, builder, value=args[0])
        return builder.select(s.valid, s.value, args[1])

    return sig, codegen


def test_argument_converted_by_cast_where_a_masked_value_is_asked_for_cpu():
    @cpu
    def k(out, x, n):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = _value_or(n[i], -1.0) + _value_or(Masked(x[i], x[i] > 0.0), -2.0)

    x = np.array([0.5, -1.0, 3.0])
    n = np.array([4, -7, 10], np.int32)
    out = np.full(3, np.nan)
    k[1, 3](out, x, n)
    np.testing.assert_array_equal(
        out, [float(n[i]) + (x[i] if x[i] > 0 else -2.0) for i in range(3)]
    )


def test_casts_compile_for_the_cuda_target():
    sig = (types.float64[::1], types.bool_[::1], types.float64[::1], types.bool_[::1])
    ptx, _ = cuda.compile_ptx(_merge, sig)
    assert ".entry" in ptx and "_merge" in ptx


@pytest.mark.gpu
def test_number_and_masked_value_merge_on_a_branch_gpu():
    x = np.array([-1.5, 2.25, 3.0, -0.5, 7.75, 1.0])
    flags = np.array([0, 1, 1, 0, 1, 0], np.bool_)
    out_v, out_ok = _poisoned(6)
    cuda.jit(_merge)[1, 8](out_v, out_ok, x, flags)
    want = [Masked(x[i], x[i] > 0) if flags[i] else Masked(float(i * 3), True) for i in range(6)]
    np.testing.assert_array_equal(out_v, [m.value for m in want])
    np.testing.assert_array_equal(out_ok, [m.valid for m in want])


class _Bad(types.Type):
    def __init__(self, what):
        super().__init__(name=f"Bad({what})")


@register_model(_Bad)
class _BadModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("v", types.int64)])


WRONG, RAISES, NONE_FILED = _Bad("wrong"), _Bad("raises"), _Bad("none")


@cuda_lowering_registry.lower_cast(types.Integer, WRONG)
def _wrong_llvm_type(context, builder, fromty, toty, val):
    return val  # the i64 itself, not the struct {i64}


@cuda_lowering_registry.lower_cast(types.Integer, RAISES)
def _raising(context, builder, fromty, toty, val):
    raise ValueError("this cast is broken")


def _line(fn, marker: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, text in enumerate(lines) if marker in text)


def _store_into(bad):
    def k(n):
        arr = cuda.local.array(2, bad)
        arr[0] = n[0]  # the cast
        n[1] = arr[0].v

    return k


@pytest.mark.parametrize(
    "bad, error, message",
    [
        (
            WRONG,
            LoweringError,
            r"cast from int64 to Bad\(wrong\) returned a value of LLVM type i64",
        ),
        (RAISES, LoweringError, "raised ValueError: this cast is broken"),
        (NONE_FILED, TypingError, r"cannot convert int64 to Bad\(none\)"),
    ],
)
def test_bad_casts_are_errors_at_the_users_line(bad, error, message):
    make_attribute_wrapper(_Bad, "v", "v")
    k = _store_into(bad)
    with pytest.raises(error, match=message) as err:
        cpu(k)[1, 1](np.array([3, 0], np.int64))
    assert err.value.loc.file == __file__
    assert err.value.loc.line == _line(k, "# the cast")
    assert os.path.dirname(cujit.__file__) not in str(err.value)  # no cujit file paths
    # the process goes on compiling and running kernels
    out_v, out_ok = _poisoned(1)
    cpu(_merge)[1, 1](out_v, out_ok, np.array([2.5]), np.array([True]))
    assert out_v[0] == 2.5 and out_ok[0]


def test_casts_are_part_of_the_cache_key_of_kernels_with_library_types():
    args = (types.float64[::1], types.bool_[::1], types.float64[::1], types.bool_[::1])

    def plain(out, x):
        out[0] = x[0] + 1.0

    before = kernel_key(_merge, args, Options())
    plain_before = kernel_key(plain, (types.float64[::1], types.float64[::1]), Options())
    assert before is not None and before == kernel_key(_merge, args, Options())

    class Other(types.Type):
        pass

    cuda_lowering_registry.lower_cast(Other, MaskedType)(lambda c, b, f, t, v: v)
    assert kernel_key(_merge, args, Options()) != before
    # a kernel touching no library's type keeps its key
    assert kernel_key(plain, (types.float64[::1], types.float64[::1]), Options()) == plain_before


def test_registry_lists_its_casts():
    listed = [impl for impl, _ in cuda_lowering_registry.casts]
    assert _any_to_masked in listed and _masked_to_masked in listed


@intrinsic
def _as_pointer(typingctx, addr):
    """numba's idiom: an intrinsic typed CPointer returns an LLVM pointer."""
    sig = types.CPointer(types.float64)(types.uint64)

    def codegen(context, builder, sig, args):
        return builder.inttoptr(args[0], ll.DoubleType().as_pointer())

    return sig, codegen


def test_intrinsic_returning_an_llvm_pointer_for_a_cpointer_cpu():
    @cpu
    def k(out, addr):
        p = _as_pointer(addr[0])
        out[0] = p[1] * 2.0

    x = np.array([1.5, -4.25, 3.0])
    out = np.full(1, np.nan)
    k[1, 1](out, np.array([x.ctypes.data], np.uint64))
    assert out[0] == -8.5
