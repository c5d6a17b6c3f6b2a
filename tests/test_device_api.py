"""The device API (synchronisation, atomics, warp-level and bit intrinsics) without a GPU:
every kernel of kernels_device.py compiles to a cubin, its PTX has the instructions the
feature must reach, typing follows numba's signatures, and misuse is a clear error."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from kernels_device import DEVICE_CASES

from cujit import cuda, device_api, ir
from cujit.diagnostics import TypingError
from cujit.options import Options
from cujit.pipeline import STAGES, compile_kernel
from cujit.targets.cuda import CUDA_TARGET
from cujit.types import (
    Tuple,
    boolean,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    typeof,
    uint8,
    uint32,
    uint64,
)

ELF_MAGIC = b"\x7fELF"


def arg_types_of(case):
    args, *_ = case.setup(np.random.default_rng(0))
    return tuple(typeof(a) for a in args)


@pytest.mark.parametrize("case", DEVICE_CASES, ids=[c.name for c in DEVICE_CASES])
@pytest.mark.parametrize("arch", [(9, 0), (8, 0)], ids=["sm_90", "sm_80"])
def test_compiles_to_cubin(case, arch):
    result = compile_kernel(
        case.kernel.py_func, arg_types_of(case), Options(arch=arch, verify=True)
    )
    assert list(result.outputs)[: len(STAGES)] == list(STAGES)
    assert f".target sm_{arch[0]}{arch[1]}" in result.ptx
    assert result.cubin[:4] == ELF_MAGIC


FEATURES = {
    # kernel case -> PTX text that must appear (the feature reached the machine code)
    "warp_shuffle_reduce": ["shfl.sync.down.b32", "shfl.sync.bfly.b32"],
    "shuffle_modes": [
        "shfl.sync.idx.b32",
        "shfl.sync.up.b32",
        "shfl.sync.down.b32",
        "shfl.sync.bfly.b32",
    ],
    "vote_match": [
        "vote.sync.ballot.b32",
        "vote.sync.all.pred",
        "vote.sync.any.pred",
        "vote.sync.uni.pred",
        "match.any.sync.b64",
        "match.any.sync.b32",
        "match.all.sync.b64",
    ],
    "lane_registers": [
        "%laneid",
        "activemask.b32",
        "%lanemask_lt",
        "bar.warp.sync",
        "membar.cta",
        "membar.sys",
    ],
    "block_predicates": ["bar.red.popc.u32", "bar.red.and.pred", "bar.red.or.pred"],
    "last_block_sum": ["membar.gl", "atom.global.inc.u32", "bar.red.or.pred"],
    "histogram_privatised": [
        "atom.shared.add.u32",
        "atom.shared.max.s64",
        "atom.shared.min.s64",
        "atom.shared.or.b64",
        "atom.shared.xor.b64",
        "atom.shared.and.b64",
        "atom.global.max.s64",
        "atom.global.and.b64",
    ],
    "atomic_minmax_each_uint32": ["atom.global.max.u32", "atom.global.min.u32"],
    "atomic_minmax_each_int64": ["atom.global.max.s64", "atom.global.min.s64"],
    "atomic_minmax_each_float32": ["atom.global.cas.b32"],
    "atomic_minmax_each_float64": ["atom.global.cas.b64"],
    "atomic_int_rmw_int32": [
        "atom.global.exch.b32",
        "atom.global.and.b32",
        "atom.global.or.b32",
        "atom.global.xor.b32",
    ],
    "atomic_float_add_sub_float32": ["atom.global.add.f32"],
    "atomic_float_add_sub_float64": ["atom.global.add.f64"],
    "atomic_inc_dec_uint32": ["atom.global.inc.u32", "atom.global.dec.u32"],
    "atomic_inc_dec_uint64": ["atom.global.cas.b64"],
    "atomic_cas_each_int32": ["atom.global.cas.b32"],
    "atomic_cas_each_uint64": ["atom.global.cas.b64"],
    "bit_ops_int32": ["popc.b32", "clz.b32"],
    "bit_ops_uint64": ["popc.b64", "clz.b64"],
    "brev_ops": ["brev.b32", "brev.b64"],
    "fma_cbrt_float32": ["fma.rn.f32"],
    "fma_cbrt_float64": ["fma.rn.f64"],
}


@pytest.mark.parametrize("name", sorted(FEATURES))
def test_ptx_features(name):
    case = next(c for c in DEVICE_CASES if c.name == name)
    ptx = compile_kernel(case.kernel.py_func, arg_types_of(case), stop_after="ptx").ptx
    for needle in FEATURES[name]:
        assert needle in ptx, f"{needle!r} missing from the PTX of {name}"


def test_every_new_intrinsic_has_a_cuda_lowering():
    names = {
        "cuda.syncthreads_count",
        "cuda.syncthreads_and",
        "cuda.syncthreads_or",
        "cuda.syncwarp",
        "cuda.threadfence",
        "cuda.threadfence_block",
        "cuda.threadfence_system",
        "cuda.shfl_sync",
        "cuda.shfl_up_sync",
        "cuda.shfl_down_sync",
        "cuda.shfl_xor_sync",
        "cuda.all_sync",
        "cuda.any_sync",
        "cuda.eq_sync",
        "cuda.ballot_sync",
        "cuda.match_any_sync",
        "cuda.match_all_sync",
        "cuda.activemask",
        "cuda.lanemask_lt",
        "cuda.popc",
        "cuda.brev",
        "cuda.clz",
        "cuda.ffs",
        "cuda.fma",
        "cuda.cbrt",
        "atomic.cas",
    }
    names |= {
        f"atomic.{op}"
        for op in (
            "add",
            "sub",
            "max",
            "min",
            "nanmax",
            "nanmin",
            "and",
            "or",
            "xor",
            "exch",
            "inc",
            "dec",
        )
    }
    assert names <= set(CUDA_TARGET.intrinsics)


# -- typing: numba's signatures ---------------------------------------------------------------


def typed(pyfunc, *arg_types):
    return compile_kernel(pyfunc, arg_types, Options(verify=True), stop_after="typed").outputs[
        "typed"
    ]


def intrinsics(fn, name):
    return [
        op for b in fn.blocks for op in b.ops if isinstance(op, ir.Intrinsic) and op.name == name
    ]


def result_type(call, arg_type, name):
    """The result type of ``cuda.<call>`` applied to a value of ``arg_type``."""

    def kernel(x, out):
        out[0] = call(x[0])

    (op,) = intrinsics(
        typed(kernel, typeof(np.zeros(1, arg_type.dtype)), typeof(np.zeros(1))), name
    )
    return op.result.type


@pytest.mark.parametrize("t", [int8, int16, int32, int64, uint8, uint32, uint64])
def test_bit_intrinsic_types(t):
    assert result_type(cuda.popc, t, "cuda.popc") == t
    assert result_type(cuda.clz, t, "cuda.clz") == t
    assert result_type(cuda.ffs, t, "cuda.ffs") == uint32
    assert result_type(cuda.brev, t, "cuda.brev") == (uint64 if t.bits == 64 else uint32)


def test_float_intrinsic_types():
    assert result_type(cuda.cbrt, float32, "cuda.cbrt") == float32
    assert result_type(cuda.cbrt, float64, "cuda.cbrt") == float64
    assert result_type(cuda.cbrt, int32, "cuda.cbrt") == float64

    def mixed(a, out):
        out[0] = cuda.fma(a[0], a[0], float32(1))
        out[1] = cuda.fma(a[0], a[0], 1.0)

    fn = typed(mixed, typeof(np.zeros(1, np.float32)), typeof(np.zeros(2)))
    assert [op.result.type for op in intrinsics(fn, "cuda.fma")] == [float32, float64]


def test_warp_and_barrier_types():
    def kernel(x, f, out):
        m, ok = cuda.match_all_sync(0xFFFFFFFF, x[0])
        out[0] = cuda.ballot_sync(0xFFFFFFFF, x[0]) + cuda.all_sync(0xFFFFFFFF, x[0] > 0)
        out[1] = cuda.match_any_sync(0xFFFFFFFF, f[0]) + m + ok
        out[2] = cuda.activemask() + cuda.lanemask_lt() + cuda.laneid + cuda.warpsize
        out[3] = cuda.syncthreads_count(x[0]) + cuda.shfl_sync(0xFFFFFFFF, f[0], 0)

    fn = typed(
        kernel, typeof(np.zeros(1, np.int64)), typeof(np.zeros(1, np.float32)), typeof(np.zeros(4))
    )
    kinds = {
        op.name: op.result.type for b in fn.blocks for op in b.ops if isinstance(op, ir.Intrinsic)
    }
    assert kinds["cuda.match_all_sync"] == Tuple((int32, boolean))
    assert kinds["cuda.ballot_sync"] == int32 and kinds["cuda.all_sync"] == boolean
    assert kinds["cuda.match_any_sync"] == int32
    assert kinds["cuda.activemask"] == uint32 and kinds["cuda.lanemask_lt"] == uint32
    assert kinds["cuda.syncthreads_count"] == int32 and kinds["cuda.shfl_sync"] == float32
    assert {op.attr("reg") for op in intrinsics(fn, "cuda.sreg")} == {"laneid", "warpsize"}


def test_atomic_results_are_the_dtype_and_values_are_converted():
    def kernel(a, out):
        out[0] = cuda.atomic.max(a, (0, -1), 1)
        out[1] = cuda.atomic.cas(a, (1, 2), 3, 4.0)

    fn = typed(kernel, typeof(np.zeros((2, 3), np.uint64)), typeof(np.zeros(2)))
    (mx,) = intrinsics(fn, "atomic.max")
    (cas,) = intrinsics(fn, "atomic.cas")
    assert mx.result.type == uint64 and mx.args[2].type == uint64
    assert mx.args[1].type == Tuple((int64, int64))
    assert cas.result.type == uint64 and [a.type for a in cas.args[2:]] == [uint64, uint64]


@pytest.mark.parametrize(
    "func, dtype, message",
    [
        (lambda a: cuda.atomic.inc(a, 0, 1), np.int32, "does not support arrays of int32"),
        (lambda a: cuda.atomic.xor(a, 0, 1), np.float32, "does not support arrays of float32"),
        (lambda a: cuda.atomic.exch(a, 0, 1), np.float64, "does not support arrays of float64"),
        (lambda a: cuda.atomic.cas(a, 0, 1, 2), np.float32, "does not support arrays of float32"),
        (lambda a: cuda.atomic.max(a, 0, 1), np.int16, "does not support arrays of int16"),
        (lambda a: cuda.atomic.add(a, 0, 1), np.int8, "does not support arrays of int8"),
        (lambda a: cuda.atomic.min(a, (0, 1), 1), np.int32, "indexed with 2 indices"),
        (lambda a: cuda.shfl_sync(0xFFFFFFFF, a[0], 0), np.int16, "32- and 64-bit"),
        (lambda a: cuda.popc(a[0]), np.float32, "needs an integer"),
        (lambda a: cuda.syncthreads_count(a[0]), np.float64, "integer or a bool"),
        (lambda a: cuda.ballot_sync(1.5, a[0]), np.int32, "must be an integer"),
    ],
)
def test_misuse_is_a_typing_error(func, dtype, message):
    with pytest.raises(TypingError, match=message):
        typed(func, typeof(np.zeros(2, dtype)))  # the lambda is the kernel


def test_compare_and_swap_needs_a_1d_array():
    def kernel(a):
        cuda.atomic.compare_and_swap(a, 0, 1)

    with pytest.raises(TypingError, match="1-d array"):
        typed(kernel, typeof(np.zeros((2, 2), np.int32)))


def test_effects_survive_when_their_results_are_unused():
    def kernel(a, u):
        cuda.atomic.max(a, 0, 1)
        cuda.atomic.cas(a, 1, 0, 1)
        cuda.atomic.dec(u, 0, 5)
        cuda.syncthreads_and(1)
        cuda.syncwarp()
        cuda.threadfence()

    ptx = compile_kernel(
        kernel, (typeof(np.zeros(2, np.int32)), typeof(np.zeros(1, np.uint32))), stop_after="ptx"
    ).ptx
    for needle in (
        "atom.global.max.s32",
        "atom.global.cas.b32",
        "atom.global.dec.u32",
        "bar.red.and.pred",
        "bar.warp.sync",
        "membar.gl",
    ):
        assert needle in ptx, needle


def test_placeholders_raise_on_the_host_and_pickle_by_name():
    for obj in (cuda.shfl_sync, cuda.atomic.nanmax, cuda.atomic.and_, cuda.popc, cuda.laneid):
        assert pickle.loads(pickle.dumps(obj)) is obj
    with pytest.raises(RuntimeError, match="inside a @cuda.jit kernel"):
        cuda.atomic.compare_and_swap(np.zeros(1), 0, 1)
    assert device_api.atomic.and_.__name__ == "and_"
