"""Foreign code in kernels: cuda.declare_device and jit(link=[...]) with CUDA C++ (NVRTC),
PTX and LTO-IR (nvJitLink).  Everything down to the linked cubin runs without a GPU;
the gpu tests launch the kernels and check their results."""

from __future__ import annotations

import re

import numpy as np
import pytest

from cujit import cuda
from cujit.cache.key import kernel_key
from cujit.cuda import float32, int32
from cujit.diagnostics import CompileError, CujitError, UnsupportedError
from cujit.ptx.nvrtc import NVRTCError, compile_cuda

SHIM = """
extern "C" __device__ float axpy(float a, float x, float y) { return a * x + y; }
extern "C" __device__ int imul(int *result, int a, int b) { *result = a * b; return 0; }
"""
ARGS = (float32[:], float32[:], float32[:])


def _axpy_kernel(link):
    axpy = cuda.declare_device("axpy", "float32(float32, float32, float32)", abi="c")

    def k(out, x, y):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = axpy(2.5, x[i], y[i])

    return cuda.jit(link=link)(k)


def _poisoned(n):
    rng = np.random.default_rng(7)
    x = rng.uniform(-4, 4, n).astype(np.float32)
    y = rng.uniform(-4, 4, n).astype(np.float32)
    return x, y, np.full(n, np.nan, dtype=np.float32)


def test_cusource_c_abi_links_to_a_cubin():
    spec = _axpy_kernel([cuda.CUSource(SHIM, name="shim.cu")]).compile(ARGS)
    ptx = spec.result.ptx
    m = re.search(
        r"\.extern\s+\.func\s+\(\.param\s+\.b32\s+func_retval0\)\s+axpy\s*\(([^)]*)\)", ptx
    )
    assert m and len(re.findall(r"\.param\s+\.b32", m.group(1))) == 3
    assert re.search(r"call\.uni[^;]*axpy", ptx)
    assert spec.result.cubin[:4] == b"\x7fELF"


def test_numba_abi_passes_a_result_pointer():
    imul = cuda.declare_device("imul", "int32(int32, int32)", abi="numba")

    @cuda.jit(link=[cuda.CUSource(SHIM)])
    def k(out, a):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = imul(a[i], 3)

    ptx = k.compile((int32[:], int32[:])).result.ptx
    m = re.search(
        r"\.extern\s+\.func\s+\(\.param\s+\.b32\s+func_retval0\)\s+imul\s*\(([^)]*)\)", ptx
    )
    assert m and re.findall(r"\.param\s+\.(\w+)", m.group(1)) == ["b64", "b32", "b32"]


def test_cu_and_ptx_files_by_path(tmp_path):
    cu = tmp_path / "shim.cu"
    cu.write_text(SHIM)
    assert _axpy_kernel([str(cu)]).compile(ARGS).result.cubin[:4] == b"\x7fELF"
    ptx = tmp_path / "shim.ptx"
    ptx.write_bytes(compile_cuda(SHIM, "shim.cu", (9, 0)))
    assert _axpy_kernel([ptx]).compile(ARGS).result.cubin[:4] == b"\x7fELF"


def test_declaration_link_travels_with_the_function():
    axpy = cuda.declare_device(
        "axpy",
        "float32(float32, float32, float32)",
        abi="c",
        link=[cuda.CUSource(SHIM, name="shim.cu")],
    )

    @cuda.jit
    def k(out, x, y):
        out[0] = axpy(1.0, x[0], y[0])

    assert k.compile(ARGS).result.cubin[:4] == b"\x7fELF"


def _udf(x, y):
    return x * y - 1.5


def test_ltoir_from_cuda_compile_links_into_a_kernel():
    lto, _ = cuda.compile(
        _udf, float32(float32, float32), output="ltoir", abi_info={"abi_name": "udf"}
    )
    udf = cuda.declare_device(
        "udf", "float32(float32, float32)", abi="c", link=[cuda.LTOIR(lto, name="udf.ltoir")]
    )

    @cuda.jit
    def k(out, x, y):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = udf(x[i], y[i])

    assert k.compile(ARGS).result.cubin[:4] == b"\x7fELF"


def test_missing_symbol_names_the_declaration_and_the_call():
    nothere = cuda.declare_device("nothere", "float32(float32)", abi="c")

    @cuda.jit(link=[cuda.CUSource(SHIM, name="shim.cu")])
    def k(out, x, y):
        out[0] = nothere(x[0])

    with pytest.raises(CompileError) as err:
        k.compile(ARGS)
    text = str(err.value)
    assert "'nothere'" in text and "shim.cu" in text and "test_linking.py" in text
    assert err.value.loc.line == k.py_func.__code__.co_firstlineno + 2  # decorator, def, call


