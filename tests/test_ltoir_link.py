"""``cuda.compile(..., output="ltoir")`` code linked with another LTO-IR module: CUDA C
compiled by NVRTC with ``-dlto``, joined by nvJitLink's link-time optimisation.  The
link down to a cubin runs without a GPU; the gpu tests run the linked code."""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda
from cujit.cuda import float32
from cujit.ptx.link import LinkError, link_cubin
from cujit.ptx.nvrtc import compile_cuda

LTOIR_MAGIC = 0x7F4E43ED  # libNVVM's and NVRTC's LTO-IR header

# A CUDA C kernel calling the Python function compiled with cujit (C ABI, "udf").
CUDA_KERNEL = r"""
extern "C" __device__ float udf(float x, float y);

extern "C" __global__ void apply_udf(float *out, const float *x, const float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = udf(x[i], y[i]);
}
"""

# A CUDA C device function a cujit kernel calls (numba's ABI: result through the pointer).
CUDA_COMBINE = r"""
extern "C" __device__ int combine(float *result, float a, float b)
{
    *result = a * 0.5f + b;
    return 0;
}
"""


def _udf(x, y):
    return x * y + 2.0


def _python_ltoir(cc=(9, 0)) -> bytes:
    lto, rtype = cuda.compile(
        _udf,
        float32(float32, float32),
        output="ltoir",
        abi="c",
        abi_info={"abi_name": "udf"},
        cc=cc,
    )
    assert rtype == float32
    return lto


def _cuda_ltoir(source: str, name: str, cc=(9, 0)) -> bytes:
    lto = compile_cuda(source, name, cc[:2], ltoir=True)
    assert int.from_bytes(lto[:4], "little") == LTOIR_MAGIC  # NVRTC -dlto made LTO-IR
    return lto


def test_python_ltoir_and_nvrtc_ltoir_link_to_a_cubin():
    udf = _python_ltoir()
    assert int.from_bytes(udf[:4], "little") == LTOIR_MAGIC
    kernel = _cuda_ltoir(CUDA_KERNEL, "apply_udf.cu")
    cubin = link_cubin(
        None, (9, 0), inputs=(("ltoir", kernel, "apply_udf.ltoir"), ("ltoir", udf, "udf.ltoir"))
    )
    assert cubin[:4] == b"\x7fELF"
    assert b"apply_udf" in cubin  # the CUDA C kernel's entry survived LTO


def test_the_link_without_the_python_function_is_unresolved():
    kernel = _cuda_ltoir(CUDA_KERNEL, "apply_udf.cu")
    with pytest.raises(LinkError, match="udf"):
        link_cubin(None, (9, 0), inputs=(("ltoir", kernel, "apply_udf.ltoir"),))


def _kernel_over_two_ltoir_modules(cc=(9, 0)):
    udf = cuda.declare_device(
        "udf", "float32(float32, float32)", abi="c", link=[cuda.LTOIR(_python_ltoir(cc))]
    )
    combine = cuda.declare_device(
        "combine",
        "float32(float32, float32)",
        link=[cuda.LTOIR(_cuda_ltoir(CUDA_COMBINE, "combine.cu", cc), name="combine.ltoir")],
    )

    @cuda.jit
    def k(out, x, y):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = combine(udf(x[i], y[i]), x[i])

    return k


def test_cujit_kernel_links_both_ltoir_modules_to_a_cubin():
    k = _kernel_over_two_ltoir_modules()
    cubin = k.compile((float32[:], float32[:], float32[:])).result.cubin
    assert cubin[:4] == b"\x7fELF"


def _inputs(n: int):
    rng = np.random.default_rng(11)
    x = rng.uniform(-3, 3, n).astype(np.float32)
    y = rng.uniform(-3, 3, n).astype(np.float32)
    return x, y, np.full(n, np.nan, dtype=np.float32)


@pytest.mark.gpu
def test_gpu_cujit_kernel_over_two_ltoir_modules():
    cc = tuple(cuda.get_current_device().compute_capability)
    k = _kernel_over_two_ltoir_modules(cc)
    x, y, out = _inputs(3000)
    k[24, 128](out, x, y)
    ref = (x.astype(np.float64) * y + 2.0) * 0.5 + x
    assert np.linalg.norm(out - ref) / np.linalg.norm(ref) < 1e-6


@pytest.mark.gpu
def test_gpu_cuda_c_kernel_calls_the_python_ltoir():
    from cuda.bindings import driver as drv

    cc = tuple(cuda.get_current_device().compute_capability)
    cubin = link_cubin(
        None,
        cc,
        inputs=(
            ("ltoir", _cuda_ltoir(CUDA_KERNEL, "apply_udf.cu", cc), "apply_udf.ltoir"),
            ("ltoir", _python_ltoir(cc), "udf.ltoir"),
        ),
    )
    x, y, out = _inputs(1000)
    dx, dy, dout = cuda.to_device(x), cuda.to_device(y), cuda.to_device(out)
    err, module = drv.cuModuleLoadData(cubin)
    assert err == drv.CUresult.CUDA_SUCCESS, err
    try:
        err, fn = drv.cuModuleGetFunction(module, b"apply_udf")
        assert err == drv.CUresult.CUDA_SUCCESS, err
        ptrs = [np.array([a.device_ctypes_pointer.value], np.uint64) for a in (dout, dx, dy)]
        n = np.array([len(x)], np.int32)
        params = np.array([p.ctypes.data for p in (*ptrs, n)], np.uint64)
        (err,) = drv.cuLaunchKernel(fn, 8, 1, 1, 128, 1, 1, 0, 0, params.ctypes.data, 0)
        assert err == drv.CUresult.CUDA_SUCCESS, err
        (err,) = drv.cuCtxSynchronize()
        assert err == drv.CUresult.CUDA_SUCCESS, err
    finally:
        drv.cuModuleUnload(module)
    got = dout.copy_to_host()
    ref = x.astype(np.float64) * y + 2.0
    assert np.linalg.norm(got - ref) / np.linalg.norm(ref) < 1e-6
