"""NumPy's whole-array reductions in kernels (``np.sum(a)``, ``a.max()``, the ``nan*``
forms, ``np.count_nonzero``...), checked against NumPy on the CPU target."""

import warnings

import numpy as np
import pytest

from cujit import cuda
from cujit.cuda import literal_unroll

NAMES = (
    "sum prod nansum nanprod min max nanmin nanmax mean nanmean var std all any count_nonzero"
).split()
NAN, INF = float("nan"), float("inf")
CASES = (
    np.float64([1.0, 2.0, 0.0, -0.0, 1.0, -1.5]),
    np.float64([-1.5, 2.5, INF, -INF]),
    np.float64([NAN, -1.5, 2.5, NAN, 3.0]),
    np.float64([5.0, NAN, -1.5, NAN]),
    np.float64([NAN, NAN]),
    np.float64([[1.0, 1.5], [INF, -0.5]]),
    np.float64([[0.0, -0.0], [1.5, 0.0]])[::-1],
    np.float32([0.5, -3.25, 8.0]),
    np.int64([[1, 0, 2], [0, 3, 0]]),
    np.int32([4, -7, 9]),
    np.uint8([200, 100, 3]),
)


def _kernel(name: str, cases: tuple):
    namespace = {"np": np, "literal_unroll": literal_unroll, "cases": cases}
    exec(
        "def kernel(out):\n"
        "    i = 0\n"
        "    for arr in literal_unroll(cases):\n"
        f"        out[i] = np.{name}(arr)\n"
        "        i += 1\n",
        namespace,
    )
    return cuda.jit(target="cpu")(namespace["kernel"])


def _reference(name: str, cases: tuple) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # all-NaN slices: NumPy warns and gives NaN
        return np.array([getattr(np, name)(a) for a in cases])


@pytest.mark.parametrize("name", NAMES)
def test_reduction_of_frozen_arrays(name):
    cases = CASES
    if name in ("nanmin", "nanmax", "min", "max"):
        cases = cases + (np.array([True, False]),) if name in ("min", "max") else cases
    ref = _reference(name, cases)
    out = np.full(len(cases), 99, dtype=ref.dtype)
    _kernel(name, cases)[1, 1](out)
    if ref.dtype.kind == "f":
        np.testing.assert_allclose(out, ref, rtol=1e-15, equal_nan=True)
        # the sign of a zero sum or product is NumPy's (a min or max of 0.0 and -0.0
        # may be either, in NumPy as in numba)
        signed = [i for i, v in enumerate(ref) if v == v and name not in ("min", "max")]
        assert [np.signbit(out[i]) for i in signed] == [np.signbit(ref[i]) for i in signed]
    else:
        np.testing.assert_array_equal(out, ref)


def test_zero_size_and_zero_dimensional():
    cases = (np.float64([]), np.array(0), np.array(2.5), np.int64([]))
    for name in ("sum", "prod", "count_nonzero", "all", "any"):
        ref = _reference(name, cases)
        out = np.full(len(cases), 99, dtype=ref.dtype)
        _kernel(name, cases)[1, 1](out)
        np.testing.assert_array_equal(out, ref)


@cuda.jit(target="cpu")
def _methods(out, a, b):
    out[0] = a.sum()
    out[1] = a.max()
    out[2] = a.min()
    out[3] = a.mean()
    out[4] = a.std()
    out[5] = b.prod()
    out[6] = np.amax(b)
    out[7] = a.var()


def test_methods_on_argument_arrays():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 5))[:, 1:]  # a strided view
    b = np.array([3, -2, 5], dtype=np.int16)
    out = np.full(8, np.nan)
    _methods[1, 1](out, a, b)
    ref = [a.sum(), a.max(), a.min(), a.mean(), a.std(), b.prod(), np.amax(b), a.var()]
    np.testing.assert_allclose(out, ref, rtol=1e-12)


def test_empty_min_raises_value_error():
    @cuda.jit(target="cpu", debug=True)  # raise is reported in debug builds, as in numba
    def kernel(out, a):
        out[0] = np.min(a)

    with pytest.raises(ValueError, match="zero-size array"):
        kernel[1, 1](np.zeros(1), np.zeros(0))