def test_broken_cu_names_the_file():
    with pytest.raises(NVRTCError, match=r"broken\.cu") as err:
        _axpy_kernel([cuda.CUSource("int x = ;", name="broken.cu")]).compile(ARGS)
    assert "expected an expression" in err.value.log


@pytest.mark.parametrize("sig", ["float32(float32, float32)", "float64(float64, float64, float64)"])
def test_signature_that_differs_from_the_definition(sig):
    wrong = cuda.declare_device("axpy", sig, abi="c")

    def two(out, x, y):
        out[0] = wrong(x[0], y[0])

    def three(out, x, y):
        out[0] = wrong(x[0], y[0], x[0])

    k = cuda.jit(link=[cuda.CUSource(SHIM, name="shim.cu")])(two if sig.count(",") == 1 else three)
    with pytest.raises(CompileError, match=r"does not match its definition in 'shim\.cu'"):
        k.compile(ARGS)


def test_declaration_needs_a_return_type():
    with pytest.raises(TypeError, match="Return type must be provided"):
        cuda.declare_device("f", (float32,))
    with pytest.raises(TypeError, match="Return type must be provided"):
        cuda.declare_device("f", "(float32,)")
    f = cuda.declare_device("f", "int32(float32)")  # numba's default ABI
    assert f.abi == "numba" and f.sig.args == (float32,) and f.sig.return_type == int32


def test_bad_link_items(tmp_path):
    with pytest.raises(CujitError, match=r"cannot link '.*nofile\.cu'"):
        _axpy_kernel([str(tmp_path / "nofile.cu")])
    with pytest.raises(CujitError, match=r"cannot link 'lib\.dll'"):
        _axpy_kernel(["lib.dll"])
    with pytest.raises(NotImplementedError, match="Unsupported ABI"):
        cuda.declare_device("f", "int32(int32)", abi="stdcall")


def test_wrong_arguments_are_a_typing_error_at_the_call():
    axpy = cuda.declare_device("axpy", "float32(float32, float32, float32)", abi="c")

    @cuda.jit(link=[cuda.CUSource(SHIM)])
    def k(out, x, y):
        out[0] = axpy(x[0], y[0])

    with pytest.raises(CompileError, match="declared as float32"):
        k.compile(ARGS)


def test_linked_code_is_part_of_the_cache_key():
    a = _axpy_kernel([cuda.CUSource(SHIM, name="s.cu")])
    b = _axpy_kernel([cuda.CUSource(SHIM.replace("a * x", "a * x * x"), name="s.cu")])
    c = _axpy_kernel([cuda.CUSource(SHIM, name="s.cu")])
    ka, kb, kc = (kernel_key(k.py_func, ARGS, k._options()) for k in (a, b, c))
    assert ka and kb and ka != kb and ka == kc


def test_cpu_target_refuses_linked_code():
    with pytest.raises(CujitError, match=r"'shim\.cu'.*CPU target"):
        cuda.jit(link=[cuda.CUSource(SHIM, name="shim.cu")], target="cpu")(lambda a: None)
    axpy = cuda.declare_device("axpy", "float32(float32, float32, float32)", abi="c")

    @cuda.jit(target="cpu")
    def k(out, x, y):
        out[0] = axpy(1.0, x[0], y[0])

    x, y, out = _poisoned(4)
    with pytest.raises(UnsupportedError, match="CPU target"):
        k[1, 1](out, x, y)


@pytest.mark.gpu
def test_gpu_kernel_calls_a_cpp_function():
    x, y, out = _poisoned(1000)
    _axpy_kernel([cuda.CUSource(SHIM)])[8, 128](out, x, y)
    ref = np.float32(2.5) * x + y
    assert np.linalg.norm(out - ref) / np.linalg.norm(ref) < 1e-6


