"""Differential tests (testing.md, layer 4): the same kernel run as plain Python over the
grid (``pysim``), on the CPU target and, where there is a GPU, on the GPU must agree.

1. Every case of ``kernels.py`` runs under all three on the same inputs; ints must be
   equal, floats agree by relative norm (1e-12 for float64 outputs, 1e-5 for float32).
2. Arithmetic edge cases, drawn by hypothesis, each through a one-line kernel per
   operator: signed ``//`` and ``%`` (int8..int64, negatives, zero divisors), shifts
   (counts past the bit width and negative), int overflow wraparound, float32 and
   float64 arithmetic with +-0, inf, nan and subnormals, comparisons with nan,
   ``min``/``max`` with nan, ``abs``, float -> int casts in range.  The expected value
   is a Python model of cujit's documented semantics (``cujit/codegen/pyarith.py``:
   integer division by zero gives 0 for ``//`` and ``%``; shifts by counts outside
   ``[0, bits)`` give 0 or the sign fill; ``min(a, b)`` of ints is ``b if b < a else a``,
   of floats numba's fmin);
   the compiled kernel must equal it bit for bit, and so must ``pysim`` wherever
   NumPy's scalar semantics are meant to agree (everywhere except where the test says).
"""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kernels import CASES
from pysim import run_kernel

from cujit import cuda, float32, float64, int8, int16, int32, int64

TARGETS = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]

# Where plain Python differs from cujit by design (see pysim's docstring), per case:
# the tolerance pysim is held to instead, and why.
KNOWN_DIFFERENCES = {
    # OFFSET is np.float32(1.25): ``math.pi * SCALE + OFFSET`` is float32 in NumPy
    # (the Python float is a weak scalar) but float64 in cujit (numba's typing).
    "math_functions": 1e-7,
}


def _compiled(kernel, target):
    if target == "cpu":
        key = (id(kernel), "cpu")
        k = _KERNELS.get(key)
        if k is None:
            k = _KERNELS[key] = (cuda.jit(kernel.py_func, target="cpu"), kernel)
        return k[0]
    return kernel


_KERNELS: dict = {}


def _outputs_written(case, rng):
    """The indices of the arguments the case's reference checks (its outputs)."""
    args, *_ = case.setup(rng)
    inputs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    return sorted(case.reference(inputs))


def _agree(name, what, ref, got, rtol):
    assert got.shape == ref.shape and got.dtype == ref.dtype, f"{name}: {what} shape/dtype"
    if ref.dtype.kind == "f":
        assert np.isnan(got).sum() == np.isnan(ref).sum(), f"{name}: {what} nan pattern"
        mask = ~np.isnan(ref)
        r, g = ref[mask].astype(np.float64), got[mask].astype(np.float64)
        err = np.linalg.norm(g - r) / max(np.linalg.norm(r), 1e-300)
        assert err <= rtol, f"{name}: {what} relative error {err:.3e} > {rtol:g}"
    else:
        np.testing.assert_array_equal(got, ref, err_msg=f"{name}: {what}")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@pytest.mark.parametrize("target", TARGETS)
def test_case_matches_plain_python(case, target):
    seed = sum(map(ord, case.name))
    outs = _outputs_written(case, np.random.default_rng(seed))
    args, grid, block, shmem = case.setup(np.random.default_rng(seed))
    sim_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run_kernel(case.kernel, grid, block, sim_args, shmem)
    dev_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    _compiled(case.kernel, target)[grid, block, 0, shmem](*dev_args)
    for i in outs:
        ref, got = sim_args[i], dev_args[i]
        rtol = 1e-5 if ref.dtype == np.float32 else 1e-12
        rtol = KNOWN_DIFFERENCES.get(case.name, rtol)
        _agree(case.name, f"output {i} vs plain Python", ref, got, rtol)
        # The inputs the kernel only reads must come back untouched from both runs.
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray) and i not in outs:
            np.testing.assert_array_equal(dev_args[i], a, err_msg=f"{case.name}: input {i}")


def test_plain_python_runner_is_not_vacuous():
    """pysim must compute, not copy: a kernel that writes the wrong value must differ,
    and a kernel that skips a thread must leave its poison in place."""

    @cuda.jit
    def off_by_one(x, out):
        i = cuda.grid(1)
        if i < x.size - 1:
            out[i] = x[i] + 1

    x = np.arange(10, dtype=np.int64)
    out = np.full(10, -77, np.int64)
    run_kernel(off_by_one, 1, 16, [x, out])
    assert out[:9].tolist() == list(range(1, 10)) and out[9] == -77


