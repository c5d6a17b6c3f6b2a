"""Bad ufunc input gets NumPy's kind of error, naming the ufunc and the operand."""

from __future__ import annotations

import numpy as np
import pytest

from cujit.ufunc import Reduce, guvectorize, vectorize
from cujit.ufunc.resolve import UFuncTypeError


def _add(a, b):
    return a + b


def _matmul(a, b, c):
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            s = 0.0
            for k in range(a.shape[1]):
                s += a[i, k] * b[k, j]
            c[i, j] = s


ADD = vectorize(["float32(float32, float32)"], target="cpu")(_add)
MATMUL = guvectorize(
    ["void(float64[:,:], float64[:,:], float64[:,:])"], "(m,n),(n,p)->(m,p)", target="cpu"
)(_matmul)


def test_no_matching_loop_names_the_ufunc_and_types():
    with pytest.raises(
        TypeError,
        match=r"ufunc '_add' not supported for the input types "
        r"\(dd\).*'safe'",
    ):
        ADD(np.ones(3), np.ones(3))
    assert issubclass(UFuncTypeError, TypeError)


def test_shapes_that_do_not_broadcast():
    with pytest.raises(
        ValueError,
        match=r"ufunc '_add': operands could not be broadcast "
        r"together with shapes \(3,\) \(4,\)",
    ):
        ADD(np.ones(3, np.float32), np.ones(4, np.float32))


def test_out_of_the_wrong_dtype_or_shape():
    x = np.ones(5, np.float32)
    with pytest.raises(
        TypeError,
        match=r"ufunc '_add' output \(typecode 'f'\) could not be "
        r"coerced to provided output parameter \(typecode 'l'\)",
    ):
        ADD(x, x, out=np.zeros(5, np.int64))
    with pytest.raises(ValueError, match=r"ufunc '_add': output operand has shape \(4,\)"):
        ADD(x, x, out=np.zeros(4, np.float32))


def test_wrong_number_of_inputs():
    with pytest.raises(TypeError, match="ufunc '_add' takes 2 input"):
        ADD(np.ones(2, np.float32))


def test_bad_signatures_are_refused():
    with pytest.raises(TypeError, match="takes and returns scalars"):
        vectorize(["float32(float32[:], float32)"], target="cpu")(_add)
    with pytest.raises(TypeError, match="has 1 arguments; the function takes 2"):
        vectorize(["float32(float32)"], target="cpu")(_add)


def test_gufunc_core_dimension_mismatch_names_the_operand():
    with pytest.raises(
        ValueError,
        match=r"gufunc '_matmul': input operand 1 has a mismatch "
        r"in its core dimension n.*size 5 is different from 4",
    ):
        MATMUL(np.ones((2, 3, 4)), np.ones((2, 5, 3)))


def test_gufunc_too_few_dimensions_and_loop_broadcast():
    with pytest.raises(
        ValueError,
        match=r"input operand 0 does not have enough dimensions "
        r"\(has 1, gufunc core with signature "
        r"\(m,n\),\(n,p\)->\(m,p\) requires 2\)",
    ):
        MATMUL(np.ones(4), np.ones((4, 4)))
    with pytest.raises(ValueError, match=r"ufunc '_matmul': operands could not be broadcast"):
        MATMUL(np.ones((2, 3, 3)), np.ones((5, 3, 3)))


def test_gufunc_no_matching_loop():
    with pytest.raises(TypeError, match=r"ufunc '_matmul' not supported for the input types"):
        MATMUL(np.ones((2, 2), np.complex128), np.ones((2, 2)))


def test_reduce_refuses_2d_and_complex():
    red = Reduce(_add, target="cpu")
    with pytest.raises(TypeError, match="only 1-D arrays"):
        red(np.ones((2, 2)))
    with pytest.raises(TypeError, match="complex"):
        red(np.ones(4, np.complex128))


def test_gufunc_device_operand_of_another_dtype_is_not_cast():
    from cujit.targets.cpu import memory

    with pytest.raises(
        TypeError,
        match=r"gufunc '_matmul': input operand 0 is a device array "
        r"of float32.*does not support \.astype\(\)",
    ):
        MATMUL(memory.to_device(np.ones((2, 2), np.float32)), np.ones((2, 2)))
