"""Element addresses of contiguous arrays (``codegen/addressing.py``): each index's
constant part is multiplied out, so the neighbours of a stencil share one address and
differ by a constant.  Checked on the PTX (no multiply per neighbour) and by results
against NumPy on the CPU target, for C and F layouts, offsets on every axis, offsets
written in several ways, and negative indices that wrap."""

from __future__ import annotations

import re

import numpy as np
import pytest

from cujit import cuda, float32
from cujit.options import Options
from cujit.pipeline import compile_kernel


def stencil7(u, out):
    x, y, z = cuda.grid(3)
    nz, ny, nx = u.shape
    if 0 < x < nx - 1 and 0 < y < ny - 1 and 0 < z < nz - 1:
        out[z, y, x] = u[z, y, x] * 0.4 + 0.1 * (
            u[z, y, x - 1]
            + u[z, y, x + 1]
            + u[z, y - 1, x]
            + u[z, y + 1, x]
            + u[z - 1, y, x]
            + u[z + 1, y, x]
        )


def stencil7_ref(u):
    out = np.full_like(u, np.nan)
    c = (slice(1, -1),) * 3
    near = (
        u[1:-1, 1:-1, :-2]
        + u[1:-1, 1:-1, 2:]
        + u[1:-1, :-2, 1:-1]
        + u[1:-1, 2:, 1:-1]
        + u[:-2, 1:-1, 1:-1]
        + u[2:, 1:-1, 1:-1]
    )
    out[c] = u[c] * 0.4 + 0.1 * near
    return out


def spelled(a, out):  # the same offsets written in other ways
    i, j = cuda.grid(2)
    n0, n1 = a.shape
    if 1 <= i < n0 - 2 and 2 <= j < n1 - 1:
        out[i, j] = a[1 + i, j] - a[(i + 2) - 1, j - 2] + 3.0 * a[i - 1, (j + 3) - 2]


def spelled_ref(a):
    out = np.full_like(a, np.nan)
    n0, n1 = a.shape
    for i in range(1, n0 - 2):
        for j in range(2, n1 - 1):
            out[i, j] = a[i + 1, j] - a[i + 1, j - 2] + 3.0 * a[i - 1, j + 1]
    return out


def wraps(a, out):  # negative indices count from the end, on every axis
    i, j = cuda.grid(2)
    n0, n1 = a.shape
    if i < n0 and j < n1:
        out[i, j] = a[i - 1, j - 2] + a[i - n0, j]


def wraps_ref(a):
    n0, n1 = a.shape
    out = np.empty_like(a)
    for i in range(n0):
        for j in range(n1):
            out[i, j] = a[i - 1, j - 2] + a[i - n0, j]
    return out


def launch(fn, shape, block, *arrays):
    k = cuda.jit(target="cpu")(fn)
    grid = tuple(-(-n // b) for n, b in zip(shape, block, strict=True))
    k[grid, block](*arrays)


def test_stencil7_matches_numpy_on_the_cpu():
    rng = np.random.default_rng(7)
    u = rng.standard_normal((6, 7, 9))
    out = np.full_like(u, np.nan)
    launch(stencil7, (9, 7, 6), (4, 4, 2), u, out)
    want = stencil7_ref(u)
    inner = (slice(1, -1),) * 3
    np.testing.assert_allclose(out[inner], want[inner], rtol=1e-13)
    assert np.isnan(out[0]).all() and np.isnan(out[:, :, -1]).all()  # the rim untouched


@pytest.mark.parametrize("order", ["C", "F"])
def test_offsets_written_in_other_ways_match_numpy(order):
    rng = np.random.default_rng(11)
    a = np.asarray(rng.standard_normal((9, 13)), order=order)
    out = np.full_like(a, np.nan, order=order)
    launch(spelled, (9, 13), (4, 8), a, out)
    want = spelled_ref(a)
    np.testing.assert_allclose(out, want, rtol=1e-13, equal_nan=True)
    assert np.isfinite(out[1:-2, 2:-1]).all()


@pytest.mark.parametrize("order", ["C", "F"])
def test_negative_indices_still_wrap(order):
    a = np.asarray(np.random.default_rng(3).standard_normal((5, 6)), order=order)
    out = np.full_like(a, np.nan, order=order)
    launch(wraps, (5, 6), (4, 4), a, out)
    np.testing.assert_allclose(out, wraps_ref(a), rtol=1e-13)


def _ptx(fn, types) -> str:
    return compile_kernel(fn, types, Options()).ptx


def test_stencil7_neighbours_need_no_multiply():
    types = (float32[:, :, ::1], float32[:, :, ::1])
    ptx = _ptx(stencil7, types)
    # The plane stride n1*n2, u's z*(n1*n2) and y*n2, and out's address (two): five
    # 64-bit multiplies in all; the nested form multiplied again for each neighbour (9).
    muls = re.findall(r"\bmul\.(lo\.s64|wide\.[su]32)\b", ptx)
    assert len(muls) <= 6, ptx
    # x - 1 and x + 1 are the centre's address -4 and +4 bytes.
    assert re.search(r"ld\.global\.f32\s+%f\d+, \[%rd\d+\+4\]", ptx)
    assert re.search(r"ld\.global\.f32\s+%f\d+, \[%rd\d+\+-4\]", ptx)
