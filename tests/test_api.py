"""The user-facing API without a GPU: decorators, launch configuration, compile_ptx, errors."""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda, float32
from cujit.diagnostics import LaunchError, NoGPUError
from cujit.dispatcher import normalize_dim


@cuda.jit
def add_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


def test_normalize_dim():
    assert normalize_dim(5, "grid") == (5, 1, 1)
    assert normalize_dim((2, 3), "grid") == (2, 3, 1)
    assert normalize_dim((2, 3, 4), "block") == (2, 3, 4)
    for bad in (0, -1, (1, 0), (1, 2, 3, 4), 1.5, "3", ()):
        with pytest.raises(LaunchError):
            normalize_dim(bad, "grid")


def test_launch_needs_a_configuration():
    with pytest.raises(LaunchError, match=r"add_one\[blocks, threads_per_block\]"):
        add_one(np.zeros(3))
    with pytest.raises(LaunchError):
        add_one[1]


def test_compile_ptx_like_numba():
    ptx, resty = cuda.compile_ptx(add_one.py_func, "void(float32[:])", cc=(9, 0))
    assert resty == cuda.void
    assert ".target sm_90" in ptx and ".entry" in ptx
    ptx80, _ = cuda.compile_ptx(add_one.py_func, (float32[:],), cc=(8, 0))
    assert ".target sm_80" in ptx80


def test_eager_signature_compiles_at_decoration():
    @cuda.jit("void(float32[::1], int64)")
    def fill(x, v):
        i = cuda.grid(1)
        if i < x.size:
            x[i] = v

    assert list(fill.overloads) == [(cuda.float32[::1], cuda.int64)]
    assert ".entry" in fill.inspect_ptx()


def test_kernel_returning_a_value_is_an_error():
    def bad(x):
        return x[0]

    with pytest.raises(Exception, match="return"):
        cuda.compile_ptx(bad, "void(float32[:])")


def test_device_function_decorator_forms():
    from cujit.dispatcher import DeviceFunction

    def f(x):
        return x + 1

    assert isinstance(cuda.jit(device=True)(f), DeviceFunction)
    assert isinstance(cuda.jit(f, device=True), DeviceFunction)
    assert isinstance(cuda.jit("float32(float32)", device=True)(f), DeviceFunction)


@pytest.mark.skipif(cuda.is_available(), reason="checks the no-GPU message")
def test_launch_without_gpu_says_so():
    x = np.zeros(10, np.float32)
    with pytest.raises(NoGPUError, match="GPU"):
        add_one[1, 32](x)
    with pytest.raises(NoGPUError):
        cuda.to_device(x)


def test_cached_launch_configurations_still_refuse_bools_and_floats():
    k = cuda.jit(add_one.py_func, target="cpu")
    x = np.zeros(8, np.float32)
    k[1, 8](x)
    for bad in ((True, 8), (1.0, 8), (1, True), (1, 8.0)):
        with pytest.raises(LaunchError):
            k[bad]
    k[1, 8](x)
    assert (x == 2).all()


def plain_add_one(x):  # left undecorated: the kernel below is made from it
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


def test_kernels_pickle_by_their_function_and_options():
    import pickle

    from kernels import saxpy, saxpy_eager

    for k in (saxpy, saxpy_eager):  # module-level kernels travel by name
        assert pickle.loads(pickle.dumps(k)) is k
    # Others as their function and options (here the function is module-level too,
    # so plain pickle can carry it; cloudpickle carries closures by value).
    cpu = pickle.loads(pickle.dumps(cuda.jit(plain_add_one, target="cpu", debug=True)))
    assert cpu.target == "cpu" and cpu._base_options.debug
    x = np.zeros(4, np.float32)
    cpu[1, 4](x)
    assert (x == 1).all()
