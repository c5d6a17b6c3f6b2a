"""Tensor cores from a kernel: ``cuda.mma``, ``ldmatrix``/``stmatrix``, ``cp_async`` and the
packing helpers, on the CPU target (here) and the GPU (marked ``gpu``), against NumPy.

Fragments are built on the host from PTX's layouts (``cujit.ir.fragments``); the
layouts themselves are pinned by hand-checked entries of the PTX ISA's figures, and the
GEMM example ties ``ldmatrix``'s layout (written separately) to ``mma``'s on both targets.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import TypingError, UnsupportedError
from cujit.ir import fragments as fr
from cujit.options import Options
from cujit.pipeline import compile_kernel
from cujit.types import Array, float32, int32, uint16, uint32

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


def bf16_bits(x):
    u = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_value(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


# -- the layouts ----------------------------------------------------------------------


def test_layouts_match_the_ptx_figures():
    """Entries read off the PTX ISA's fragment figures for mma.m16n8k16 (.bf16/.f16),
    m16n8k8 .tf32 and m16n8k32 .s8 (lane 5: groupID 1, threadID_in_group 1)."""
    f16 = fr.FORMS[("m16n8k16", "bf16", "f32")]
    assert [fr.a_coord(f16, 5, j) for j in range(8)] == [
        (1, 2), (1, 3), (9, 2), (9, 3), (1, 10), (1, 11), (9, 10), (9, 11),
    ]  # fmt: skip
    assert [fr.b_coord(f16, 5, j) for j in range(4)] == [(2, 1), (3, 1), (10, 1), (11, 1)]
    assert [fr.c_coord(f16, 5, j) for j in range(4)] == [(1, 2), (1, 3), (9, 2), (9, 3)]
    tf = fr.FORMS[("m16n8k8", "tf32", "f32")]
    assert [fr.a_coord(tf, 5, j) for j in range(4)] == [(1, 1), (9, 1), (1, 5), (9, 5)]
    assert [fr.b_coord(tf, 5, j) for j in range(2)] == [(1, 1), (5, 1)]
    s8 = fr.FORMS[("m16n8k32", "s8", "s32")]
    assert [fr.a_coord(s8, 5, j) for j in (0, 3, 4, 8, 15)] == [
        (1, 4),
        (1, 7),
        (9, 4),
        (1, 20),
        (9, 23),
    ]
    assert [fr.b_coord(s8, 5, j) for j in (0, 3, 4, 7)] == [(4, 1), (7, 1), (20, 1), (23, 1)]


@pytest.mark.parametrize(
    "form", list(fr.FORMS.values()), ids=lambda f: f"{f.shape}-{f.kind}-{f.acc}"
)
def test_each_element_is_held_by_exactly_one_lane(form):
    a = {fr.a_coord(form, lane, j) for lane in range(32) for j in range(fr.a_elements(form))}
    b = {fr.b_coord(form, lane, j) for lane in range(32) for j in range(fr.b_elements(form))}
    c = {fr.c_coord(form, lane, j) for lane in range(32) for j in range(4)}
    assert a == {(r, k) for r in range(form.m) for k in range(form.k)}
    assert b == {(k, n) for k in range(form.k) for n in range(form.n)}
    assert c == {(r, n) for r in range(form.m) for n in range(form.n)}


# -- one mma per form ---------------------------------------------------------------------


def _inputs(form, rng):  # noqa: C901 -- one branch per element kind, as PTX has
    """Random A, B, C of the form's kinds, exactly representable; and their registers."""
    m, n, k = form.m, form.n, form.k
    if form.kind in ("s8", "u8"):
        lo, hi = (-128, 128) if form.kind == "s8" else (0, 256)
        A, B = rng.integers(lo, hi, (m, k)), rng.integers(lo, hi, (k, n))
        C = rng.integers(-(2**20), 2**20, (m, n))
        abits, bbits = A.astype(np.uint8).astype(np.uint32), B.astype(np.uint8).astype(np.uint32)
    elif form.kind == "tf32":
        A = rng.standard_normal((m, k)).astype(np.float32)
        B = rng.standard_normal((k, n)).astype(np.float32)
        A = (A.view(np.uint32) & 0xFFFFE000).view(np.float32)  # tf32 values
        B = (B.view(np.uint32) & 0xFFFFE000).view(np.float32)
        C = rng.standard_normal((m, n)).astype(np.float32)
        abits, bbits = A.view(np.uint32), B.view(np.uint32)
    else:
        if form.kind == "bf16":
            abits = bf16_bits(rng.standard_normal((m, k))).astype(np.uint32)
            bbits = bf16_bits(rng.standard_normal((k, n))).astype(np.uint32)
            A, B = bf16_value(abits), bf16_value(bbits)
        else:
            A = rng.standard_normal((m, k)).astype(np.float16)
            B = rng.standard_normal((k, n)).astype(np.float16)
            abits, bbits = A.view(np.uint16).astype(np.uint32), B.view(np.uint16).astype(np.uint32)
        C = rng.standard_normal((m, n)).astype(np.float16 if form.acc == "f16" else np.float32)
    bits, per = form.in_bits, fr.per_reg(form.in_bits)
    ra = np.zeros((32, form.a_regs), np.uint32)
    rb = np.zeros((32, form.b_regs), np.uint32)
    for lane in range(32):
        for j in range(fr.a_elements(form)):
            ra[lane, j // per] |= abits[fr.a_coord(form, lane, j)] << np.uint32((j % per) * bits)
        for j in range(fr.b_elements(form)):
            rb[lane, j // per] |= bbits[fr.b_coord(form, lane, j)] << np.uint32((j % per) * bits)
    if form.acc == "f16":
        cbits = C.view(np.uint16).astype(np.uint32)
        rc = np.zeros((32, 2), np.uint32)
        for lane in range(32):
            for j in range(4):
                rc[lane, j // 2] |= cbits[fr.c_coord(form, lane, j)] << np.uint32(16 * (j % 2))
    else:
        rc = np.zeros((32, 4), np.int32 if form.acc == "s32" else np.float32)
        for lane in range(32):
            for j in range(4):
                rc[lane, j] = C[fr.c_coord(form, lane, j)]
    if form.kind == "tf32":
        ra, rb = ra.view(np.float32), rb.view(np.float32)
    return A, B, C, ra, rb, rc


def _mma_kernel(form, target):
    shape, kind = form.shape, form.kind
    na, nb, nc = form.a_regs, form.b_regs, form.c_regs
    # One kernel per register count: the tuples are written out, as a kernel would.
    src = f"""
def kernel(ra, rb, rc, rd):
    lane = cuda.laneid
    a = ({", ".join(f"ra[lane, {i}]" for i in range(na))},)
    b = ({", ".join(f"rb[lane, {i}]" for i in range(nb))},)
    c = ({", ".join(f"rc[lane, {i}]" for i in range(nc))},)
    d = cuda.mma("{shape}", "{kind}", a, b, c)
{"".join(f"    rd[lane, {i}] = d[{i}]{chr(10)}" for i in range(nc))}
"""
    scope = {"cuda": cuda}
    exec(compile(src, f"<mma {shape} {kind}>", "exec"), scope)
    return cuda.jit(target=target)(scope["kernel"])


def _run(kernel, target, *arrays):
    if target == "cpu":
        kernel[1, 32](*arrays)
        return arrays[-1]
    dev = [cuda.to_device(a) for a in arrays]
    kernel[1, 32](*dev)
    return dev[-1].copy_to_host()


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "form", list(fr.FORMS.values()), ids=lambda f: f"{f.shape}-{f.kind}-{f.acc}"
)
def test_mma_computes_a_times_b_plus_c(form, target):
    rng = np.random.default_rng(7)
    A, B, C, ra, rb, rc = _inputs(form, rng)
    rd = np.full_like(rc, 0x7FC00000 if rc.dtype == np.uint32 else -1)
    if rd.dtype == np.float32:
        rd[:] = np.nan
    rd = _run(_mma_kernel(form, target), target, ra, rb, rc, rd)
    got = np.zeros((form.m, form.n), np.float64)
    for lane in range(32):
        for j in range(4):
            if form.acc == "f16":
                h = (rd[lane, j // 2] >> np.uint32(16 * (j % 2))) & np.uint32(0xFFFF)
                value = np.uint16(h).view(np.float16)
            else:
                value = rd[lane, j]
            got[fr.c_coord(form, lane, j)] = value
    ref = A.astype(np.float64) @ B.astype(np.float64) + C.astype(np.float64)
    if form.acc == "s32":
        assert np.array_equal(got, ref)
    else:
        tol = 2e-3 if form.acc == "f16" else 1e-6
        assert np.linalg.norm(got - ref) / np.linalg.norm(ref) < tol


# -- ldmatrix, stmatrix, cp_async -------------------------------------------------------------


def _ldmatrix_expected(mem, rows0, col0, num, trans):
    """Lane l's registers: matrix i's rows are mem[rows0 + 8 i + r, col0:col0 + 8]."""
    out = np.zeros((32, num), np.uint32)
    for lane in range(32):
        for i in range(num):
            halves = []
            for h in (0, 1):
                r, c = fr.ldmatrix_coord(lane, h)
                if trans:
                    r, c = c, r
                halves.append(int(mem[rows0 + 8 * i + r, col0 + c]))
            out[lane, i] = halves[0] | (halves[1] << 16)
    return out


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("num", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix_and_stmatrix_from_a_view(num, trans, target):
    """ldmatrix from a 2-D shared array at an offset row and column (a view's element),
    and stmatrix of the registers back into another: the same 16-bit values return."""

    @cuda.jit(target=target)
    def kernel(src, regs, back):
        lane = cuda.laneid
        tile = cuda.shared.array((40, 24), uint16)
        out = cuda.shared.array((40, 24), uint16)
        for i in range(lane, 40 * 24, 32):
            tile[i // 24, i % 24] = src[i // 24, i % 24]
            out[i // 24, i % 24] = 0
        cuda.syncwarp()
        view = tile[4:, 8:]  # rows from 4, columns from 8: 16-byte aligned rows
        r = cuda.ldmatrix(view, (lane, 0), num, trans)
        for i in range(num):
            regs[lane, i] = r[i]
        cuda.stmatrix(out[4:, 8:], (lane, 0), r, trans)
        cuda.syncwarp()
        for i in range(lane, 40 * 24, 32):
            back[i // 24, i % 24] = out[i // 24, i % 24]

    rng = np.random.default_rng(num + 2 * trans)
    src = rng.integers(1, 2**16, (40, 24)).astype(np.uint16)
    regs = np.zeros((32, num), np.uint32)
    back = np.zeros((40, 24), np.uint16)
    if target == "cpu":
        kernel[1, 32](src, regs, back)
    else:
        d = [cuda.to_device(x) for x in (src, regs, back)]
        kernel[1, 32](*d)
        regs, back = d[1].copy_to_host(), d[2].copy_to_host()
    assert np.array_equal(regs, _ldmatrix_expected(src, 4, 8, num, trans))
    moved = np.zeros_like(src)
    moved[4 : 4 + 8 * num, 8:16] = src[4 : 4 + 8 * num, 8:16]
    assert np.array_equal(back, moved)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("size, cache", [(4, "ca"), (8, "ca"), (16, "ca"), (16, "cg")])
def test_cp_async_copies_then_waits(size, cache, target):
    per = size // 4  # float32 elements per copy

    @cuda.jit(target=target)
    def kernel(src, dst):
        t = cuda.threadIdx.x
        s = cuda.shared.array(256, float32)
        cuda.cp_async(s, t * per, src, 8 + t * per, size, cache)
        cuda.cp_async_commit_group()
        cuda.cp_async_wait_group(0)
        cuda.syncthreads()
        for i in range(per):
            dst[t * per + i] = s[t * per + i] * 2.0

    src = np.random.default_rng(size).standard_normal(8 + 64 * per).astype(np.float32)
    dst = np.full(64 * per, np.nan, np.float32)
    if target == "cpu":
        kernel[1, 64](src, dst)
    else:
        d = [cuda.to_device(x) for x in (src, dst)]
        kernel[1, 64](*d)
        dst = d[1].copy_to_host()
    assert np.array_equal(dst, src[8:] * 2)


# -- packing --------------------------------------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
def test_packing_helpers(target):
    import ml_dtypes

    @cuda.jit(target=target)
    def kernel(x, packed, unpacked, tf):
        i = cuda.grid(1)
        if i < x.size // 2:
            p = cuda.pack_bf16x2(x[2 * i], x[2 * i + 1])
            q = cuda.pack_f16x2(x[2 * i], x[2 * i + 1])
            packed[i, 0] = p
            packed[i, 1] = q
            lo, hi = cuda.unpack_bf16x2(p)
            unpacked[i, 0] = lo
            unpacked[i, 1] = hi
            lo, hi = cuda.unpack_f16x2(q)
            unpacked[i, 2] = lo
            unpacked[i, 3] = hi
            tf[i] = cuda.to_tf32(x[2 * i])

    rng = np.random.default_rng(3)
    x = (rng.standard_normal(512) * 10).astype(np.float32)
    x[:4] = [1.0 + 2.0**-8, 1.0 + 3 * 2.0**-8, -(1.0 + 2.0**-11), 1.0 + 2.0**-11]  # ties
    packed = np.zeros((256, 2), np.uint32)
    unpacked = np.zeros((256, 4), np.float32)
    tf = np.zeros(256, np.float32)
    args = (x, packed, unpacked, tf)
    if target == "cpu":
        kernel[2, 128](*args)
    else:
        d = [cuda.to_device(a) for a in args]
        kernel[2, 128](*d)
        packed, unpacked, tf = (a.copy_to_host() for a in d[1:])
    bf = x.astype(ml_dtypes.bfloat16).view(np.uint16).astype(np.uint32)
    hf = x.astype(np.float16).view(np.uint16).astype(np.uint32)
    assert np.array_equal(packed[:, 0], bf[0::2] | (bf[1::2] << 16))
    assert np.array_equal(packed[:, 1], hf[0::2] | (hf[1::2] << 16))
    assert np.array_equal(unpacked[:, 0], x[0::2].astype(ml_dtypes.bfloat16).astype(np.float32))
    assert np.array_equal(unpacked[:, 3], x[1::2].astype(np.float16).astype(np.float32))
    # tf32: 10 fraction bits, to nearest with ties away from zero
    bits = x[0::2].view(np.uint32).astype(np.uint64)
    want = (((bits + 0x1000) & 0xFFFFE000).astype(np.uint32)).view(np.float32)
    assert np.array_equal(tf, want)


# -- the GEMM example -----------------------------------------------------------------------------


@pytest.mark.parametrize("example", ["gemm_mma", "gemm_wmma"])
@pytest.mark.parametrize("target", TARGETS)
def test_gemm_example_matches_numpy(target, example):
    env = {"CUJIT_TARGET": "cpu"} if target == "cpu" else {}
    run = subprocess.run(
        [sys.executable, str(ROOT / "examples" / f"{example}.py"), "--size", "256"],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith(f"ok {example} 256^3"), run.stdout


def test_gemm_example_compiles_to_registers_for_sm80_and_sm90():
    """The whole kernel assembles (nvJitLink's ptxas) with its fragments in registers."""
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import gemm_mma
    finally:
        sys.path.pop(0)
    from cujit.report.resources import link_resources

    for cc in ((8, 0), (9, 0)):
        ptx, _ = cuda.compile_ptx(gemm_mma.gemm_bf16, gemm_mma.SIGNATURE, cc=cc)
        assert ptx.count("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32") == 64
        assert ptx.count("ldmatrix.sync.aligned.m8n8.x4") == 16
        res = link_resources(ptx, cc, "gemm_bf16")
        assert res.local == 0 and res.spill_stores == 0, res.log


# -- PTX for every operation, and the errors ----------------------------------------------------


@pytest.mark.parametrize(
    "form", list(fr.FORMS.values()), ids=lambda f: f"{f.shape}-{f.kind}-{f.acc}"
)
def test_every_form_assembles_for_sm80_and_sm90(form):
    kernel = _mma_kernel(form, "cuda")
    item = {"f32": float32, "f16": uint32, "s32": int32}[form.acc]
    ab = float32 if form.kind == "tf32" else uint32
    sig = (Array(ab, 2, "C"), Array(ab, 2, "C"), Array(item, 2, "C"), Array(item, 2, "C"))
    for arch in ((8, 0), (9, 0)):
        result = compile_kernel(kernel.py_func, sig, Options(arch=arch))
        assert form.ptx in result.ptx and result.cubin


def test_an_unknown_form_names_the_valid_ones():
    @cuda.jit
    def bad(ra, rd):
        a = (ra[0], ra[1], ra[2], ra[3])
        d = cuda.mma("m16n8k16", "tf32", a, (ra[0], ra[1]), (0.0, 0.0, 0.0, 0.0))
        rd[0] = d[0]

    with pytest.raises(TypingError) as e:
        cuda.compile_ptx(bad, "void(uint32[:], float32[:])", cc=(9, 0))
    text = str(e.value)
    assert "cuda.mma has no form m16n8k16 tf32" in text
    assert "m16n8k8 tf32 -> f32" in text and "m16n8k16 bf16 -> f32" in text
    assert "test_tensor_cores.py" in text and "cujit/" not in text.split("\n")[0]


def test_a_fragment_of_the_wrong_length_is_a_typing_error():
    @cuda.jit
    def bad(ra, rd):
        d = cuda.mma("m16n8k16", "bf16", (ra[0], ra[1]), (ra[0], ra[1]), (0.0, 0.0, 0.0, 0.0))
        rd[0] = d[0]

    with pytest.raises(TypingError, match="cuda.mma's a must be a tuple of 4 uint32"):
        cuda.compile_ptx(bad, "void(uint32[:], float32[:])", cc=(9, 0))


def _uses_mma(ra, rd):
    d = cuda.mma("m16n8k16", "bf16", (ra[0], ra[1], ra[2], ra[3]), (ra[0], ra[1]), (0.0,) * 4)
    rd[0] = d[0]


def _uses_ldmatrix(ra, rd):
    s = cuda.shared.array((16, 8), uint16)
    r = cuda.ldmatrix(s, (cuda.laneid % 16, 0), 2)
    rd[0] = r[0]


def _uses_stmatrix(ra, rd):
    s = cuda.shared.array((16, 8), uint16)
    cuda.stmatrix(s, (cuda.laneid % 16, 0), (ra[0],))
    rd[0] = s[0, 0]


@pytest.mark.parametrize(
    "fn, arch, name, need",
    [
        (_uses_mma, (7, 5), "cuda.mma", "sm_80"),
        (_uses_stmatrix, (8, 0), "cuda.stmatrix", "sm_90"),
        (_uses_ldmatrix, (7, 0), "cuda.ldmatrix", "sm_75"),
    ],
)
def test_an_architecture_without_the_operation_is_refused_at_its_line(fn, arch, name, need):
    with pytest.raises(UnsupportedError) as e:
        cuda.compile_ptx(cuda.jit(fn), "void(uint32[:], float32[:])", cc=arch)
    text = str(e.value)
    assert f"{name} needs {need} or later" in text, text
    assert f"sm_{arch[0]}{arch[1]}" in text and "test_tensor_cores.py" in text
    cuda.compile_ptx(cuda.jit(fn), "void(uint32[:], float32[:])", cc=(9, 0))  # there: fine
