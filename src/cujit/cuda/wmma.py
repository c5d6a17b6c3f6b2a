"""``cuda.wmma``: 16 x 16 x 16 tiles on tensor cores, in the spirit of CUDA C++'s WMMA.

For kernels that would rather think in tiles than in registers: a *fragment* is a
tuple, the warp's share of one 16 x 16 tile, and the functions below are ordinary
device functions written with ``cuda.ldmatrix`` and ``cuda.mma`` (bfloat16 or float16
inputs as 16-bit bits, float32 accumulators)::

    a = wmma.load_matrix_a(sa, row, k)     # A[row:row+16, k:k+16], row-major, shared memory
    b = wmma.load_matrix_b(sb, k, col)     # B[k:k+16, col:col+16], row-major (n contiguous)
    c = wmma.fill_fragment(0.0)
    c = wmma.mma_sync(a, b, c)             # c += a @ b, bf16 ("mma_sync_f16": float16)
    wmma.store_matrix_sync(out, row, col, c)   # any 2-D float32 array

Every lane of the warp must make each call (they are warp-wide, as WMMA's are).  The
fragments' layouts are PTX's: A is one x4 ``ldmatrix`` (4 registers), B one transposed
x4 ``ldmatrix`` (two 16 x 8 halves of 2 registers), C eight float32 (two 16 x 8 halves of
4), so a tile product is two ``mma`` m16n8k16.
"""

from __future__ import annotations

from cujit import device_api as cuda
from cujit.dispatcher import jit
from cujit.types import float32


@jit(device=True)
def fill_fragment(value):
    """An accumulator fragment of a 16 x 16 float32 tile, every element ``value``."""
    v = float32(value)
    return (v, v, v, v, v, v, v, v)


@jit(device=True)
def load_matrix_a(array, row, col):
    """The A fragment of ``array[row:row+16, col:col+16]`` (16-bit elements, shared
    memory, rows 16-byte aligned): 4 uint32."""
    lane = cuda.laneid
    return cuda.ldmatrix(array, (row + (lane & 15), col + 8 * (lane >> 4)), 4, False)


@jit(device=True)
def load_matrix_b(array, row, col):
    """The B fragment of ``array[row:row+16, col:col+16]``, stored with k as the row
    (k-major, n contiguous): 4 uint32, two 16 x 8 halves."""
    lane = cuda.laneid
    return cuda.ldmatrix(array, (row + (lane & 15), col + 8 * (lane >> 4)), 4, True)


@jit(device=True)
def mma_sync(a, b, c):
    """``c + a @ b`` for bfloat16 A and B fragments and a float32 accumulator fragment."""
    lo = cuda.mma("m16n8k16", "bf16", a, (b[0], b[1]), (c[0], c[1], c[2], c[3]))
    hi = cuda.mma("m16n8k16", "bf16", a, (b[2], b[3]), (c[4], c[5], c[6], c[7]))
    return (lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3])


@jit(device=True)
def mma_sync_f16(a, b, c):
    """As ``mma_sync``, for float16 A and B fragments."""
    lo = cuda.mma("m16n8k16", "f16", a, (b[0], b[1]), (c[0], c[1], c[2], c[3]))
    hi = cuda.mma("m16n8k16", "f16", a, (b[2], b[3]), (c[4], c[5], c[6], c[7]))
    return (lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3])


@jit(device=True)
def store_matrix_sync(array, row, col, c):
    """Store accumulator fragment ``c`` at ``array[row:row+16, col:col+16]``: lane ``l``
    holds rows ``l // 4`` and ``l // 4 + 8``, columns ``2 (l % 4)`` and the next, of each
    16 x 8 half."""
    lane = cuda.laneid
    r = row + (lane >> 2)
    k = col + 2 * (lane & 3)
    array[r, k] = c[0]
    array[r, k + 1] = c[1]
    array[r + 8, k] = c[2]
    array[r + 8, k + 1] = c[3]
    array[r, k + 8] = c[4]
    array[r, k + 9] = c[5]
    array[r + 8, k + 8] = c[6]
    array[r + 8, k + 9] = c[7]


__all__ = [
    "fill_fragment",
    "load_matrix_a",
    "load_matrix_b",
    "mma_sync",
    "mma_sync_f16",
    "store_matrix_sync",
]
