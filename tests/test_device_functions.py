"""Device functions (``@cuda.jit(device=True)``): kernels that call them compile to
cubins, run on the CPU target against NumPy and, where there is one, on the GPU;
errors inside them point at their own lines; recursion and host calls are refused."""

from __future__ import annotations

import math

import numpy as np
import pytest
from kernels import Case, check, poison

from cujit import cuda
from cujit.device_function import specializations
from cujit.diagnostics import CujitError, TypingError, UnsupportedError
from cujit.ir import CallFunction, format_function
from cujit.ir.analysis import written_arguments
from cujit.options import Options
from cujit.pipeline import compile_kernel
from cujit.types import float32, float64, typeof

N = 1000
CASES: list[Case] = []


def case(setup, reference, rtol=1e-6):
    def register(kernel):
        CASES.append(Case(kernel.__name__, kernel, setup, reference, rtol))
        return kernel

    return register


def _xy(rng, dtype=np.float32):
    x = rng.standard_normal(N).astype(dtype)
    y = rng.standard_normal(N).astype(dtype)
    return x, y


# -- device functions at module level, called by name (globals) ------------------------


@cuda.jit(device=True)
def axpy(a, x, y):
    return a * x + y


@cuda.jit(device=True)
def sum_diff(x, y):
    return x + y, x - y  # a tuple


@cuda.jit(device=True)
def store(out, i, value):  # returns nothing
    out[i] = value


@cuda.jit(device=True)
def clamp(v, lo=0.0, hi=1.0):  # defaults
    return min(max(v, lo), hi)


@cuda.jit(device=True)
def norm2(x, y):  # calls another device function and math
    s, d = sum_diff(x, y)
    return math.sqrt(s * s + d * d)


@cuda.jit(device=True)
def thread_index():  # a device function reading the thread state
    return cuda.grid(1)


@cuda.jit(device=True)
def early_exit(v):
    if v < 0:
        return 0.0
    for k in range(3):
        if v > 10.0 * (k + 1):
            return float(k + 1)
    return v


@cuda.jit("float32(float32, float32)", device=True)
def declared_mul(a, b):
    return a * b


def _scale_pair_setup(rng):
    x, y = _xy(rng)
    return [x, y, poison(N, np.float32), poison(N, np.float32)], (N + 127) // 128, 128, 0


@case(
    _scale_pair_setup,
    lambda a: {
        2: 2.0 * a[0].astype(np.float64) + a[1],
        3: (a[0].astype(np.float64) + a[1]) * (a[0] - a[1]),
    },
)
@cuda.jit
def scalar_and_tuple_returns(x, y, out, prod):
    i = thread_index()
    if i < x.size:
        store(out, i, axpy(np.float32(2.0), x[i], y[i]))
        s, d = sum_diff(x[i], y[i])
        prod[i] = s * d


def _clamp_setup(rng):
    x = (rng.standard_normal(N) * 2).astype(np.float64)
    return [x, poison(N, np.float64), poison(N, np.float64)], 8, 128, 0


@case(_clamp_setup, lambda a: {1: np.clip(a[0], 0.0, 1.0), 2: np.clip(a[0], -0.5, 0.25)})
@cuda.jit
def defaults_and_keywords(x, a, b):
    i = cuda.grid(1)
    if i < x.size:
        a[i] = clamp(x[i])
        b[i] = clamp(x[i], hi=0.25, lo=-0.5)


