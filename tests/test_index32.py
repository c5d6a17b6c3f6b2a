"""The 32-bit index variant (codegen/narrow.py, cujit/index_width.py, docs/index32.md):
which kernels get one, results against NumPy on the CPU target with the variant taken
(negative-index wraps, floor division and modulo of negative values included), its
PTX's 32-bit comparisons and divisions (compile-only), its cache key, the launch facts
and the switches that turn it off; the per-configuration selector against the stand-in
driver of test_launcher.py."""

from __future__ import annotations

import re

import numpy as np
import pytest

from cujit import cuda, index_width
from cujit.abi import INDEX32_LIMIT
from cujit.cache.key import kernel_key
from cujit.codegen.narrow import worth_narrowing
from cujit.codegen.params import value_ranges
from cujit.options import Options
from cujit.pipeline import compile_kernel
from cujit.types import float32, int64, typeof

RNG = np.random.default_rng(32)
TAPS = 5


@pytest.fixture(autouse=True)
def variants_at_the_first_launch(monkeypatch):
    """These tests check the variants' results: each kernel's first launch that could
    take one compiles it (tests/test_variants_background.py tests the lazy default)."""
    monkeypatch.setenv("CUJIT_VARIANTS_LAZY", "0")


def conv(x, w, out):
    i = cuda.grid(1)
    n = x.size
    if i < n:
        acc = float32(0.0)
        for k in range(TAPS):
            j = i + k - 2
            if j >= 0 and j < n:
                acc += w[k] * x[j]
        out[i] = acc


def mixed(x, out):
    i = cuda.grid(1)
    n = x.size
    if i < n and i < out.size:
        q = (i - 7) // 3
        r = (i - 7) % 3
        out[i] = x[i - 2] + float32(q) * float32(10.0) + float32(r) + x[(i + 1) % n]


def stencil(u, out):
    x, y = cuda.grid(2)
    ny, nx = u.shape
    if x < nx and y < ny:
        if x > 0 and x < nx - 1 and y > 0 and y < ny - 1:
            out[y, x] = u[y, x - 1] + u[y, x + 1] + u[y - 1, x] + u[y + 1, x]
        else:
            out[y, x] = u[y, x]


def copy(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i]


def wide_products(x, out):
    i = cuda.grid(1)
    n = x.size
    if i < n and i * 8 < n * 8 and i * 4 >= 0:  # i * 8: up to 2**33, past int32
        out[i] = x[i]


def conv_ref(x, w):
    xp = np.pad(x.astype(np.float64), 2)
    return sum(w[k] * xp[k : k + x.size] for k in range(TAPS))


