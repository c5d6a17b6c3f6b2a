"""Smaller pieces of numba's kernel language: ``int.bit_count()`` and device-function
signatures given without a return type (``"(int64, int64)"``: the return is inferred)."""

import numpy as np
import pytest

from cujit import cuda


def test_bit_count():
    @cuda.jit(target="cpu")
    def k(out, a, b):
        out[0] = a[0].bit_count()
        out[1] = b[0].bit_count()
        out[2] = b[1].bit_count()

    out = np.full(3, -1, np.int64)
    a = np.array([0xF0F3], np.uint16)
    b = np.array([-7, 2**40 + 5], np.int64)
    k[1, 1](out, a, b)
    np.testing.assert_array_equal(
        out, [int(a[0]).bit_count(), (-7).bit_count(), (2**40 + 5).bit_count()]
    )


def add(x, y):
    return x + y


def test_device_signature_without_return_type():
    add_device = cuda.jit(["(int64, int64)", "(float64, float64)"], device=True)(add)

    @cuda.jit(target="cpu")
    def k(r, x, y):
        r[0] = add_device(x, y)

    r = np.zeros(1, np.int64)
    k[1, 1](r, 1, 2)
    assert r[0] == 3
    r = np.zeros(1)
    k[1, 1](r, 1.5, 2.25)
    assert r[0] == 3.75


def test_bit_count_of_a_float_is_refused():
    @cuda.jit(target="cpu")
    def k(out, a):
        out[0] = a[0].bit_count()

    with pytest.raises(Exception) as info:
        k[1, 1](np.zeros(1), np.ones(1))
    assert "has no attribute 'bit_count'" in str(info.value)
    assert "test_language_misc.py" in str(info.value)


def test_run_time_tuple_index_and_bool_identity():
    @cuda.jit(target="cpu")
    def k(out, a, x, pred):
        out[0] = a.shape[-x]
        t = (1.5, 2, 3)
        out[1] = t[x]
        if pred is True:
            out[2] = 1.0
        else:
            out[2] = 2.0
        out[3] = pred is not False

    a = np.zeros((3, 5))
    for x, pred in ((1, True), (2, False)):
        out = np.full(4, np.nan)
        k[1, 1](out, a, x, pred)
        np.testing.assert_array_equal(
            out, [a.shape[-x], (1.5, 2, 3)[x], 1.0 if pred else 2.0, pred is not False]
        )
