"""The second half of bench/kernel_bench.py's kernels: each as Python text (exec'd with
``cuda`` bound to cujit's or numba's), its CUDA C twin (one element or row per thread,
as a CUDA programmer writes it) and its inputs and NumPy reference.

Kernels: axpby, GELU and a complex multiply (elementwise, 2^26 / 2^25 elements);
all-pairs n-body (16384 bodies, float32); a CSR sparse matrix-vector product (one
thread per row, 2^20 rows, 16 random columns each); a 3-D 7-point stencil (512^3
float32); a 256-bin histogram of 2^26 bytes with per-block shared-memory bins; a
row-wise softmax, one warp per row with shuffles (2^16 rows of 1024 float32); a 1-D
convolution with 17 taps and zero padding (2^26 float32).

``SIZES`` holds the problem sizes; ``tools`` and tests may shrink them to check the
Python kernels against the references on the CPU target.
"""

from __future__ import annotations

import numpy as np

SIZES = {
    "elementwise": 1 << 26,
    "complex": 1 << 25,
    "nbody": 16384,
    "spmv_rows": 1 << 20,
    "spmv_per_row": 16,
    "stencil": 512,
    "hist": 1 << 26,
    "softmax_rows": 1 << 16,
    "softmax_cols": 1024,
    "conv": 1 << 26,
}
TPB = 256
EPS2 = 1e-3  # n-body softening
KW, KR = 17, 8  # convolution taps and radius
HBINS = 256
C0, C1 = 0.4, 0.1  # stencil weights

CONSTANTS = {"EPS2": EPS2, "KW": KW, "KR": KR, "HBINS": HBINS, "TPB": TPB}


def _poison(shape, dtype):
    return np.full(shape, np.nan, dtype)


def _blocks(n: int, tpb: int = TPB) -> int:
    return (n + tpb - 1) // tpb


AXPBY_PY = """
def axpby(a, x, b, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + b * y[i]
"""
AXPBY_C = r"""
extern "C" __global__ void axpby(float a, const float* x, float b, const float* y,
                                 float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = a * x[i] + b * y[i];
}
"""


def axpby_make(rng, sms):
    n = SIZES["elementwise"]
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    args = [np.float32(1.5), x, np.float32(-0.75), y, _poison(n, np.float32)]
    return args, _blocks(n), TPB, [np.int32(n)]


def axpby_ref(a):
    return {4: np.float64(a[0]) * a[1] + np.float64(a[2]) * a[3]}


GELU_PY = """
def gelu(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        inner = float32(0.7978845608) * (v + float32(0.044715) * v * v * v)
        out[i] = float32(0.5) * v * (float32(1.0) + math.tanh(inner))
"""
GELU_C = r"""
extern "C" __global__ void gelu(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        float inner = 0.7978845608f * (v + 0.044715f * v * v * v);
        out[i] = 0.5f * v * (1.0f + tanhf(inner));
    }
}
"""


def gelu_make(rng, sms):
    n = SIZES["elementwise"]
    x = (rng.standard_normal(n) * 2).astype(np.float32)
    return [x, _poison(n, np.float32)], _blocks(n), TPB, [np.int32(n)]


def gelu_ref(a):
    v = a[0].astype(np.float64)
    return {1: 0.5 * v * (1.0 + np.tanh(0.7978845608 * (v + 0.044715 * v**3)))}


CMUL_PY = """
def complex_mul(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * y[i]
"""
CMUL_C = r"""
extern "C" __global__ void complex_mul(const float2* x, const float2* y, float2* out,
                                       int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float2 a = x[i], b = y[i];
        out[i] = make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
    }
}
"""


def cmul_make(rng, sms):
    n = SIZES["complex"]
    x = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    y = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    out = np.full(n, np.nan + 1j * np.nan, np.complex64)
    return [x, y, out], _blocks(n), TPB, [np.int32(n)]


def cmul_ref(a):
    return {2: a[0].astype(np.complex128) * a[1].astype(np.complex128)}


