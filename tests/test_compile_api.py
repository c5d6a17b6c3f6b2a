"""cuda.compile / compile_ptx / compile_for_current_device: the outputs' structure
(no GPU needed: libNVVM and nvJitLink are wheels).  Running LTO-IR-linked code on a GPU:
tests/test_linking.py."""

from __future__ import annotations

import math
import re

import pytest

from cujit import cuda
from cujit.cuda import boolean, float32, int16, int32, int64, uint32, void
from cujit.ptx import LinkError, link_cubin
from cujit.ptx.nvvm import compile_ltoir
from cujit.targets.cuda import DATA_LAYOUT, TRIPLE

LTOIR_MAGIC = 0x7F4E43ED


def add(x, y):
    return x + y


def scaled_sum(x, y):
    return 3 * x + y


def _funcs(ptx: str) -> list[str]:
    return re.findall(r"\.visible\s+\.func\s+(\([^)]*\))?\s*(\w+)\(", ptx)


def test_kernel_is_an_entry_with_void_return():
    def k(r, x):
        i = cuda.grid(1)
        if i < len(r):
            r[i] = x[i]

    ptx, rtype = cuda.compile_ptx(k, (float32[:], float32[:]))
    assert ".visible .entry" in ptx and ".visible .func" not in ptx
    assert rtype == void


def test_device_function_numba_abi_returns_through_pointer():
    ptx, rtype = cuda.compile_ptx(add, (float32, float32), device=True)
    assert rtype == float32
    assert ".visible .entry" not in ptx
    m = re.search(r"\.visible\s+\.func\s+\(\.param\s+\.b32\s+func_retval0\)\s+add\(([^)]*)\)", ptx)
    assert m, ptx
    params = re.findall(r"\.param\s+\.(\w+)\s+\w+", m.group(1))
    # First the result's address (64-bit), then the two float32 arguments.
    assert params == ["b64", "b32", "b32"]
    assert re.search(r"st\.(global|)\.?f32|st\.f32", ptx)  # the result is stored


def test_device_function_c_abi_returns_the_value():
    ptx, rtype = cuda.compile(add, int64(int64, int64), device=True, abi="c")
    assert rtype == int64
    m = re.search(r"\.visible\s+\.func\s+\(\.param\s+\.b64\s+func_retval0\)\s+add\(([^)]*)\)", ptx)
    assert m, ptx
    assert len(re.findall(r"\.param", m.group(1))) == 2


def test_c_abi_name_from_abi_info_and_lambda():
    ptx, _ = cuda.compile(add, int32(int32, int32), abi_info={"abi_name": "_Z4funcii"})
    assert [n for _, n in _funcs(ptx)] == ["_Z4funcii"]
    ptx, _ = cuda.compile(lambda x: x, int32(int32))
    assert [n for _, n in _funcs(ptx)] == ["_lambda_"]


@pytest.mark.parametrize(
    "sig, rtype",
    [
        (int16(int16, int16), int16),
        ("uint32(uint32, uint32)", uint32),
        ((float32, float32), float32),
    ],
)
def test_return_type_declared_or_inferred(sig, rtype):
    _, got = cuda.compile(add, sig, device=True)
    assert got == rtype


def test_boolean_return_is_a_byte_in_the_c_abi():
    ptx, rtype = cuda.compile(lambda a, b: a < b, (int32, int32))
    assert rtype == boolean
    assert ".visible .func" in ptx and "func_retval0" in ptx


def test_errors_match_numba():
    with pytest.raises(NotImplementedError, match="Unsupported output type: illegal"):
        cuda.compile(add, int32(int32, int32), output="illegal")
    with pytest.raises(NotImplementedError, match="Unsupported ABI: fastcall"):
        cuda.compile_ptx(add, (int32, int32), abi="fastcall")
    with pytest.raises(NotImplementedError, match="C ABI is not supported for kernels"):
        cuda.compile_ptx(add, (int32, int32), abi="c")
    with pytest.raises(TypeError, match="must have void return type"):
        cuda.compile_ptx(add, int32(int32, int32))
    with pytest.raises(ValueError, match="forced inlining"):
        cuda.compile(add, int32(int32, int32), forceinline=True)


def test_fastmath_flags_reach_the_device_function():
    def f(x, y, z, d):
        return math.sqrt((x * y + z) / d)

    plain, _ = cuda.compile_ptx(f, (float32,) * 4, device=True)
    assert "sqrt.rn.f32" in plain and "div.rn.f32" in plain
    fast, _ = cuda.compile_ptx(f, (float32,) * 4, device=True, fastmath=True)
    assert "sqrt.approx.ftz.f32" in fast and "div.rn.f32" not in fast


def test_debug_and_lineinfo_name_this_file():
    def f():
        pass

    ptx, _ = cuda.compile_ptx(f, (), device=True, debug=True, opt=False)
    assert re.search(r"\.section\s+\.debug_info", ptx)
    assert re.search(r'\.file.*test_compile_api.py"', ptx)
    ptx, _ = cuda.compile_ptx(f, (), device=True, lineinfo=True)
    assert re.search(r'\.file.*test_compile_api.py"', ptx)