def mixed_ref(x):
    n = x.size
    i = np.arange(n)
    return x[i - 2] + ((i - 7) // 3) * 10.0 + (i - 7) % 3 + x[(i + 1) % n]


def stencil_ref(u):
    out = u.astype(np.float64).copy()
    out[1:-1, 1:-1] = u[1:-1, :-2] + u[1:-1, 2:] + u[:-2, 1:-1] + u[2:, 1:-1]
    return out


def poisoned(shape):
    return np.full(shape, np.nan, np.float32)


def rel(got, want) -> float:
    return float(np.linalg.norm(got - want) / np.linalg.norm(want))


def typed(fn, *args):
    return compile_kernel(fn, tuple(typeof(a) for a in args), Options(), stop_after="passes")


def ptx(fn, args, index32: bool) -> str:
    types = tuple(typeof(a) for a in args)
    return compile_kernel(fn, types, Options(index32=index32), stop_after="ptx").ptx


def launched(kernel, *args, grid, block):
    kernel[grid, block](*args)
    (spec,) = kernel.overloads.values()
    return spec


# -- which kernels have a variant ------------------------------------------------------


def test_worth_it_for_guards_in_a_loop_and_for_divisions_not_for_a_lone_bound_check():
    x, w, out = np.ones(64, np.float32), np.ones(TAPS, np.float32), poisoned(64)
    u = np.ones((8, 8), np.float32)
    assert worth_narrowing(typed(conv, x, w, out).outputs["passes"], INDEX32_LIMIT)
    assert worth_narrowing(typed(mixed, x, out).outputs["passes"], INDEX32_LIMIT)
    assert worth_narrowing(typed(stencil, u, u).outputs["passes"], INDEX32_LIMIT)
    assert not worth_narrowing(typed(copy, x, out).outputs["passes"], INDEX32_LIMIT)


def test_the_compile_says_whether_small_arrays_have_a_variant():
    x, w, out = np.ones(64, np.float32), np.ones(TAPS, np.float32), poisoned(64)
    types = tuple(typeof(a) for a in (x, w, out))
    assert compile_kernel(conv, types, Options(target="cpu")).outputs["index32"] is True
    types = (typeof(x), typeof(out))
    assert compile_kernel(copy, types, Options(target="cpu")).outputs["index32"] is False


def test_ranges_under_the_facts_bound_extents_and_the_grid_not_products_past_int32():
    x, out = np.ones(64, np.float32), poisoned(64)
    fn = typed(wide_products, x, out).outputs["passes"]
    under, plain = value_ranges(fn, INDEX32_LIMIT), value_ranges(fn)
    values = {}
    for op in fn.all_ops():
        if op.result is not None and op.result.type == int64:
            values.setdefault(type(op).__name__, []).append(op)
    size = next(op for op in values["Intrinsic"] if op.name == "array.size")
    grid = next(op for op in values["Intrinsic"] if op.name == "cuda.grid")
    assert under.range(size.result) == (1, INDEX32_LIMIT)
    assert under.range(grid.result) == (0, INDEX32_LIMIT - 1)
    assert plain.range(grid.result)[1] > 2**31  # without the facts: 2**31 blocks of 1024
    products = [op for op in values["BinOp"] if op.op == "*"]
    eights = [op for op in products if under.range(op.result)[1] >= 8 * (INDEX32_LIMIT - 1)]
    assert eights and all(under.range(op.result)[1] > 2**31 - 1 for op in eights)


def test_products_past_int32_stay_int64_in_the_variant():
    x, out = np.ones(64, np.float32), poisoned(64)
    text = ptx(wide_products, (x, out), index32=True)
    # i * 8 < n * 8 cannot be an int32 comparison: its sides reach 2**33
    assert re.search(r"\bsetp\.\w+\.s64\b", text)


# -- results against NumPy on the CPU target, the variant taken --------------------------


@pytest.mark.parametrize("n", [1, 3, 4099])
def test_conv_matches_numpy_in_the_variant(n):
    x = RNG.standard_normal(n).astype(np.float32) + 0.5
    w = RNG.uniform(-1, 1, TAPS).astype(np.float32)
    out = poisoned(n)
    k = cuda.jit(conv, target="cpu")
    spec = launched(k, x, w, out, grid=(n + 127) // 128, block=128)
    assert isinstance(spec.coarse, index_width.Plan) and spec.coarse.wide is not None
    assert rel(out, conv_ref(x, w)) < 1e-6


def test_wraps_floor_division_and_modulo_of_negative_values_match_numpy_in_the_variant():
    n = 1000
    x = RNG.standard_normal(n).astype(np.float32) + 0.5
    out = poisoned(n)
    k = cuda.jit(mixed, target="cpu")
    spec = launched(k, x, out, grid=8, block=128)
    assert spec.coarse.wide is not None
    assert rel(out, mixed_ref(x)) < 1e-6
    # i = 0, 1 read x[-2], x[-1]; i < 7 divides a negative value (floor, as Python)
    assert out[0] == np.float32(x[-2] + (-7 // 3) * 10.0 + (-7 % 3) + x[1])


def test_a_2d_stencil_matches_numpy_in_the_variant():
    u = RNG.standard_normal((37, 45)).astype(np.float32) + 0.5
    out = poisoned(u.shape)
    k = cuda.jit(stencil, target="cpu")
    spec = launched(k, u, out, grid=(3, 10), block=(16, 4))
    assert spec.coarse.wide is not None
    assert rel(out, stencil_ref(u)) < 1e-6


def test_the_plain_kernel_and_the_variant_agree():
    n = 777
    x = RNG.standard_normal(n).astype(np.float32) + 0.5
    plain_out, wide_out = poisoned(n), poisoned(n)
    launched(cuda.jit(mixed, target="cpu", index32=False), x, plain_out, grid=7, block=128)
    launched(cuda.jit(mixed, target="cpu"), x, wide_out, grid=7, block=128)
    np.testing.assert_array_equal(plain_out, wide_out)


# -- the variant's code (compile-only) ---------------------------------------------------


def _setp(text: str, bits: int) -> int:
    return len(re.findall(rf"\bsetp\.\w+\.[su]{bits}\b", text))


def test_the_variant_compares_the_guards_in_32_bits():
    x, w, out = np.ones(64, np.float32), np.ones(TAPS, np.float32), poisoned(64)
    plain, wide = ptx(conv, (x, w, out), False), ptx(conv, (x, w, out), True)
    # the bound check and both guards of each tap but the middle one's, which is known
    assert _setp(plain, 64) > TAPS and _setp(wide, 64) == 0
    assert _setp(wide, 32) >= _setp(plain, 64)
    # the wrap of x[j] stays decided by the guard j >= 0: no select on the index
    assert not re.search(r"\bselp\.b64\b", wide)


def test_the_variant_divides_in_32_bits():
    x, out = np.ones(64, np.float32), poisoned(64)
    plain, wide = ptx(mixed, (x, out), False), ptx(mixed, (x, out), True)
    assert re.search(r"\b(div|rem)\.s64\b", plain)
    assert not re.search(r"\b(div|rem)\.s64\b", wide)
    assert re.search(r"\b(div|rem)\.s32\b", wide)


def test_a_cache_hit_keeps_whether_the_kernel_has_a_variant(tmp_path, monkeypatch):
    from cujit.cache import compile_cached

    monkeypatch.setenv("CUJIT_CACHE_DIR", str(tmp_path))
    x, w, out = np.ones(64, np.float32), np.ones(TAPS, np.float32), poisoned(64)
    cases = ((conv, (x, w, out), True), (copy, (x, out), False))
    for fn, args, has in cases:
        types = tuple(typeof(a) for a in args)
        miss = compile_cached(fn, types, Options())
        hit = compile_cached(fn, types, Options())
        assert "cache" in hit.times and "cache" not in miss.times
        assert miss.outputs["index32"] is has
        assert hit.outputs.get("index32", False) is has
        variant = compile_cached(fn, types, Options(index32=True))  # an entry of its own
        assert "cache" not in variant.times and variant.cubin != miss.cubin


def test_the_cache_key_covers_the_variant():
    types = (typeof(np.ones(4, np.float32)),) * 3
    assert kernel_key(conv, types, Options()) != kernel_key(conv, types, Options(index32=True))


# -- the switches and the facts ----------------------------------------------------------


def test_index32_false_and_the_knob_turn_it_off(monkeypatch):
    x, w = np.ones(64, np.float32), np.ones(TAPS, np.float32)
    off = cuda.jit(conv, target="cpu", index32=False)
    assert launched(off, x, w, poisoned(64), grid=1, block=64).coarse is None
    monkeypatch.setenv("CUJIT_INDEX32", "0")
    spec = launched(cuda.jit(conv, target="cpu"), x, w, poisoned(64), grid=1, block=64)
    assert spec.coarse is None


def test_a_debug_build_has_no_variant():
    x, w = np.ones(64, np.float32), np.ones(TAPS, np.float32)
    debug = cuda.jit(conv, target="cpu", debug=True, opt=False)
    assert launched(debug, x, w, poisoned(64), grid=1, block=64).coarse is None


class _Foreign:
    """An array of another library, known by its interface alone."""

    def __init__(self, shape):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": "<f4", "version": 3}


def test_facts_refuse_large_or_empty_arrays_and_wide_grids():
    x, w = np.ones(64, np.float32), np.ones(TAPS, np.float32)
    out = poisoned(64)
    spec = launched(cuda.jit(conv, target="cpu"), x, w, out, grid=1, block=64)
    plan = spec.coarse
    assert plan.facts((x, w, out), 1, 64)
    assert plan.facts((_Foreign((INDEX32_LIMIT,)), w, out), 1, 64)
    assert not plan.facts((_Foreign((INDEX32_LIMIT + 1,)), w, out), 1, 64)
    assert not plan.facts((_Foreign((2**16, 2**15)), w, out), 1, 64)  # 2**31 elements
    assert not plan.facts((np.ones(0, np.float32), w, out), 1, 64)
    assert not plan.facts((object(), w, out), 1, 64)
    assert plan.facts((x, w, out), INDEX32_LIMIT // 1024, 1024)
    assert not plan.facts((x, w, out), INDEX32_LIMIT // 1024 + 1, 1024)
    assert not plan.facts((x, w, out), (1, 2**15), (1, 2**15 + 1))


def test_a_launch_whose_facts_fail_runs_the_kernel_as_written():
    x = RNG.standard_normal(300).astype(np.float32) + 0.5
    w = RNG.uniform(-1, 1, TAPS).astype(np.float32)
    out = poisoned(300)
    k = cuda.jit(conv, target="cpu")
    k[3, 128](x[:0], w, out[:0])  # an empty array: the facts fail
    (spec,) = k.overloads.values()
    assert isinstance(spec.coarse, index_width.Plan) and spec.coarse.wide is None
    k[3, 128](x, w, out)
    assert spec.coarse.wide is not None and rel(out, conv_ref(x, w)) < 1e-6


@pytest.mark.gpu
def test_conv_and_stencil_on_the_gpu_match_numpy_with_and_without_the_variant():
    n = 1 << 20
    x = RNG.standard_normal(n).astype(np.float32) + 0.5
    w = RNG.uniform(-1, 1, TAPS).astype(np.float32)
    u = RNG.standard_normal((300, 257)).astype(np.float32) + 0.5
    for flag in (True, False):
        k = cuda.jit(conv, index32=flag)
        s = cuda.jit(stencil, index32=flag)
        # The first two launches run the kernel as written, the second starting the
        # variant's compile in a thread; the third waits for it and runs it
        # (cujit/variants.py).
        for _ in range(3):
            dout = cuda.to_device(poisoned(n))
            k[(n + 255) // 256, 256](cuda.to_device(x), cuda.to_device(w), dout)
            assert rel(dout.copy_to_host(), conv_ref(x, w)) < 1e-6
            dst = cuda.to_device(poisoned(u.shape))
            s[(9, 75), (32, 4)](cuda.to_device(u), dst)
            assert rel(dst.copy_to_host(), stencil_ref(u)) < 1e-6
        (spec,) = k.overloads.values()
        assert (spec.coarse is not None and spec.coarse.wide is not None) == flag


def explicit(u, out):
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    n, m = u.shape
    if i < n and j < m:
        if i == 0 or j == 0 or i == n - 1 or j == m - 1:
            out[i, j] = u[i, j]
        else:
            out[i, j] = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1]


def mismatched(u, out):  # blockIdx.x times blockDim.y: no bound from the facts
    j = cuda.blockIdx.x * cuda.blockDim.y + cuda.threadIdx.x
    if j < u.size and j < out.size and j != 3:
        out[j] = u[j]


def test_block_offsets_of_one_axis_are_bounded_by_the_grid_fact():
    u, out = np.ones((8, 8), np.float32), poisoned((8, 8))
    fn = typed(explicit, u, out).outputs["passes"]
    under = value_ranges(fn, INDEX32_LIMIT)
    products = [op for op in fn.all_ops() if getattr(op, "op", None) == "*"]
    assert len(products) == 2
    assert all(under.range(op.result) == (0, INDEX32_LIMIT - 1) for op in products)
    # along x, 2**31 - 1 blocks of 1024 threads reach past int32 without the facts
    assert value_ranges(fn).range(products[0].result)[1] > 2**31
    x, y = np.ones(8, np.float32), poisoned(8)
    fn = typed(mismatched, x, y).outputs["passes"]
    (product,) = [op for op in fn.all_ops() if getattr(op, "op", None) == "*"]
    assert value_ranges(fn, INDEX32_LIMIT).range(product.result)[1] > 2**31


def test_explicit_thread_indices_match_numpy_in_the_variant():
    u = RNG.standard_normal((33, 70)).astype(np.float32) + 0.5
    out = poisoned(u.shape)
    k = cuda.jit(explicit, target="cpu")
    spec = launched(k, u, out, grid=(3, 9), block=(32, 4))
    assert spec.coarse.wide is not None
    assert rel(out, stencil_ref(u)) < 1e-6


EXPLAINED = """
from cujit import cuda
from cujit.types import float32


def conv(x, w, out):
    i = cuda.grid(1)
    n = x.size
    if i < n:
        acc = float32(0.0)
        for k in range(5):
            j = i + k - 2
            if j >= 0 and j < n:
                acc += w[k] * x[j]
        out[i] = acc


def column(x, out):  # 2-D indexing: not coarsened; one bound check: no variant either
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i, 0] = x[i, 0]
"""


@pytest.mark.parametrize(
    ("kernel", "sig", "said"),
    [
        ("conv", "void(float32[::1], float32[::1], float32[::1])", "32-bit index variant: "),
        ("column", "void(float32[:, ::1], float32[:, ::1])", "no 32-bit index variant: "),
    ],
)
def test_explain_says_whether_there_is_a_32_bit_variant(tmp_path, kernel, sig, said):
    import subprocess
    import sys

    path = tmp_path / "kernels.py"
    path.write_text(EXPLAINED)
    cmd = [sys.executable, "-m", "cujit", "explain", f"{path}:{kernel}", "--sig", sig]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=True)
    tail = done.stdout.split("== coarsening ==\n", 1)[1].splitlines()
    assert tail[0].strip().startswith("not coarsened")
    assert tail[1].strip().startswith(said)


# -- shape groups: arrays of one rank share their extents in the variant ------------------


def test_shape_groups_are_the_contiguous_arrays_of_one_rank_and_layout():
    from cujit.abi import shape_groups
    from cujit.types import float64

    c2, f2, a2 = float32[:, ::1], float32[::1, :], float32[:, :]
    assert shape_groups((c2, float32[::1], c2, float64[:, ::1])) == ((0, 2, 3),)
    assert shape_groups((c2, f2, a2, float32[:, :, ::1])) == ()
    assert shape_groups((float32[::1], float32[::1])) == ()  # 1-D: no extent in an address


def _multiplies(text: str) -> int:
    return len(re.findall(r"\bmul\.(lo\.s64|wide\.[su]32)\b", text))


def test_the_variant_addresses_a_shape_group_with_one_set_of_extents():
    u, out = np.ones((8, 8), np.float32), poisoned((8, 8))
    plain, wide = ptx(stencil, (u, out), False), ptx(stencil, (u, out), True)
    # out[y, x] and u[y, x] share y * nx: one product fewer
    assert _multiplies(wide) < _multiplies(plain)


def test_unequal_shapes_in_a_group_run_the_kernel_as_written():
    u = RNG.standard_normal((37, 45)).astype(np.float32) + 0.5
    out = poisoned((40, 50))
    k = cuda.jit(stencil, target="cpu")
    spec = launched(k, u, out, grid=(3, 10), block=(16, 4))
    assert spec.coarse.wide is None and not spec.coarse.facts((u, out), (3, 10), (16, 4))
    assert rel(out[:37, :45], stencil_ref(u)) < 1e-6
    assert np.isnan(out[37:]).all() and np.isnan(out[:, 45:]).all()
    assert spec.coarse.facts((u, poisoned(u.shape)), (3, 10), (16, 4))
    assert not spec.coarse.facts((u, _Foreign((37, 46))), (3, 10), (16, 4))
