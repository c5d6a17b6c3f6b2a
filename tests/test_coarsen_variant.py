"""The coarsened variant (passes/coarsen.py, cujit/coarsen.py): results against NumPy on
the CPU target with the variant chosen or not by the launch's facts, its PTX's 16-byte
accesses (compile-only, no GPU), its cache key, and the switches that turn it off."""

import math

import numpy as np
import pytest

from cujit import config, cuda
from cujit.cache.key import kernel_key
from cujit.options import Options
from cujit.pipeline import compile_kernel
from cujit.types import typeof

RNG = np.random.default_rng(17)


@pytest.fixture(autouse=True)
def variants_at_the_first_launch(monkeypatch):
    """These tests check the variants' results: each kernel's first launch that could
    take one compiles it (tests/test_variants_background.py tests the lazy default)."""
    monkeypatch.setenv("CUJIT_VARIANTS_LAZY", "0")


def data(n, dtype=np.float32, offset=0):
    return (RNG.standard_normal(n + offset) + 0.5).astype(dtype)[offset:]


def saxpy(out, a, x, y, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = a * x[i] + y[i]


def diff(out, x):
    i = cuda.grid(1)
    if i >= x.size - 1:
        return
    out[i] = x[i + 1] - x[i]


@cuda.jit(device=True)
def gelu(v):
    return 0.5 * v * (1.0 + math.tanh(0.7978845608 * (v + 0.044715 * v * v * v)))


def gelu_map(out, x):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = gelu(x[i])


def widen(out, x):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] * 2.0


def in_place(x, s):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = x[i] * s + 1


class Chosen:
    """Records, per launch, whether the plan chose the wide variant."""

    def __init__(self, monkeypatch):
        from cujit.coarsen import Plan

        self.log = []
        original = Plan.select

        def select(plan, spec, args, grid, block):
            got = original(plan, spec, args, grid, block)
            self.log.append(got[0] is plan.wide)
            return got

        monkeypatch.setattr(Plan, "select", select)


def cpu_kernel(fn, **flags):
    return cuda.jit(target="cpu", **flags)(fn)


