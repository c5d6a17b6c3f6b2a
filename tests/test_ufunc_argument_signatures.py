"""cuda.vectorize with signatures given as argument types alone (numba's tuple form):
the loop's output type is what the function returns for them."""

from __future__ import annotations

import numpy as np
import pytest

from cujit.types import float32, from_dtype, int16
from cujit.ufunc import vectorize

TARGETS = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


@pytest.mark.parametrize("target", TARGETS)
def test_datetimes_give_a_timedelta_loop(target):
    day = from_dtype(np.dtype("datetime64[D]"))
    diff = vectorize([(day, day)], target=target)(lambda start, end: end - start)
    assert diff.types == ["MM->m"]
    start = np.arange("2011-03", "2011-05", dtype="datetime64[D]")
    end = start + np.arange(start.size) * 3 - 40
    got = diff(start, end)
    assert got.dtype == np.dtype("timedelta64[D]")
    assert np.array_equal(got, end - start)


@pytest.mark.parametrize("target", TARGETS)
def test_the_output_type_follows_the_functions_typing(target):
    # float32 * float32 stays float32; int16 * int16 is int64 in numba's integer rule.
    # (int16 first: NumPy's loop selection takes the first loop the inputs cast to.)
    uf = vectorize([(int16, int16), (float32, float32)], target=target)(lambda a, b: a * b - b)
    assert uf.types == ["hh->l", "ff->f"]
    a = np.linspace(-2.0, 3.0, 7, dtype=np.float32)
    b = np.float32(1.25) + a[::-1]
    got = uf(a, b)
    assert got.dtype == np.float32
    # the GPU contracts a * b - b into one fma (one rounding, as numba's code does)
    np.testing.assert_allclose(got, a * b - b, rtol=2e-7, atol=1e-6)
    i = np.arange(-3, 4, dtype=np.int16)
    got = uf(i, i + 5)
    assert got.dtype == np.int64 and np.array_equal(got, i.astype(np.int64) * (i + 5) - (i + 5))


def test_a_tuple_of_the_wrong_length_or_kind_is_refused():
    with pytest.raises(TypeError, match="has 1 arguments; the function takes 2"):
        vectorize([(float32,)], target="cpu")(lambda a, b: a + b)
    with pytest.raises(TypeError, match="takes scalars"):
        vectorize([(float32[:], float32)], target="cpu")(lambda a, b: a + b)