def test_plain_python_runner_shared_memory_per_block():
    """Shared arrays are per block and per call site; syncthreads orders the block."""

    @cuda.jit
    def rotate(x, out):
        a = cuda.shared.array(8, int64)
        b = cuda.shared.array(8, int64)
        t = cuda.threadIdx.x
        base = cuda.blockIdx.x * 8
        a[t] = x[base + t]
        b[t] = -x[base + t]
        cuda.syncthreads()
        out[base + t] = a[(t + 1) % 8] * 100 + b[t]

    x = np.arange(1, 25, dtype=np.int64)
    out = np.zeros(24, np.int64)
    run_kernel(rotate, 3, 8, [x, out])
    blocks = x.reshape(3, 8)
    np.testing.assert_array_equal(out, (np.roll(blocks, -1, axis=1) * 100 - blocks).ravel())


# -- arithmetic edge cases ----------------------------------------------------------

NS = {
    "cuda": cuda,
    "math": math,
    "int8": int8,
    "int16": int16,
    "int32": int32,
    "int64": int64,
    "float32": float32,
    "float64": float64,
}
_EXPR_KERNELS: dict = {}


def expr_kernel(expr: str, target: str):
    """A kernel ``out[i] = <expr>`` over ``a[i]``, ``b[i]``, compiled for ``target``."""
    key = (expr, target)
    if key not in _EXPR_KERNELS:
        src = (
            "def kernel(a, b, out):\n"
            "    i = cuda.grid(1)\n"
            "    if i < out.size:\n"
            f"        out[i] = {expr}\n"
        )
        ns = dict(NS)
        exec(compile(src, f"<differential {expr}>", "exec"), ns)
        _EXPR_KERNELS[key] = cuda.jit(ns["kernel"], target=target)
    return _EXPR_KERNELS[key]