@pytest.mark.parametrize("n", [1, 3, 4, 5, 17, 1000, 1027])
def test_saxpy_both_variants_match_numpy(monkeypatch, n):
    chosen = Chosen(monkeypatch)
    k = cpu_kernel(saxpy)
    a = np.float32(1.75)
    for offset, blocks in [(0, -(-n // 32)), (1, -(-n // 32)), (0, 1)]:
        x, y = data(n, offset=offset), data(n, offset=offset)
        out = np.full(n, np.nan, np.float32)
        covered = min(n, blocks * 32)
        k[blocks, 32](out, a, x, y, n)
        ref = a * x[:covered] + y[:covered]
        np.testing.assert_allclose(out[:covered], ref, rtol=1e-6)
        assert np.isnan(out[covered:]).all()  # indices the launch did not ask for
        aligned = all(v.ctypes.data % 16 == 0 for v in (out, x, y))
        assert chosen.log[-1] is (aligned and blocks * 32 >= n)
    assert any(chosen.log)


def test_offset_reads_and_tail(monkeypatch):
    chosen = Chosen(monkeypatch)
    k = cpu_kernel(diff)
    for n in (2, 9, 130):
        x = data(n)
        out = np.full(n, np.nan, np.float32)
        k[-(-n // 64), 64](out, x)
        np.testing.assert_allclose(out[: n - 1], x[1:] - x[:-1], rtol=1e-6)
        assert np.isnan(out[n - 1])
    assert all(chosen.log)


def test_device_function_map_float64(monkeypatch):
    chosen = Chosen(monkeypatch)
    k = cpu_kernel(gelu_map)
    x = data(333, np.float64)
    out = np.full(333, np.nan)
    k[3, 128](out, x)
    ref = 0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x**3)))
    np.testing.assert_allclose(out, ref, rtol=1e-12)
    plan = next(iter(k.overloads.values())).coarse
    assert chosen.log == [True] and plan.k == 2


def test_mixed_widths_use_the_narrowest(monkeypatch):
    chosen = Chosen(monkeypatch)
    k = cpu_kernel(widen)
    x = data(71)
    out = np.full(71, np.nan)
    k[1, 128](out, x)
    np.testing.assert_allclose(out, x.astype(np.float64) * 2.0, rtol=1e-7)
    assert chosen.log == [True] and next(iter(k.overloads.values())).coarse.k == 4


def test_in_place_update_of_ints():
    k = cpu_kernel(in_place)
    x = np.arange(1, 1000, dtype=np.int32)
    ref = x * 3 + 1
    k[8, 128](x, 3)
    np.testing.assert_array_equal(x, ref)


def test_switched_off_per_kernel_and_globally(monkeypatch):
    x = data(8)
    off = cpu_kernel(saxpy, coarsen=False)
    off[1, 32](x.copy(), np.float32(1), x, x, 8)
    assert next(iter(off.overloads.values())).coarse is None
    monkeypatch.setenv(config.COARSEN.name, "0")
    glob = cpu_kernel(saxpy)
    glob[1, 32](x.copy(), np.float32(1), x, x, 8)
    assert next(iter(glob.overloads.values())).coarse is None
    monkeypatch.setenv(config.COARSEN.name, "1")
    on = cpu_kernel(saxpy)
    on[1, 32](x.copy(), np.float32(1), x, x, 8)
    assert next(iter(on.overloads.values())).coarse is not None


# -- compile-only: the variant's PTX (libNVVM needs no GPU) ------------------
def _ptx(fn, args, coarsen):
    types = tuple(typeof(a) for a in args)
    opts = Options(coarsen=coarsen, verify=True)
    return compile_kernel(fn, types, opts, stop_after="ptx").ptx


def test_ptx_has_16_byte_accesses_float32():
    args = (data(8), np.float32(2), data(8), data(8), 8)
    wide = _ptx(saxpy, args, 4)
    assert wide.count("ld.global.v4.f32") == 2 and wide.count("st.global.v4.f32") == 1
    assert "ld.global.v4" not in _ptx(saxpy, args, 0)


def test_ptx_has_16_byte_accesses_float64():
    wide = _ptx(gelu_map, (data(8, np.float64), data(8, np.float64)), 2)
    assert "ld.global.v2.f64" in wide and "st.global.v2.f64" in wide


def test_variant_is_in_the_cache_key():
    types = tuple(typeof(a) for a in (data(8), np.float32(2), data(8), data(8), 8))
    assert kernel_key(saxpy, types, Options()) != kernel_key(saxpy, types, Options(coarsen=4))


def test_a_refused_kernel_cannot_be_coarsened():
    from cujit.diagnostics import InternalCompilerError

    def strided(out, x):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = x[2 * i]

    with pytest.raises(InternalCompilerError):
        _ptx(strided, (data(8), data(16)), 4)


# -- on the GPU: both launch paths ------------------------------------------
@pytest.mark.gpu
@pytest.mark.parametrize("n", [1, 5, 4099, (1 << 20) + 3])
def test_gpu_both_variants_match_numpy(monkeypatch, n):
    chosen = Chosen(monkeypatch)
    k = cuda.jit(saxpy)
    a = np.float32(-0.5)
    hx, hy = data(n + 1), data(n + 1)
    dx, dy = cuda.to_device(hx), cuda.to_device(hy)
    cases = [(dx, dy, hx, hy, -(-n // 128)), (dx[1:], dy[1:], hx[1:], hy[1:], -(-n // 128))]
    cases.append((dx, dy, hx, hy, max(1, n // 256)))  # grid short of n: the plain kernel
    for _ in range(3):  # the first launch takes the general path, the rest the selectors
        for x, y, rx, ry, blocks in cases:
            m = x.size if x.size < n else n
            out = cuda.to_device(np.full(m, np.nan, np.float32))
            k[blocks, 128](out, a, x, y, m)
            got = out.copy_to_host()
            covered = min(m, blocks * 128)
            np.testing.assert_allclose(got[:covered], a * rx[:covered] + ry[:covered], rtol=1e-6)
            assert np.isnan(got[covered:]).all()
    plan = next(iter(k.overloads.values())).coarse
    assert plan is not None and plan.wide is not None and True in chosen.log


@pytest.mark.gpu
def test_gpu_float64_and_offsets():
    k = cuda.jit(diff)
    for n in (2, 3, 1001, 1 << 18):
        hx = data(n, np.float64)
        out = cuda.to_device(np.full(n, np.nan))
        for _ in range(2):
            k[-(-n // 256), 256](out, cuda.to_device(hx))
        got = out.copy_to_host()
        np.testing.assert_allclose(got[:-1], hx[1:] - hx[:-1], rtol=1e-12)
        assert np.isnan(got[-1])


def cmul(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * y[i]


def _complex(n, dtype=np.complex64):
    return (RNG.standard_normal(n) + 1j * RNG.standard_normal(n)).astype(dtype)


def test_complex64_both_variants_match_numpy(monkeypatch):
    chosen = Chosen(monkeypatch)
    k = cpu_kernel(cmul)
    for n, offset in ((1003, 0), (6, 0), (40, 1)):
        x, y = _complex(n + offset)[offset:], _complex(n + offset)[offset:]
        out = np.full(n, np.nan, np.complex64)
        k[-(-n // 64), 64](x, y, out)
        ref = x.astype(np.complex128) * y
        assert np.linalg.norm(out - ref) <= 1e-6 * np.linalg.norm(ref)
    assert chosen.log == [True, True, False]
    assert next(iter(k.overloads.values())).coarse.k == 2


def test_ptx_complex64_is_two_parts_per_element():
    args = (_complex(8), _complex(8), _complex(8))
    wide = _ptx(cmul, args, 2)
    assert wide.count("ld.global.v4.f32") == 2 and wide.count("st.global.v4.f32") == 1


def test_complex128_is_refused():
    from cujit.ir.independence import analyse

    types = tuple(typeof(a) for a in (_complex(8, np.complex128),) * 3)
    fn = compile_kernel(cmul, types, Options(), stop_after="passes").outputs["passes"]
    verdict = analyse(fn)
    assert not verdict.ok and "4- or 8-byte numbers" in verdict.rule


def test_the_variant_compile_is_an_event():
    from cujit import events

    seen = []
    record = events.subscribe(lambda kind, name, target: seen.append(kind))
    try:
        k = cpu_kernel(in_place)
        x = np.arange(64, dtype=np.int32)
        k[1, 64](x, 2)
        k[1, 64](x, 2)
    finally:
        events.unsubscribe(record)
    np.testing.assert_array_equal(x, (np.arange(64) * 2 + 1) * 2 + 1)
    assert seen == ["compile", "compile", "launch", "launch"]  # as written, then the variant
