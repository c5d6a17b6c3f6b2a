"""Kernels with several declared signatures pick one as numba does (cujit/overloads.py),
and launch mistakes raise numba's kinds of exception (ValueError, TypeError).

Values are reasoned out: 1 + 2**-25 is 1.0 in float32 and 1.0000000298023224 in
float64, so which signature ran shows in the result."""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda, overloads
from cujit.diagnostics import LaunchError
from cujit.types import core as t


def add_kernel(r, x, y):
    r[0] = x + y


def _jit(sigs):
    return cuda.jit(sigs, target="cpu")(add_kernel)


@pytest.mark.parametrize(
    "given,declared,kind",
    [
        (t.int32, t.int64, overloads.PROMOTE),
        (t.int32, t.float64, overloads.SAFE),
        (t.int64, t.float64, overloads.SAFE),  # numba's exception to the rule
        (t.int64, t.float32, overloads.UNSAFE),  # via float64, then narrowed
        (t.float64, t.int32, overloads.UNSAFE),
        (t.uint8, t.int64, overloads.SAFE),  # uint8 -> int16 safe, then promotions
        (t.float32, t.complex128, overloads.SAFE),
        (t.complex128, t.float64, overloads.NONE),  # complex never becomes real
        (t.float64, t.float64, overloads.EXACT),
    ],
)
def test_conversion_kinds_follow_numbas_rules(given, declared, kind):
    assert overloads.conversion(given, declared) == kind


def test_array_conversions():
    c, a = t.Array(t.float32, 1, "C"), t.Array(t.float32, 1, "A")
    assert overloads.conversion(c, a) == overloads.SAFE
    assert overloads.conversion(a, c) == overloads.NONE  # any strides are not contiguous
    assert overloads.conversion(c, t.Array(t.float64, 1, "A")) == overloads.NONE


def test_the_best_signature_runs():
    f = _jit(["(float64[::1], float32, float32)", "(float64[::1], float64, float64)"])
    r = np.full(1, -7.0)
    f[1, 1](r, np.float32(1), np.float32(2**-25))
    assert r[0] == 1.0  # float32 addition: exact float32 match
    r = np.full(1, -7.0)
    f[1, 1](r, 1, 2**-25)  # int64 -> float64 is safe, -> float32 unsafe
    assert r[0] == 1.0000000298023224
    assert len(f.overloads) == 2


def test_int32_goes_to_the_float64_signature_rather_than_int64_with_a_float():
    f = _jit(["(int64[::1], int64, int64)", "(float64[::1], float64, float64)"])
    r = np.full(1, -7.0)
    f[1, 1](r, np.int32(1), 2.5)
    assert r[0] == 3.5


def test_no_matching_definition_is_a_type_error():
    f = _jit(["(int64[::1], int64, int64)", "(float64[::1], float64, float64)"])
    with pytest.raises(TypeError, match="No matching definition") as info:
        f[1, 1](np.zeros(1, np.complex128), 1j, 1j)
    assert isinstance(info.value, LaunchError)
    assert len(f.overloads) == 2  # nothing compiled for the new types


def test_ambiguous_signatures_are_a_type_error_naming_the_best_two():
    f = _jit(
        [
            "(float64[::1], float32, float64)",
            "(float64[::1], float64, float32)",
            "(float64[::1], int64, int64)",
        ]
    )
    with pytest.raises(TypeError, match="Ambiguous overloading") as info:
        f[1, 1](np.zeros(1), 1.0, 2.0)
    text = str(info.value)
    assert "float32, float64) -> none" in text and "float64, float32) -> none" in text
    assert "int64" not in text


def test_a_float_cannot_be_passed_as_an_int():
    f = _jit("(int32[::1], int32, int32)")
    r = np.full(1, -7, np.int32)
    with pytest.raises(TypeError, match="cannot pass as the signature's int32"):
        f[1, 1](r, 12.3, 45.6)
    with pytest.raises(TypeError, match="No matching definition"):
        f[1, 1](r, 12.3, 45.6j)
    assert r[0] == -7
    f[1, 1](r, 123, 456)  # int64 -> int32: allowed, as numba's unsafe integer narrowing
    assert r[0] == 579


def test_device_function_signatures_pick_the_best():
    add = cuda.jit(["(float32, float32)", "(float64, float64)"], device=True)(lambda x, y: x + y)

    @cuda.jit(target="cpu")
    def k(r, x, y):
        r[0] = add(x, y)

    r = np.full(1, -7.0)
    k[1, 1](r, 1, 2**-25)
    assert r[0] == 1.0000000298023224


def test_launch_errors_are_numbas_exception_kinds():
    f = cuda.jit(add_kernel, target="cpu")
    with pytest.raises(ValueError, match=r"griddim must be a sequence of 1, 2 or 3 integers"):
        f[(1, 2, 3, 4), 1]
    with pytest.raises(ValueError, match=r"got \[3, 4, 5, 6\]"):
        f[1, (3, 4, 5, 6)]
    with pytest.raises(TypeError, match=r"griddim must be a sequence of integers, got \[2.0\]"):
        f[2.0, 3]
    with pytest.raises(TypeError, match=r"blockdim must be a sequence of integers"):
        f[2, 3.0]
    with pytest.raises(ValueError, match="launch configuration was not specified"):
        f(0)
    with pytest.raises(ValueError, match="Can't create ForAll with negative task count"):
        f.forall(-1)


def test_specialize_is_cached_and_refused_twice():
    f = cuda.jit(add_kernel, target="cpu")
    a = f.specialize(t.float64[::1], t.float64, t.float64)
    assert f.specialize(t.float64[::1], t.float64, t.float64) is a
    b = f.specialize(t.float64[:], t.float64, t.float64)
    assert b is not a and len(f.specializations) == 2
    with pytest.raises(RuntimeError, match="Dispatcher already specialized"):
        a.specialize(t.float64[::1], t.float64, t.float64)
    one = cuda.jit("void(float64[::1], float64, float64)", target="cpu")(add_kernel)
    with pytest.raises(RuntimeError, match="Dispatcher already specialized"):
        one.specialize(t.float32[::1], t.float32, t.float32)
    # One declared signature: queries answer for it alone, not as a dict.
    assert isinstance(one.get_shared_mem_per_block(), int)
    many = _jit(["(int64[::1], int64, int64)", "(float64[::1], float64, float64)"])
    assert set(many.get_shared_mem_per_block()) == set(many.overloads)


def test_specialization_inspection():
    f = cuda.jit("void(float64[::1], float64, float64)", target="cpu")(add_kernel)
    spec = f.overloads[f.signatures[0]]
    assert spec.inspect_llvm() == f.inspect_llvm(f.signatures[0])
    assert spec.inspect_asm((9, 0)) == f.inspect_asm(f.signatures[0])


def test_one_signature_takes_integer_arrays_of_the_other_signedness_as_views():
    @cuda.jit("void(int32[:, :])", target="cpu")
    def decrement(ary):
        ary[cuda.threadIdx.x, cuda.threadIdx.y] -= 1

    ary = np.arange(1, 33, dtype=np.uint32).reshape(4, 8)
    decrement[1, (4, 8)](ary)
    assert np.array_equal(ary, np.arange(0, 32, dtype=np.uint32).reshape(4, 8))
    with pytest.raises(TypeError, match="No matching definition"):
        decrement[1, (4, 8)](np.zeros((4, 8), np.float32))  # other bits: refused
    with pytest.raises(TypeError, match="No matching definition"):
        decrement[1, (4, 8)](np.zeros((4, 8), np.uint64))