def run_three(expr, target, a, b, out_dtype):
    """(compiled result, pysim result) of ``out[i] = expr`` over arrays a, b."""
    n = len(a)
    out = (
        np.full(n, 123, out_dtype)
        if np.dtype(out_dtype).kind != "f"
        else np.full(n, np.nan, out_dtype)
    )
    k = expr_kernel(expr, target)
    got = out.copy()
    k[max(1, (n + 31) // 32), 32](a.copy(), b.copy(), got)
    sim = out.copy()
    run_kernel(k, max(1, (n + 31) // 32), 32, [a.copy(), b.copy(), sim])
    return got, sim


def same_bits(got, want, what):
    """Equal as values, with nan equal to nan and -0.0 different from 0.0."""
    got, want = np.asarray(got), np.asarray(want, dtype=got.dtype)
    if got.dtype.kind == "f":
        ok = ((got == want) & (np.signbit(got) == np.signbit(want))) | (
            np.isnan(got) & np.isnan(want)
        )
    else:
        ok = got == want
    bad = np.flatnonzero(~ok)
    assert not bad.size, (
        f"{what}: first mismatch at {bad[0]}: got {got[bad[0]]!r}, "
        f"expected {want[bad[0]]!r} (of {bad.size})"
    )


HYP = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
INT_TYPES = [np.int8, np.int16, np.int32, np.int64]


def wrap(v: int, dt) -> int:
    bits = np.dtype(dt).itemsize * 8
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def ints(dt):
    info = np.iinfo(dt)
    edge = st.sampled_from([info.min, info.min + 1, -1, 0, 1, info.max - 1, info.max])
    return st.one_of(edge, st.integers(-20, 20), st.integers(info.min, info.max))


def int_pairs(dt, b_strategy=None):
    return st.lists(
        st.tuples(ints(dt), ints(dt) if b_strategy is None else b_strategy), min_size=1, max_size=48
    )


def _arrays(pairs, dt):
    a = np.array([p[0] for p in pairs], dt)
    b = np.array([p[1] for p in pairs], dt)
    return a, b


def _floordiv_model(x, y):
    return 0 if y == 0 else x // y


def _mod_model(x, y):
    return 0 if y == 0 else x % y


INT_BINOPS = {
    "a[i] // b[i]": _floordiv_model,
    "a[i] % b[i]": _mod_model,
    "a[i] + b[i]": lambda x, y: x + y,
    "a[i] - b[i]": lambda x, y: x - y,
    "a[i] * b[i]": lambda x, y: x * y,
    "a[i] & b[i]": lambda x, y: x & y,
    "a[i] | b[i]": lambda x, y: x | y,
    "a[i] ^ b[i]": lambda x, y: x ^ y,
    "-a[i] + b[i] * 0": lambda x, y: -x,
    "abs(a[i]) + b[i] * 0": lambda x, y: abs(x),
    "~a[i] + b[i] * 0": lambda x, y: ~x,
    "min(a[i], b[i])": lambda x, y: y if y < x else x,
    "max(a[i], b[i])": lambda x, y: y if y > x else x,
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dt", INT_TYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("expr", list(INT_BINOPS))
def test_int_operators(expr, dt, target):
    """Signed int ops, stored back into the operands' type: the Python result of the
    exact operation, wrapped (the kernel computes in int64 where numba widens; the
    store truncates; both wrap to the same bits); ``// 0`` and ``% 0`` give 0."""
    model = INT_BINOPS[expr]

    @HYP
    @given(int_pairs(dt))
    def check(pairs):
        a, b = _arrays(pairs, dt)
        got, sim = run_three(expr, target, a, b, dt)
        want = [wrap(model(int(x), int(y)), dt) for x, y in pairs]
        same_bits(got, want, f"{expr} [{np.dtype(dt).name}] compiled")
        same_bits(sim, want, f"{expr} [{np.dtype(dt).name}] plain Python")

    check()


def _shift_model(op, x, n, dt):
    bits = np.dtype(dt).itemsize * 8
    if not 0 <= n < bits:  # read as unsigned: clamped, as PTX shl/shr
        return 0 if op == "<<" else (-1 if x < 0 else 0)
    return wrap(x << n if op == "<<" else x >> n, dt)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dt", INT_TYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", ["<<", ">>"])
def test_shifts(op, dt, target):
    """``a << n`` / ``a >> n`` with the count in ``a``'s type (numba casts it so):
    counts in ``[0, bits)`` shift as Python (wrapped); counts past the width and
    negative counts give 0, or -1 for ``>>`` of a negative value.  NumPy agrees for
    counts past the width; Python raises on negative counts, so pysim is checked on
    non-negative counts only."""
    bits = np.dtype(dt).itemsize * 8
    counts = st.integers(-3, min(bits + 8, np.iinfo(dt).max))
    expr = f"a[i] {op} b[i]"

    @HYP
    @given(int_pairs(dt, counts))
    def check(pairs):
        a, b = _arrays(pairs, dt)
        got, sim = run_three(expr, target, a, b, dt)
        want = [_shift_model(op, int(x), int(n), dt) for x, n in pairs]
        same_bits(got, want, f"{expr} [{np.dtype(dt).name}] compiled")
        keep = b >= 0
        same_bits(sim[keep], np.array(want, dt)[keep], f"{expr} [{np.dtype(dt).name}] pysim")

    check()


def f32_values():
    return st.floats(width=32, allow_nan=True, allow_infinity=True, allow_subnormal=True)


def f64_values():
    special = st.sampled_from(
        [
            0.0,
            -0.0,
            math.inf,
            -math.inf,
            math.nan,
            5e-324,
            -5e-324,
            2.2250738585072014e-308,
            1.7976931348623157e308,
            1.0,
            -1.0,
        ]
    )
    return st.one_of(special, st.floats(allow_nan=True, allow_infinity=True), st.floats(-100, 100))


FLOAT_TYPES = {"float32": (np.float32, f32_values), "float64": (np.float64, f64_values)}


def _py_floordiv(x, y):
    if y == 0:
        return x / y if not math.isnan(x) and x != 0 else math.nan  # NumPy's a / b
    return x // y


def _np_fdiv(x, y):
    with np.errstate(all="ignore"):
        return x / y


def _py_mod(x, y):
    return math.nan if y == 0 else x % y


# The expected value of each expression, in NumPy scalars of the operands' type (IEEE,
# correctly rounded), or Python float semantics for float64's ``//`` and ``%``.
_FLOAT_OP_MODELS = {
    "a[i] + b[i]": lambda x, y: x + y,
    "a[i] - b[i]": lambda x, y: x - y,
    "a[i] * b[i]": lambda x, y: x * y,
    "a[i] / b[i]": lambda x, y: x / y,
    # NumPy's floor_divide follows CPython's float_floor_div
    "a[i] // b[i]": lambda x, y: x / y if y == 0 else x // y,
    "a[i] % b[i]": lambda x, y: type(x)(math.nan) if y == 0 else x % y,
    # numba's float min/max are C's fmin/fmax: a nan loses to a number.
    "min(a[i], b[i])": lambda x, y: np.fmin(x, y),
    "max(a[i], b[i])": lambda x, y: np.fmax(x, y),
    "abs(a[i]) + b[i] * 0": lambda x, y: abs(x) + y * 0,
    "-a[i]": lambda x, y: -x,
}


def _float_op_model(expr, x, y, dt):
    """The expected value of ``expr``, computed in ``dt`` (``_FLOAT_OP_MODELS``)."""
    with np.errstate(all="ignore"):
        return _FLOAT_OP_MODELS[expr](dt(x), dt(y))


FLOAT_EXPRS = [
    "a[i] + b[i]",
    "a[i] - b[i]",
    "a[i] * b[i]",
    "a[i] / b[i]",
    "a[i] // b[i]",
    "a[i] % b[i]",
    "min(a[i], b[i])",
    "max(a[i], b[i])",
    "abs(a[i]) + b[i] * 0",
    "-a[i]",
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtname", list(FLOAT_TYPES))
@pytest.mark.parametrize("expr", FLOAT_EXPRS)
def test_float_operators(expr, dtname, target):
    """float32 and float64 arithmetic with +-0, inf, nan and subnormals, computed in
    the operands' type: bit-exact with the IEEE result (signed zeros included);
    ``//`` and ``%`` floor as Python (``x // 0`` is ``x / 0``, ``x % 0`` is nan);
    ``min``/``max`` are fmin/fmax (numba's: a nan operand loses to a number; of
    0.0 and -0.0 either may come back, as from PTX's min/max)."""
    dt, values = FLOAT_TYPES[dtname]
    minmax = expr.startswith(("min", "max"))

    @HYP
    @given(st.lists(st.tuples(values(), values()), min_size=1, max_size=48))
    def check(pairs):
        a = np.array([p[0] for p in pairs], dt)
        b = np.array([p[1] for p in pairs], dt)
        got, sim = run_three(expr, target, a, b, dt)
        want = np.array([_float_op_model(expr, x, y, dt) for x, y in zip(a, b, strict=True)], dt)
        if minmax:  # a tie of zeros: either sign
            zero_tie = (a == 0) & (b == 0) & (got == 0)
            want = np.where(zero_tie, got, want)
        same_bits(got, want, f"{expr} [{dtname}] compiled")
        if minmax:  # pysim models numba's min/max too; a zero tie: either sign
            want = np.where(zero_tie, sim, want)
        same_bits(sim, want, f"{expr} [{dtname}] plain Python")

    check()


@given(st.lists(st.tuples(f64_values(), f64_values()), min_size=1, max_size=48))
@HYP
def test_float64_floor_ops_match_python_floats(pairs):
    """float64 ``//`` and ``%`` against CPython's own float operators (not NumPy's)."""
    pairs = [(x, y) for x, y in pairs if y != 0]
    if not pairs:
        return
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    for expr, model in (("a[i] // b[i]", lambda x, y: x // y), ("a[i] % b[i]", _py_mod)):
        got, _ = run_three(expr, "cpu", a, b, np.float64)
        want = []
        for x, y in pairs:
            try:
                want.append(model(x, y))
            except (OverflowError, ZeroDivisionError):
                want.append(math.nan)
        same_bits(got, np.array(want), f"{expr} vs Python float")


CMP_OPS = ["<", "<=", ">", ">=", "==", "!="]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtname", list(FLOAT_TYPES))
def test_comparisons_with_nan(dtname, target):
    """Every comparison with a nan operand is False except ``!=``; -0.0 == 0.0; and
    chained comparisons and ``not`` keep that meaning."""
    dt, values = FLOAT_TYPES[dtname]
    exprs = {op: f"(a[i] {op} b[i]) * 1" for op in CMP_OPS}
    exprs["chain"] = "(a[i] < b[i] <= a[i] + b[i]) * 1"
    exprs["not"] = "(not a[i] < b[i]) * 1"

    def model(name, x, y):
        if name == "chain":
            return int(x < y and y <= (x + y))
        if name == "not":
            return int(not x < y)
        return int(eval(f"x {name} y"))

    @HYP
    @given(st.lists(st.tuples(values(), values()), min_size=1, max_size=48))
    def check(pairs):
        a = np.array([p[0] for p in pairs], dt)
        b = np.array([p[1] for p in pairs], dt)
        for name, expr in exprs.items():
            got, sim = run_three(expr, target, a, b, np.int64)
            with np.errstate(all="ignore"):
                want = [model(name, x, y) for x, y in zip(a, b, strict=True)]
            same_bits(got, want, f"{expr} [{dtname}] compiled")
            same_bits(sim, want, f"{expr} [{dtname}] plain Python")

    check()


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtname", list(FLOAT_TYPES))
def test_float_to_int_casts_in_range(dtname, target):
    """``int(x)``, ``int32(x)`` and ``int8(x)`` truncate toward zero for x in range;
    ``float32(x)`` of a float64 rounds to nearest even."""
    dt, _ = FLOAT_TYPES[dtname]
    exprs = {
        "int(a[i]) + int(b[i]) * 0": (np.int64, lambda x, y: math.trunc(x)),
        "int32(a[i]) + int32(b[i])": (np.int32, lambda x, y: math.trunc(x) + math.trunc(y)),
        "int8(a[i])": (np.int8, lambda x, y: math.trunc(x)),
    }
    lim = {
        "int(a[i]) + int(b[i]) * 0": 2.0**62,
        "int32(a[i]) + int32(b[i])": 2.0**30,
        "int8(a[i])": 127.75,
    }

    @HYP
    @given(st.data())
    def check(data):
        for expr, (odt, model) in exprs.items():
            r = lim[expr]
            vals = st.floats(-r, r, width=32 if dt is np.float32 else 64)
            pairs = data.draw(st.lists(st.tuples(vals, vals), min_size=1, max_size=32))
            a = np.array([p[0] for p in pairs], dt)
            b = np.array([p[1] for p in pairs], dt)
            got, sim = run_three(expr, target, a, b, odt)
            want = [wrap(model(float(x), float(y)), odt) for x, y in zip(a, b, strict=True)]
            same_bits(got, want, f"{expr} [{dtname}] compiled")
            same_bits(sim, want, f"{expr} [{dtname}] plain Python")

    check()


@pytest.mark.parametrize("target", TARGETS)
def test_float64_to_float32_rounding(target):
    @HYP
    @given(st.lists(st.tuples(f64_values(), f64_values()), min_size=1, max_size=48))
    def check(pairs):
        a = np.array([p[0] for p in pairs])
        b = np.array([p[1] for p in pairs])
        got, sim = run_three("float32(a[i])", target, a, b, np.float32)
        want = np.array(
            [
                struct.unpack("f", struct.pack("f", x))[0]
                if abs(x) < 3.4028235677973366e38 or not math.isfinite(x)
                else math.copysign(math.inf, x)
                if abs(x) >= 3.4028235677973366e38
                else x
                for x in a
            ],
            np.float32,
        )
        same_bits(got, want, "float32(float64) compiled")
        same_bits(sim, want, "float32(float64) plain Python")

    check()


@pytest.mark.parametrize("target", TARGETS)
def test_float32_vs_float64_promotion(target):
    """float32 with float32 stays float32 (rounded each step); mixing in a float64
    promotes (numba's rule, and NumPy's for two arrays' scalars)."""

    @HYP
    @given(st.lists(st.tuples(f32_values(), f32_values()), min_size=1, max_size=48))
    def check(pairs):
        a = np.array([p[0] for p in pairs], np.float32)
        b = np.array([p[1] for p in pairs], np.float32)
        got32, sim32 = run_three("a[i] * b[i] + a[i]", target, a, b, np.float64)
        got64, sim64 = run_three("float64(a[i]) * b[i] + a[i]", target, a, b, np.float64)
        with np.errstate(all="ignore"):
            want32 = (a * b + a).astype(np.float64)
            want64 = a.astype(np.float64) * b + a  # the product is exact: fused or not
            # libNVVM contracts a*b + c into one fma by default, as nvcc and numba-cuda
            # do: on the GPU the float32 chain may round once instead of twice.
            fused = (a.astype(np.float64) * b + a).astype(np.float32).astype(np.float64)
        compiled32 = want32
        if target == "cuda":
            either = (got32 == fused) | (np.isnan(got32) & np.isnan(fused))
            compiled32 = np.where(either, fused, want32)
        same_bits(got32, compiled32, "float32 chain compiled")
        same_bits(sim32, want32, "float32 chain plain Python")  # Python never fuses
        same_bits(got64, want64, "promoted chain compiled")
        same_bits(sim64, want64, "promoted chain plain Python")

    check()
