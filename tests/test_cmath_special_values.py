"""cmath in kernels against CPython's cmath, on finite values and on the special values
of C99 Annex G (infinite and NaN parts, signed zeros), both complex types; also
``cmath.rect`` and ``cmath.log(z, base)``."""

import cmath
import itertools
import math

import numpy as np
import pytest

from cujit import cuda

INF, NAN = math.inf, math.nan
_REALS = [-0.0, 0.0, 1.0, -1.0, 0.3, -2.5, math.pi, -math.pi, 40.0, INF, -INF, NAN]
VALUES = [complex(x, y) for x, y in itertools.product(_REALS, _REALS)]
FUNCTIONS = "exp sqrt log log10 sin cos tan sinh cosh tanh asin acos atan asinh acosh atanh"
# complex64 results computed in float32: a few ulps of float32
TOLERANCE = {np.complex128: 1e-14, np.complex64: 2e-6}


def _part_ok(got: float, want: float, tol: float) -> bool:
    if math.isnan(want) or math.isnan(got):
        return math.isnan(want) and math.isnan(got)
    if want == 0.0 or math.isinf(want):  # exact, the sign included
        return got == want and math.copysign(1.0, got) == math.copysign(1.0, want)
    return abs(got - want) <= tol * abs(want)


def _mismatches(fn, args_list, results, tol):
    bad = []
    for args, got in zip(args_list, results, strict=True):
        try:
            want = fn(*args)
        except (ValueError, OverflowError):  # CPython raises where C99 signals
            continue
        want = complex(want)
        if not (_part_ok(got.real, want.real, tol) and _part_ok(got.imag, want.imag, tol)):
            bad.append((args, complex(got), want))
    return bad


def _unary_kernel(name: str, target: str):
    fn = getattr(cmath, name)

    def kernel(out, a):
        i = cuda.grid(1)
        if i < a.size:
            out[i] = fn(a[i])

    return cuda.jit(target=target)(kernel)


def _check_unary(name: str, target: str) -> None:
    kernel = _unary_kernel(name, target)
    for dtype, tol in TOLERANCE.items():
        a = np.array(VALUES, dtype=dtype)
        out = np.full_like(a, complex(123.0, -321.0))  # poisoned
        kernel[2, 128](out, a)
        # the reference takes the argument as stored (complex64 rounds pi)
        args = [(complex(z),) for z in a]
        bad = _mismatches(getattr(cmath, name), args, out, tol)
        assert not bad, f"cmath.{name} {dtype.__name__}: {bad[:5]}"


@pytest.mark.parametrize("name", FUNCTIONS.split())
def test_cmath_matches_cpython_cpu(name):
    _check_unary(name, "cpu")


@pytest.mark.gpu
@pytest.mark.parametrize("name", FUNCTIONS.split())
def test_cmath_matches_cpython_gpu(name):
    _check_unary(name, "cuda")


def _binary_check(target: str) -> None:
    @cuda.jit(target=target)
    def rect(out, r, phi):
        i = cuda.grid(1)
        if i < r.size:
            out[i] = cmath.rect(r[i], phi[i])

    @cuda.jit(target=target)
    def log_base(out, z, base):
        i = cuda.grid(1)
        if i < z.size:
            out[i] = cmath.log(z[i], base[i])

    pairs = list(itertools.product(_REALS, _REALS))
    r = np.array([p[0] for p in pairs])
    phi = np.array([p[1] for p in pairs])
    out = np.full(len(pairs), complex(9.0, 9.0))
    rect[2, 128](out, r, phi)
    assert not _mismatches(cmath.rect, pairs, out, 1e-15)
    zs = [complex(2.0, -1.0), complex(0.5, 3.0), complex(-4.0, 0.25), complex(INF, 1.0)]
    grid = list(itertools.product(zs, [complex(10.0, 0.0), complex(1.5, 2.0)]))
    z = np.array([g[0] for g in grid])
    base = np.array([g[1] for g in grid])
    out = np.full(len(grid), complex(9.0, 9.0))
    log_base[1, 32](out, z, base)
    assert not _mismatches(cmath.log, grid, out, 1e-14)


def test_rect_and_log_base_cpu():
    _binary_check("cpu")


@pytest.mark.gpu
def test_rect_and_log_base_gpu():
    _binary_check("cuda")


def test_a_real_argument_and_the_result_type():
    @cuda.jit(target="cpu")
    def kernel(out64, out128, x32, x64):
        out64[0] = cmath.tanh(x32[0])
        out128[0] = cmath.acos(x64[0])

    out64 = np.zeros(1, np.complex64)
    out128 = np.zeros(1, np.complex128)
    kernel[1, 1](out64, out128, np.array([0.5], np.float32), np.array([3.0]))
    assert abs(out64[0] - cmath.tanh(0.5)) < 1e-6
    assert abs(out128[0] - cmath.acos(3.0)) < 1e-15