NBODY_PY = """
def nbody(px, py, pz, m, ax, ay, az):
    i = cuda.grid(1)
    n = px.size
    if i < n:
        xi = px[i]
        yi = py[i]
        zi = pz[i]
        fx = float32(0.0)
        fy = float32(0.0)
        fz = float32(0.0)
        for j in range(n):
            dx = px[j] - xi
            dy = py[j] - yi
            dz = pz[j] - zi
            r2 = dx * dx + dy * dy + dz * dz + float32(EPS2)
            inv = float32(1.0) / math.sqrt(r2)
            s = m[j] * inv * inv * inv
            fx += dx * s
            fy += dy * s
            fz += dz * s
        ax[i] = fx
        ay[i] = fy
        az[i] = fz
"""
NBODY_C = r"""
extern "C" __global__ void nbody(const float* px, const float* py, const float* pz,
                                 const float* m, float* ax, float* ay, float* az, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float xi = px[i], yi = py[i], zi = pz[i];
        float fx = 0.0f, fy = 0.0f, fz = 0.0f;
        for (int j = 0; j < n; j++) {
            float dx = px[j] - xi, dy = py[j] - yi, dz = pz[j] - zi;
            float r2 = dx * dx + dy * dy + dz * dz + 1e-3f;
            float inv = 1.0f / sqrtf(r2);
            float s = m[j] * inv * inv * inv;
            fx += dx * s;
            fy += dy * s;
            fz += dz * s;
        }
        ax[i] = fx;
        ay[i] = fy;
        az[i] = fz;
    }
}
"""


def nbody_make(rng, sms):
    n = SIZES["nbody"]
    pos = [rng.standard_normal(n).astype(np.float32) for _ in range(3)]
    m = rng.uniform(0.5, 1.5, n).astype(np.float32)
    outs = [_poison(n, np.float32) for _ in range(3)]
    return [*pos, m, *outs], _blocks(n), TPB, [np.int32(n)]