@pytest.mark.gpu
def test_gpu_numba_abi_and_ltoir_linked_function():
    imul = cuda.declare_device("imul", "int32(int32, int32)", abi="numba")
    cc = tuple(cuda.get_current_device().compute_capability)
    lto, _ = cuda.compile(
        _udf, float32(float32, float32), output="ltoir", abi_info={"abi_name": "udf"}, cc=cc
    )
    udf = cuda.declare_device("udf", "float32(float32, float32)", abi="c", link=[cuda.LTOIR(lto)])

    @cuda.jit(link=[cuda.CUSource(SHIM)])
    def k(out, prod, x, y, a):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = udf(x[i], y[i])
            prod[i] = imul(a[i], 7)

    x, y, out = _poisoned(500)
    a = np.arange(-250, 250, dtype=np.int32)
    prod = np.full(500, -1, dtype=np.int32)
    k[4, 128](out, prod, x, y, a)
    ref = x * y - np.float32(1.5)
    assert np.linalg.norm(out - ref) / np.linalg.norm(ref) < 1e-6
    assert np.array_equal(prod, a * 7)


def test_link_on_a_device_function_is_refused_not_ignored():
    # numba's ValueError and words, and cujit's error class with where to put it instead
    with pytest.raises(ValueError, match="link keyword invalid for device function") as info:
        cuda.jit(device=True, link=[cuda.CUSource(SHIM)])
    assert isinstance(info.value, CujitError) and "cuda.declare_device" in str(info.value)


def test_a_declarations_files_are_part_of_the_cache_key():
    def kernel_with(src):
        axpy = cuda.declare_device(
            "axpy",
            "float32(float32, float32, float32)",
            abi="c",
            link=[cuda.CUSource(src, name="s.cu")],
        )

        def k(out, x, y):
            out[0] = axpy(1.0, x[0], y[0])

        return cuda.jit(k)

    a, b = kernel_with(SHIM), kernel_with(SHIM.replace("+ y", "- y"))
    ka, kb = (kernel_key(k.py_func, ARGS, k._options()) for k in (a, b))
    assert ka and kb and ka != kb
    assert ka == kernel_key(kernel_with(SHIM).py_func, ARGS, a._options())


def test_void_and_bool_across_the_c_abi():
    src = cuda.CUSource(
        'extern "C" __device__ void note(int *p) {}\n'
        'extern "C" __device__ bool odd(int x) { return x & 1; }'
    )
    odd = cuda.declare_device("odd", "boolean(int32)", abi="c")

    @cuda.jit(link=[src])
    def k(out, a):
        i = cuda.grid(1)
        if i < out.size and odd(a[i]):
            out[i] = 1

    ptx = k.compile((int32[:], int32[:])).result.ptx
    # C's bool is one byte, returned in a 32-bit PTX register like NVRTC's definition.
    m = re.search(r"\.extern\s+\.func\s+\(\.param\s+\.(\w+)\s+func_retval0\)\s+odd", ptx)
    assert m and m.group(1) == "b32"


def _relocatable_cubin(source: str, name: str, arch=(9, 0)) -> bytes:
    """``source`` compiled by NVRTC to a relocatable sm_XY cubin (``-rdc=true``), the
    kind of ``.cubin`` a library links into kernels."""
    from cujit.ptx import libs

    nvrtc = libs.nvrtc_module()
    opts = [f"-arch=sm_{arch[0]}{arch[1]}", "-rdc=true", "-default-device"]
    opts += [f"-I{d}" for d in libs.cuda_include_dirs()]
    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], [])
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS
    try:
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), [o.encode() for o in opts])
        assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS
        err, size = nvrtc.nvrtcGetCUBINSize(prog)
        buf = b" " * size
        (err,) = nvrtc.nvrtcGetCUBIN(prog, buf)
        assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    return buf


def test_a_relocatable_cubin_file_links(tmp_path):
    path = tmp_path / "shim.cubin"
    path.write_bytes(_relocatable_cubin(SHIM, "shim.cu"))
    assert path.read_bytes()[:4] == b"\x7fELF"
    k = _axpy_kernel([str(path)])
    spec = k.compile(ARGS)
    assert spec.result.cubin[:4] == b"\x7fELF"
    assert "axpy" in spec.result.ptx  # the kernel calls the cubin's function


@pytest.mark.gpu
def test_gpu_kernel_calls_a_function_from_a_cubin_file(tmp_path):
    path = tmp_path / "shim.cubin"
    path.write_bytes(
        _relocatable_cubin(SHIM, "shim.cu", cuda.get_current_device().compute_capability)
    )
    k = _axpy_kernel([str(path)])
    x, y, out = _poisoned(1000)
    k[4, 256](out, x, y)
    ref = np.float32(2.5) * x + y  # the C++ contracts it to one FMA: a norm, not each element
    assert np.linalg.norm(out - ref) / np.linalg.norm(ref) < 1e-6
    assert not np.isnan(out).any()
