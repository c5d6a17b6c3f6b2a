"""Overloads shared with numba: those filed with numba's own ``overload`` for the CUDA
target (or generic, or no target) serve cujit's kernels; cujit's ``overload`` with
target "generic" or "cpu" serves numba's ``njit`` too; ``cuda.target``'s typing context
lists the overloads in force.  Kernels run on the CPU target."""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda
from cujit.extending import overload
from cujit.types import IntegerLiteral

numba = pytest.importorskip("numba")
from numba.core import extending as numba_extending  # noqa: E402


def _poisoned(n: int = 4) -> np.ndarray:
    return np.full(n, -7777, dtype=np.int64)


def test_numba_cuda_overload_serves_a_kernel():
    def scaled(x):
        raise NotImplementedError

    @numba_extending.overload(scaled, target="cuda")
    def ol_scaled(x):
        def impl(x):
            a = cuda.local.array(1, dtype=np.int64)
            a[0] = x * 11 + 2
            return a[0]

        return impl

    @cuda.jit(target="cpu")
    def k(out, x):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = scaled(x[i])

    x = np.array([3, -5, 0, 123456], dtype=np.int64)
    out = _poisoned()
    k[1, 4](out, x)
    np.testing.assert_array_equal(out, x * 11 + 2)


def test_numba_overload_for_another_target_is_not_taken():
    def cpu_only():
        raise NotImplementedError

    @numba_extending.overload(cpu_only, target="cpu")
    def ol_cpu_only():
        return lambda: 1

    @cuda.jit(target="cpu")
    def k(out):
        out[0] = cpu_only()

    with pytest.raises(Exception, match="cpu_only"):
        k[1, 1](_poisoned(1))


def test_numba_overload_without_target_gets_literal_types():
    def pick(x):
        raise NotImplementedError

    seen = []

    @numba_extending.overload(pick)
    def ol_pick(x):
        seen.append(x)
        if isinstance(x, IntegerLiteral):
            value = x.literal_value

            def impl(x):
                return value * 2

            return impl
        return None

    @cuda.jit(target="cpu")
    def k(out):
        out[0] = pick(21)

    out = _poisoned(1)
    k[1, 1](out)
    assert out[0] == 42
    assert any(isinstance(t, IntegerLiteral) for t in seen)


def test_numbas_own_overloads_are_left_to_cujit():
    # numba files overloads of len and np.sum for its own types; kernels keep cujit's.
    @cuda.jit(target="cpu")
    def k(out, a):
        out[0] = len(a)
        out[1] = np.sum(a)

    a = np.arange(1, 6, dtype=np.int64)
    out = _poisoned(2)
    k[1, 1](out, a)
    np.testing.assert_array_equal(out, [5, 15])


def test_generic_cujit_overload_serves_numba_njit_and_kernels():
    def tripled(x):
        raise NotImplementedError

    @overload(tripled, target="generic")
    def ol_tripled(x):
        def impl(x):
            return 3 * x + 1

        return impl

    @numba.njit
    def host(x):
        return tripled(x)

    assert host(14) == 43

    @cuda.jit(target="cpu")
    def k(out):
        out[0] = tripled(5)

    out = _poisoned(1)
    k[1, 1](out)
    assert out[0] == 16


def test_cuda_only_cujit_overload_is_not_filed_with_numba():
    def cuda_only(x):
        raise NotImplementedError

    @overload(cuda_only, target="cuda")
    def ol_cuda_only(x):
        return lambda x: x

    @numba.njit
    def host(x):
        return cuda_only(x)

    with pytest.raises(numba.core.errors.TypingError):
        host(1)


def test_typing_context_lists_overloads():
    from cujit.cuda.target import CUDATypingContext

    def listed(a, b):
        raise NotImplementedError

    ctx = CUDATypingContext()

    def ol_listed(a, b):
        return lambda a, b: a + b

    assert not any(getattr(t, "key", None) is listed for r in ctx._registries for t in r.functions)
    overload(listed, target="cuda")(ol_listed)
    ctx.refresh()
    found = [t for r in ctx._registries for t in r.functions if t.key is listed]
    assert [t._overload_func for t in found] == [ol_listed]
    assert found[0].metadata == {"target": "cuda"}
    assert cuda.target.CUDATypingContext is CUDATypingContext


def test_typing_context_lists_numbas_cuda_overloads():
    from cujit.cuda.target import CUDATypingContext

    def numba_listed(n):
        raise NotImplementedError

    @numba_extending.overload(numba_listed, target="cuda")
    def ol_numba_listed(n):
        return lambda n: n

    ctx = CUDATypingContext()
    found = [t for r in ctx._registries for t in r.functions if t.key is numba_listed]
    assert [t._overload_func for t in found] == [ol_numba_listed]


def test_numba_function_with_compilation_disabled_is_refused_on_the_device():
    from cujit.diagnostics import TypingError

    @numba.jit("(i4, i4)", nopython=True)
    def add_fixed(a, b):
        return a + b

    @numba.njit
    def add_lazy(a, b):
        return a + b

    @cuda.jit(target="cpu")
    def uses_lazy(out):
        out[0] = add_lazy(out[0], 5)

    out = np.full(1, 37, dtype=np.int64)
    uses_lazy[1, 1](out)
    assert out[0] == 42

    @cuda.jit(target="cpu")
    def uses_fixed(out):
        out[0] = add_fixed(out[0], 5)

    with pytest.raises(TypingError, match="Untyped global name 'add_fixed': using cpu function"):
        uses_fixed[1, 1](out)