@case(
    lambda rng: ([*_xy(rng, np.float64), poison(N, np.float64)], 8, 128, 0),
    lambda a: {2: np.sqrt(2 * (a[0] ** 2 + a[1] ** 2))},
)
@cuda.jit
def nested_calls(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = norm2(x[i], y[i])


@case(
    lambda rng: (
        [(rng.standard_normal(N) * 25).astype(np.float64), poison(N, np.float64)],
        8,
        128,
        0,
    ),
    lambda a: {1: np.array([early_exit.py_func(v) for v in a[0]])},
)  # the Python model
@cuda.jit
def returns_in_loops(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = early_exit(x[i])


@case(
    lambda rng: (
        [
            rng.integers(-100, 100, N).astype(np.int32),
            rng.standard_normal(N).astype(np.float64),
            poison(N, np.int64),
            poison(N, np.float64),
            poison(N, np.float32),
        ],
        8,
        128,
        0,
    ),
    lambda a: {
        2: a[0].astype(np.int64) * 2 + 1,
        3: a[1] * 2 + 1,
        4: (a[1].astype(np.float32) * np.float32(3.0)),
    },
)
@cuda.jit
def one_function_two_specialisations(n, x, ni, nx, declared):
    i = cuda.grid(1)
    if i < x.size:
        ni[i] = axpy(2, n[i], 1)  # int64 arithmetic
        nx[i] = axpy(2.0, x[i], 1.0)  # float64
        declared[i] = declared_mul(x[i], 3)  # converted to the declared float32


def _make_closure_kernel(scale):
    @cuda.jit(device=True)
    def scaled(v):
        return v * scale  # a closure variable of the device function

    @cuda.jit
    def closure_kernel(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = scaled(x[i])  # the device function is a closure of the kernel

    return closure_kernel


closure_kernel = case(
    lambda rng: ([rng.standard_normal(N), poison(N, np.float64)], 8, 128, 0),
    lambda a: {1: a[0] * 3.5},
)(_make_closure_kernel(3.5))

TILE = 128


@cuda.jit(device=True)
def block_sum(buf, t):
    """A tree reduction over a shared array, with barriers, in a device function."""
    step = TILE // 2
    while step > 0:
        if t < step:
            buf[t] += buf[t + step]
        cuda.syncthreads()
        step //= 2
    return buf[0]


@case(
    lambda rng: ([rng.standard_normal(TILE * 8), poison(8, np.float64)], 8, TILE, 0),
    lambda a: {1: a[0].reshape(8, TILE).sum(axis=1)},
    rtol=1e-12,
)
@cuda.jit
def shared_array_reduction(x, out):
    buf = cuda.shared.array(TILE, np.float64)
    t = cuda.threadIdx.x
    buf[t] = x[cuda.grid(1)]
    cuda.syncthreads()
    total = block_sum(buf, t)
    if t == 0:
        out[cuda.blockIdx.x] = total


@cuda.jit("float64(float64[:, :], int64, int64)", device=True)
def element_at(a, i, j):
    """Declared for any layout ('A'): reads through the strides the caller's array has."""
    return a[i, j]


@case(
    lambda rng: (
        [
            rng.standard_normal((5, 7)),
            np.asfortranarray(rng.standard_normal((5, 7))),
            rng.standard_normal((10, 14))[::2, ::2],
            poison((5, 7), np.float64),
        ],
        (1, 1),
        (8, 8),
        0,
    ),
    lambda a: {3: a[0] + 10 * a[1] + 100 * a[2]},
    rtol=1e-12,
)
@cuda.jit
def strided_signature(c, f, view, out):
    # A C- or F-contiguous kernel argument arrives without its strides (cujit.abi); the
    # kernel derives them from the extents when the callee needs them.
    i, j = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = element_at(c, i, j) + 10 * element_at(f, i, j) + 100 * element_at(view, i, j)


def _types(c: Case):
    args, *_ = c.setup(np.random.default_rng(0))
    return tuple(typeof(a) for a in args)


# -- compile to cubin (CI) -------------------------------------------------------------


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_compiles_to_cubin(c):
    result = compile_kernel(c.kernel.py_func, _types(c), Options(verify=True))
    assert result.cubin[:4] == b"\x7fELF"
    assert f".entry {result.symbol}" in result.ptx


def test_callees_are_functions_of_their_own_modules():
    # numba's convention: an i32 status, the result stored through the first parameter;
    # on the CUDA target each callee in a module of its own, declared where it is called.
    c = next(c for c in CASES if c.name == "nested_calls")
    llvm = compile_kernel(c.kernel.py_func, _types(c), stop_after="llvm").outputs["llvm"]
    norm2 = '@"cujit$dev$norm2_float64_float64"(double* %".ret", double'
    assert f"define linkonce_odr i32 {norm2}" in llvm
    pair = '@"cujit$dev$sum_diff_float64_float64"({double, double}* %".ret"'
    assert f"define linkonce_odr i32 {pair}" in llvm
    assert 'declare i32 @"cujit$dev$norm2_float64_float64"(double*' in llvm
    assert llvm.count("; ModuleID = ") == 1 + llvm.count("define linkonce_odr")
    ptx = compile_kernel(c.kernel.py_func, _types(c), Options(opt=0), stop_after="ptx").ptx
    assert ".func" in ptx and "call" in ptx  # at -O0 a real call; at -O3 inlined


# -- run on the CPU target (CI) and on the GPU -----------------------------------------


def _run(c: Case, target: str):
    kernel = cuda.jit(c.kernel.py_func, target=target)
    args, grid, block, shmem = c.setup(np.random.default_rng())
    expected = c.reference([a.copy() if isinstance(a, np.ndarray) else a for a in args])
    kernel[grid, block, 0, shmem](*args)
    check(c, {i: args[i] for i in expected}, expected)


# shared_array_reduction's barrier sits in a device function: the CPU target inlines it
@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_runs_on_cpu_target(c):
    _run(c, "cpu")


@pytest.mark.gpu
@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_runs_on_gpu(c):
    _run(c, "cuda")


# -- the typed IR: callees ride with the kernel; explain prints the kernel -----------


def test_typed_ir_carries_specialised_callees():
    c = next(c for c in CASES if c.name == "one_function_two_specialisations")
    fn = compile_kernel(c.kernel.py_func, _types(c), stop_after="passes").outputs["passes"]
    assert {f.name for f in fn.callees} == {
        "axpy(int64, int32, int64)",
        "axpy(float64, float64, float64)",
        "declared_mul(float32, float32)",
    }
    text = format_function(fn)
    assert text.startswith("func one_function_two_specialisations(")
    assert "callfunction 'axpy(float64, float64, float64)'" in text
    calls = [op for op in fn.all_ops() if isinstance(op, CallFunction)]
    assert {op.callee for op in calls} == {f.name for f in fn.callees}


def test_specialisations_are_shared_between_kernels():
    @cuda.jit(device=True)
    def twice(v):
        return v * 2

    def k1(x):
        x[0] = twice(x[0])

    def k2(x):
        x[1] = twice(x[1])

    t = (typeof(np.zeros(2)),)
    f1 = compile_kernel(k1, t, stop_after="passes").outputs["passes"]
    f2 = compile_kernel(k2, t, stop_after="passes").outputs["passes"]
    compiled = specializations(twice)
    assert [key[0] for key in compiled] == [(float64,)]
    assert f1.callees[0] is f2.callees[0] is next(iter(compiled.values()))


def test_written_arguments_see_through_device_functions():
    c = next(c for c in CASES if c.name == "scalar_and_tuple_returns")
    fn = compile_kernel(c.kernel.py_func, _types(c), stop_after="passes").outputs["passes"]
    assert written_arguments(fn) == (False, False, True, True)


def test_two_closures_with_one_name_get_two_symbols():
    def make(k):
        @cuda.jit(device=True)
        def f(v):
            return v + k

        return f

    f1, f2 = make(1.0), make(2.0)

    def kern(x):
        x[0] = f1(x[0]) + f2(x[0])

    fn = compile_kernel(kern, (typeof(np.zeros(1)),), stop_after="passes").outputs["passes"]
    assert sorted(f.name for f in fn.callees) == ["f(float64)", "f(float64)#2"]
    x = np.array([1.0])
    cuda.jit(kern, target="cpu")[1, 1](x)
    assert x[0] == 5.0


# -- errors ------------------------------------------------------------------------------


@cuda.jit(device=True)
def bad_index(v):
    return v[0]  # the error's line


def test_error_inside_a_device_function_points_at_its_line():
    def kern(x):
        x[0] = bad_index(x[1])

    with pytest.raises(TypingError) as info:
        compile_kernel(kern, (typeof(np.zeros(2)),), stop_after="typed")
    line = bad_index.py_func.__code__.co_firstlineno + 2
    assert info.value.loc.line == line
    assert "called from" in str(info.value) and "bad_index" in str(info.value)


@cuda.jit(device=True)
def ping(n):
    return pong(n)


@cuda.jit(device=True)
def pong(n):
    return ping(n)


# Self-recursion compiles (tests/test_recursive_device_functions.py).
@pytest.mark.parametrize("callee", [ping], ids=["mutual"])
def test_recursion_is_refused(callee):
    def kern(x):
        x[0] = callee(3)

    with pytest.raises(UnsupportedError, match="recursive device functions"):
        compile_kernel(kern, (typeof(np.zeros(1)),), stop_after="typed")


def plain_python(v):
    return v + 1


# A @cuda.jit kernel called from a kernel compiles as a device function, as in
# numba-cuda (tests/test_function_values.py).
@pytest.mark.parametrize("callee, hint", [(plain_python, "@cuda.jit(device=True)")])
def test_calling_what_is_not_a_device_function(callee, hint):
    def kern(x):
        x[0] = callee(x)

    with pytest.raises(UnsupportedError) as info:
        compile_kernel(kern, (typeof(np.zeros(1)),), stop_after="typed")
    assert hint in str(info.value)


def test_calling_a_device_function_on_the_host_is_an_error():
    with pytest.raises(CujitError, match="not from the host"):
        axpy(1.0, 2.0, 3.0)


def test_return_type_errors():
    @cuda.jit(device=True)
    def sometimes(v):  # an array on one path only (a number would be optional)
        if v[0] > 0:
            return v

    @cuda.jit("void(float64)", device=True)
    def declared_void(v):
        return v

    def kern(x):
        y = sometimes(x)
        x[0] = y[0]

    def kern2(x):
        x[0] = declared_void(x[0])

    with pytest.raises(TypingError, match="nothing on another path"):
        compile_kernel(kern, (typeof(np.zeros(1)),), stop_after="typed")
    with pytest.raises(TypingError, match="declared to return nothing"):
        compile_kernel(kern2, (typeof(np.zeros(1)),), stop_after="typed")


def test_argument_errors():
    def kern(x):
        x[0] = axpy(x[0], x[1])

    with pytest.raises(TypingError, match="missing a required argument"):
        compile_kernel(kern, (typeof(np.zeros(2)),), stop_after="typed")

    def kern2(x):
        x[0] = declared_mul(x, x)

    with pytest.raises(TypingError, match="declared as"):
        compile_kernel(kern2, (typeof(np.zeros(2)),), stop_after="typed")


# -- forall ------------------------------------------------------------------------------


@cuda.jit
def add_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += axpy(1, 0, 1)


@pytest.mark.parametrize("target", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("n", [1, 1000, 100_003])
def test_forall_covers_every_task(target, n):
    k = cuda.jit(add_one.py_func, target=target)
    x = np.zeros(n, np.int64)
    k.forall(n)(x)
    np.testing.assert_array_equal(x, np.ones(n, np.int64))
    k.forall(n, tpb=32)(x)
    np.testing.assert_array_equal(x, np.full(n, 2, np.int64))
    k.forall(0)(x)  # nothing to do: no launch


@pytest.mark.gpu
def test_occupancy_block_size_is_a_warp_multiple():
    from cujit.runtime.occupancy import max_potential_block_size

    x = np.zeros(10, np.int64)
    add_one.forall(10)(x)
    spec = next(iter(add_one.overloads.values()))
    fn = next(f for k, f in spec.functions.items() if isinstance(k, int))
    min_grid, block = max_potential_block_size(fn)
    assert min_grid >= 1 and 32 <= block <= 1024 and block % 32 == 0


def test_float32_device_function_keeps_float32():
    @cuda.jit(device=True)
    def half(v):
        return v * np.float32(0.5)

    def kern(x):
        x[0] = half(x[0])

    fn = compile_kernel(kern, (typeof(np.zeros(1, np.float32)),), stop_after="passes").outputs[
        "passes"
    ]
    assert fn.callees[0].return_type == float32
