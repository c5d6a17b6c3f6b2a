"""Special-register reads carry the range of values they can hold (``!range``), so
the optimiser knows indices built from them are never negative: the negative-index
wrap and sign extensions fold away, as for CUDA C's unsigned built-ins."""

from __future__ import annotations

import re

from cujit import cuda
from cujit.options import Options
from cujit.pipeline import compile_kernel
from cujit.targets.cuda.intrinsics import SREG_RANGES
from cujit.types import float32, int32


def every_register(out):
    out[0] = (
        cuda.threadIdx.x
        + cuda.threadIdx.y
        + cuda.threadIdx.z
        + cuda.blockIdx.x
        + cuda.blockIdx.y
        + cuda.blockIdx.z
        + cuda.blockDim.x
        + cuda.blockDim.y
        + cuda.blockDim.z
        + cuda.gridDim.x
        + cuda.gridDim.y
        + cuda.gridDim.z
        + cuda.laneid
    )


def test_the_ranges_are_cudas_launch_limits():
    # [lo, hi): at most 1024 threads a block (64 along z), 2**31 - 1 blocks along x,
    # 65535 along y and z; a lane is 0-31.
    assert SREG_RANGES["tid.x"] == (0, 1024) and SREG_RANGES["tid.z"] == (0, 64)
    assert SREG_RANGES["ntid.x"] == (1, 1025) and SREG_RANGES["ntid.z"] == (1, 65)
    assert SREG_RANGES["ctaid.x"] == (0, 2**31 - 1) and SREG_RANGES["ctaid.y"] == (0, 65535)
    assert SREG_RANGES["nctaid.x"] == (1, 2**31) and SREG_RANGES["nctaid.z"] == (1, 65536)
    assert SREG_RANGES["laneid"] == (0, 32) and "warpsize" not in SREG_RANGES


def test_each_register_read_has_its_range():
    llvm = compile_kernel(
        every_register, (int32[::1],), Options(arch=(9, 0)), stop_after="llvm"
    ).outputs["llvm"]
    pairs = re.findall(r"^(!\d+) = !\{ i32 (-?\d+), i32 (-?\d+) \}$", llvm, re.M)
    meta = {ref: (int(lo), int(hi)) for ref, lo, hi in pairs}
    reads = re.findall(r'@"llvm\.nvvm\.read\.ptx\.sreg\.([a-z.]+)"\(\), !range (!\d+)', llvm)
    assert {reg for reg, _ in reads} == set(SREG_RANGES)
    for reg, ref in reads:
        lo, hi = SREG_RANGES[reg]
        assert meta[ref] == (lo, hi - 2**32 if hi >= 2**31 else hi), reg


def transpose(a, b):
    tile = cuda.shared.array((32, 33), float32)
    x = cuda.blockIdx.x * 32 + cuda.threadIdx.x
    y = cuda.blockIdx.y * 32 + cuda.threadIdx.y
    for j in range(0, 32, 8):
        tile[cuda.threadIdx.y + j, cuda.threadIdx.x] = a[y + j, x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * 32 + cuda.threadIdx.x
    y = cuda.blockIdx.x * 32 + cuda.threadIdx.y
    for j in range(0, 32, 8):
        b[y + j, x] = tile[cuda.threadIdx.x, cuda.threadIdx.y + j]


def test_indices_from_registers_need_no_negative_wrap():
    result = compile_kernel(transpose, (float32[:, ::1], float32[:, ::1]), Options(arch=(9, 0)))
    body = result.ptx[result.ptx.index("{") :]
    assert "selp" not in body  # no `i < 0 ? i + n : i` left for any index
    # Hence neither array's first extent is read: a C array needs only its row length.
    assert result.kept == (True, False, True, True, False, True)