def test_cubin_output_is_an_elf():
    cubin, _ = cuda.compile(add, int32(int32, int32), output="cubin", cc=(8, 0))
    assert cubin[:4] == b"\x7fELF"


# A kernel written directly in NVVM IR that calls `scaled(i32, i32)`, defined elsewhere.
CALLER_IR = f'''
target triple = "{TRIPLE}"
target datalayout = "{DATA_LAYOUT}"
declare i32 @scaled(i32, i32)
@llvm.used = appending global [1 x i8*] [i8* bitcast (void (i32*, i32, i32)* @caller to i8*)], section "llvm.metadata"
define void @caller(i32* %out, i32 %a, i32 %b) {{
  %r = call i32 @scaled(i32 %a, i32 %b)
  store i32 %r, i32* %out
  ret void
}}
!nvvm.annotations = !{{!0}}
!0 = !{{void (i32*, i32, i32)* @caller, !"kernel", i32 1}}
!nvvmir.version = !{{!1}}
!1 = !{{i32 2, i32 0, i32 3, i32 1}}
'''


def test_ltoir_links_with_another_ltoir_module():
    lto, rtype = cuda.compile(
        scaled_sum, int32(int32, int32), output="ltoir", abi_info={"abi_name": "scaled"}, cc=(9, 0)
    )
    assert int.from_bytes(lto[:4], "little") == LTOIR_MAGIC and rtype == int32
    caller = compile_ltoir(CALLER_IR, (9, 0))
    cubin = link_cubin(
        None, (9, 0), inputs=(("ltoir", caller, "caller.ltoir"), ("ltoir", lto, "scaled.ltoir"))
    )
    assert cubin[:4] == b"\x7fELF" and b"caller" in cubin
    with pytest.raises(LinkError, match="scaled"):  # without the definition: unresolved
        link_cubin(None, (9, 0), inputs=(("ltoir", caller, "caller.ltoir"),))


def test_kernel_returning_a_value_names_the_line():
    from cujit.diagnostics import CompileError

    def f(x, y):
        return x[0] + y[0]

    with pytest.raises(CompileError, match="cannot return a value"):
        cuda.compile_ptx(f, (uint32[::1], uint32[::1]))


def test_kernel_ltoir_keeps_its_entry_through_lto():
    def k(r, x):
        i = cuda.grid(1)
        if i < len(r):
            r[i] = x[i]

    lto, _ = cuda.compile(k, (float32[:], float32[:]), device=False, abi="numba", output="ltoir")
    assert int.from_bytes(lto[:4], "little") == LTOIR_MAGIC
    cubin = link_cubin(None, (9, 0), inputs=(("ltoir", lto, "k.ltoir"),))
    assert b"\x00k\x00" in cubin  # the kernel's symbol survived link-time optimisation


def test_compile_all_adds_the_declared_functions_code():
    src = 'extern "C" __device__ int twice(int x) { return 2 * x; }'
    twice = cuda.declare_device(
        "twice", "int32(int32)", abi="c", link=[cuda.CUSource(src, name="t.cu")]
    )

    def f(x):
        return twice(x) + 1

    codes, rtype = cuda.compile_all(f, (int32,), output="ptx")
    assert rtype == int64 and len(codes) == 2  # int32 + int literal, as in numba
    assert "call" in codes[0] and "twice" in codes[0]
    assert re.search(r"\.visible\s+\.func\s+\(\.param\s+\.b32\s+func_retval0\)\s+twice", codes[1])
    codes, _ = cuda.compile_all(f, (int32,))  # LTO-IR by default
    assert all(int.from_bytes(c[:4], "little") == LTOIR_MAGIC for c in codes)


@pytest.mark.parametrize(
    "bounds, directives",
    [
        (128, [r"\.maxntid\s+128"]),
        ((256, 2), [r"\.maxntid\s+256", r"\.minnctapersm\s+2"]),
        ((128, 2, 4), [r"\.maxntid\s+128", r"\.minnctapersm\s+2", r"\.maxclusterrank\s+4"]),
    ],
)
def test_launch_bounds_become_ptx_directives(bounds, directives):
    def f():
        pass

    ptx, _ = cuda.compile_ptx(f, "void()", launch_bounds=bounds, cc=(9, 0))
    for d in directives:
        assert re.search(d, ptx), d
    if not isinstance(bounds, tuple) or len(bounds) < 3:
        assert ".maxclusterrank" not in ptx
    with pytest.raises(ValueError, match="Got 4 launch bounds"):
        cuda.compile_ptx(f, "void()", launch_bounds=(1, 2, 3, 4))


def test_arch_specific_target():
    ptx, _ = cuda.compile_ptx(lambda: None, (), cc=(9, 0, "a"))
    assert ".target sm_90a" in ptx


@pytest.mark.gpu
def test_for_current_device_uses_its_compute_capability():
    major, minor = cuda.get_current_device().compute_capability
    ptx, rtype = cuda.compile_ptx_for_current_device(add, (int32, int32), device=True)
    assert f".target sm_{major}{minor}" in ptx and rtype == int64
    code, _ = cuda.compile_for_current_device(add, int32(int32, int32), output="ltoir")
    assert int.from_bytes(code[:4], "little") == LTOIR_MAGIC
