"""dtype spellings in kernels: ``cuda.local.array(n, dtype="int32")`` takes a NumPy
dtype's name (numba's ``Invalid NumPy dtype`` error for an unknown one), and a
datetime type called on a value casts it (``datetime64[D](x)``), as gufunc wrappers do."""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda, float64, int32, void
from cujit.cuda.np.numpy_support import from_dtype
from cujit.diagnostics import TypingError


def _named_dtypes(x):
    loc = cuda.local.array(4, dtype="int32")
    sh = cuda.shared.array(2, "float64")
    sh[0] = 2.5
    for i in range(4):
        loc[i] = x[i] * 3
    for i in range(4):
        x[i] = loc[3 - i] + int32(sh[0] * 2.0)


def test_local_and_shared_arrays_take_dtype_names_cpu():
    x = np.array([1, -2, 30, 4], np.int32)
    want = x[::-1] * 3 + 5
    cuda.jit(void(int32[::1]), target="cpu")(_named_dtypes)[1, 1](x)
    np.testing.assert_array_equal(x, want)


def _bad_name(x):
    loc = cuda.local.array(4, dtype="int33")
    x[0] = loc[0]


def test_unknown_dtype_name_is_a_typing_error():
    with pytest.raises(TypingError, match="Invalid NumPy dtype specified: 'int33'"):
        cuda.jit(void(int32[::1]), target="cpu")(_bad_name)


def test_other_strings_stay_refused():
    def kernel(x):
        x[0] = float64("1.5")

    with pytest.raises(Exception, match="strings are not supported"):
        cuda.jit(void(float64[::1]), target="cpu")(kernel)


DAY = from_dtype(np.dtype("datetime64[D]"))


def _cast_days(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = DAY(a[i])


def test_datetime_type_called_casts_cpu():
    a = np.arange("2005-02-01", "2005-02-06", dtype="datetime64[D]")
    out = np.full(5, np.datetime64("NaT"), "datetime64[D]")
    cuda.jit(_cast_days, target="cpu")[1, 8](a, out)
    np.testing.assert_array_equal(out, a)


def test_gufunc_on_datetimes_cpu():
    delta_t = from_dtype(np.dtype("timedelta64[D]"))

    @cuda.guvectorize([(DAY, DAY, delta_t[:])], "(),()->()", target="cpu")
    def timediff(start, end, out):
        out[0] = end - start

    a = np.arange("2005-02-01", "2005-03-01", dtype="datetime64[D]")
    b = a + np.arange(a.size) * 37 - 100
    np.testing.assert_array_equal(timediff(a, b), b - a)