def nbody_ref(a):
    px, py, pz, m = (v.astype(np.float64) for v in a[:4])
    n = px.size
    acc = [np.empty(n) for _ in range(3)]
    step = max(1, (1 << 24) // n)
    for s in range(0, n, step):
        d = [p[None, :] - p[s : s + step, None] for p in (px, py, pz)]
        r2 = d[0] ** 2 + d[1] ** 2 + d[2] ** 2 + np.float64(np.float32(EPS2))
        w = m[None, :] / (r2 * np.sqrt(r2))
        for k in range(3):
            acc[k][s : s + step] = (d[k] * w).sum(axis=1)
    return {4: acc[0], 5: acc[1], 6: acc[2]}


SPMV_PY = """
def spmv(rowptr, cols, vals, x, y):
    row = cuda.grid(1)
    if row < y.size:
        acc = float32(0.0)
        for k in range(rowptr[row], rowptr[row + 1]):
            acc += vals[k] * x[cols[k]]
        y[row] = acc
"""
SPMV_C = r"""
extern "C" __global__ void spmv(const int* rowptr, const int* cols, const float* vals,
                                const float* x, float* y, int nrows) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < nrows) {
        float acc = 0.0f;
        for (int k = rowptr[row]; k < rowptr[row + 1]; k++)
            acc += vals[k] * x[cols[k]];
        y[row] = acc;
    }
}
"""


def spmv_make(rng, sms):
    n, per = SIZES["spmv_rows"], SIZES["spmv_per_row"]
    counts = rng.integers(per // 2, per + per // 2 + 1, n)
    rowptr = np.zeros(n + 1, np.int32)
    np.cumsum(counts, out=rowptr[1:])
    nnz = int(rowptr[-1])
    cols = rng.integers(0, n, nnz).astype(np.int32)
    vals = rng.standard_normal(nnz).astype(np.float32)
    x = rng.standard_normal(n).astype(np.float32)
    return [rowptr, cols, vals, x, _poison(n, np.float32)], _blocks(n), TPB, [np.int32(n)]


def spmv_ref(a):
    rowptr, cols, vals, x = a[:4]
    prod = vals.astype(np.float64) * x.astype(np.float64)[cols]
    return {4: np.add.reduceat(prod, rowptr[:-1])}


def spmv_bytes() -> int:
    n, per = SIZES["spmv_rows"], SIZES["spmv_per_row"]
    return n * per * 12 + n * 12  # cols, vals, x gathered; rowptr, y


STENCIL_PY = """
def stencil7(u, out):
    x, y, z = cuda.grid(3)
    nz, ny, nx = u.shape
    if x < nx and y < ny and z < nz:
        if x > 0 and x < nx - 1 and y > 0 and y < ny - 1 and z > 0 and z < nz - 1:
            out[z, y, x] = float32(0.4) * u[z, y, x] + float32(0.1) * (
                u[z, y, x - 1] + u[z, y, x + 1] + u[z, y - 1, x] + u[z, y + 1, x]
                + u[z - 1, y, x] + u[z + 1, y, x]
            )
        else:
            out[z, y, x] = u[z, y, x]
"""
STENCIL_C = r"""
extern "C" __global__ void stencil7(const float* u, float* out, int nz, int ny, int nx) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x < nx && y < ny && z < nz) {
        long i = ((long)z * ny + y) * nx + x;
        if (x > 0 && x < nx - 1 && y > 0 && y < ny - 1 && z > 0 && z < nz - 1)
            out[i] = 0.4f * u[i] + 0.1f * (u[i - 1] + u[i + 1] + u[i - nx] + u[i + nx]
                                           + u[i - (long)nx * ny] + u[i + (long)nx * ny]);
        else
            out[i] = u[i];
    }
}
"""
ST_BLOCK = (32, 8, 1)


def stencil_make(rng, sms):
    n = SIZES["stencil"]
    u = rng.standard_normal((n, n, n), dtype=np.float32)
    grid = (_blocks(n, ST_BLOCK[0]), _blocks(n, ST_BLOCK[1]), n)
    ints = [np.int32(n)] * 3
    return [u, _poison((n, n, n), np.float32)], grid, ST_BLOCK, ints


def stencil_ref(a):
    u = a[0].astype(np.float64)
    out = u.copy()
    c = (slice(1, -1),) * 3
    near = (
        u[1:-1, 1:-1, :-2]
        + u[1:-1, 1:-1, 2:]
        + u[1:-1, :-2, 1:-1]
        + u[1:-1, 2:, 1:-1]
        + u[:-2, 1:-1, 1:-1]
        + u[2:, 1:-1, 1:-1]
    )
    out[c] = np.float32(C0) * u[c] + np.float32(C1) * near
    return {1: out}


HIST_PY = """
def histogram(data, bins):
    local = cuda.shared.array(HBINS, int32)
    t = cuda.threadIdx.x
    for b in range(t, HBINS, cuda.blockDim.x):
        local[b] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    n = data.size
    while i < n:
        cuda.atomic.add(local, data[i], 1)
        i += step
    cuda.syncthreads()
    for b in range(t, HBINS, cuda.blockDim.x):
        cuda.atomic.add(bins, b, local[b])
"""
HIST_C = r"""
extern "C" __global__ void histogram(const unsigned char* data, int* bins, int n) {
    __shared__ int local[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local[data[i]], 1);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        atomicAdd(&bins[b], local[b]);
}
"""


def hist_make(rng, sms):
    n = SIZES["hist"]
    data = rng.integers(0, HBINS, n).astype(np.uint8)
    return [data, np.zeros(HBINS, np.int32)], sms * 8, TPB, [np.int32(n)]


def hist_ref(a):
    return {1: np.bincount(a[0], minlength=HBINS).astype(np.float64)}


SOFTMAX_PY = """
def softmax(x, out):
    lane = cuda.threadIdx.x
    row = cuda.blockIdx.x * cuda.blockDim.y + cuda.threadIdx.y
    nrows, ncols = x.shape
    if row < nrows:
        m = float32(-3.0e38)
        for c in range(lane, ncols, 32):
            m = max(m, x[row, c])
        m = max(m, cuda.shfl_xor_sync(0xFFFFFFFF, m, 16))
        m = max(m, cuda.shfl_xor_sync(0xFFFFFFFF, m, 8))
        m = max(m, cuda.shfl_xor_sync(0xFFFFFFFF, m, 4))
        m = max(m, cuda.shfl_xor_sync(0xFFFFFFFF, m, 2))
        m = max(m, cuda.shfl_xor_sync(0xFFFFFFFF, m, 1))
        s = float32(0.0)
        for c in range(lane, ncols, 32):
            s += math.exp(x[row, c] - m)
        s += cuda.shfl_xor_sync(0xFFFFFFFF, s, 16)
        s += cuda.shfl_xor_sync(0xFFFFFFFF, s, 8)
        s += cuda.shfl_xor_sync(0xFFFFFFFF, s, 4)
        s += cuda.shfl_xor_sync(0xFFFFFFFF, s, 2)
        s += cuda.shfl_xor_sync(0xFFFFFFFF, s, 1)
        inv = float32(1.0) / s
        for c in range(lane, ncols, 32):
            out[row, c] = math.exp(x[row, c] - m) * inv
"""
SOFTMAX_C = r"""
extern "C" __global__ void softmax(const float* x, float* out, int nrows, int ncols) {
    int lane = threadIdx.x;
    int row = blockIdx.x * blockDim.y + threadIdx.y;
    if (row < nrows) {
        const float* r = x + (long)row * ncols;
        float m = -3.0e38f;
        for (int c = lane; c < ncols; c += 32)
            m = fmaxf(m, r[c]);
        for (int off = 16; off > 0; off >>= 1)
            m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, off));
        float s = 0.0f;
        for (int c = lane; c < ncols; c += 32)
            s += expf(r[c] - m);
        for (int off = 16; off > 0; off >>= 1)
            s += __shfl_xor_sync(0xffffffff, s, off);
        float inv = 1.0f / s;
        for (int c = lane; c < ncols; c += 32)
            out[(long)row * ncols + c] = expf(r[c] - m) * inv;
    }
}
"""
SM_BLOCK = (32, 8)


def softmax_make(rng, sms):
    rows, cols = SIZES["softmax_rows"], SIZES["softmax_cols"]
    x = (rng.standard_normal((rows, cols)) * 3).astype(np.float32)
    grid = _blocks(rows, SM_BLOCK[1])
    return [x, _poison((rows, cols), np.float32)], grid, SM_BLOCK, [np.int32(rows), np.int32(cols)]


def softmax_ref(a):
    x = a[0].astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return {1: e / e.sum(axis=1, keepdims=True)}


CONV_PY = """
def conv1d(x, w, out):
    i = cuda.grid(1)
    n = x.size
    if i < n:
        acc = float32(0.0)
        for k in range(KW):
            j = i + k - KR
            if j >= 0 and j < n:
                acc += w[k] * x[j]
        out[i] = acc
"""
CONV_C = r"""
extern "C" __global__ void conv1d(const float* x, const float* w, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float acc = 0.0f;
        for (int k = 0; k < 17; k++) {
            int j = i + k - 8;
            if (j >= 0 && j < n)
                acc += w[k] * x[j];
        }
        out[i] = acc;
    }
}
"""


def conv_make(rng, sms):
    n = SIZES["conv"]
    x = rng.standard_normal(n).astype(np.float32)
    w = rng.uniform(-1, 1, KW).astype(np.float32)
    return [x, w, _poison(n, np.float32)], _blocks(n), TPB, [np.int32(n)]


def conv_ref(a):
    x, w = a[0].astype(np.float64), a[1].astype(np.float64)
    return {2: np.correlate(x, w, mode="same")}


def kernels(Kernel) -> list:
    """The kernels as ``Kernel``s of kernel_bench (its class, passed in)."""
    n, nc = SIZES["elementwise"], SIZES["complex"]
    nb, st = SIZES["nbody"], SIZES["stencil"]
    rows, cols = SIZES["softmax_rows"], SIZES["softmax_cols"]
    ew = {"elementwise": True}
    return [
        Kernel("axpby", AXPBY_PY, AXPBY_C, axpby_make, axpby_ref, 1e-5, 12 * n, **ew),
        Kernel("gelu", GELU_PY, GELU_C, gelu_make, gelu_ref, 1e-5, 8 * n, **ew),
        Kernel("complex_mul", CMUL_PY, CMUL_C, cmul_make, cmul_ref, 1e-5, 24 * nc, **ew),
        Kernel(
            "nbody",
            NBODY_PY,
            NBODY_C,
            nbody_make,
            nbody_ref,
            1e-4,
            28 * nb,
            flops=20 * nb * nb,
            rate="GFLOP/s",
        ),
        Kernel("spmv", SPMV_PY, SPMV_C, spmv_make, spmv_ref, 1e-5, spmv_bytes()),
        Kernel("stencil7", STENCIL_PY, STENCIL_C, stencil_make, stencil_ref, 1e-5, 8 * st**3),
        Kernel("histogram", HIST_PY, HIST_C, hist_make, hist_ref, 0.0, SIZES["hist"]),
        Kernel("softmax", SOFTMAX_PY, SOFTMAX_C, softmax_make, softmax_ref, 1e-5, 8 * rows * cols),
        Kernel("conv1d", CONV_PY, CONV_C, conv_make, conv_ref, 1e-5, 8 * SIZES["conv"]),
    ]
