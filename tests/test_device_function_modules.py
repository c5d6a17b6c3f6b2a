"""Device functions on the CUDA target (codegen/functions.py): numba's calling convention
(an i32 status, the result stored through the first parameter) and a module of their
own, declared where they are called; libNVVM links the modules.  Compile-only here
(libNVVM and nvJitLink need no GPU); the values are checked on the CPU target, which
keeps one module, and on the GPU where there is one."""

from __future__ import annotations

import re

import numpy as np
import pytest

from cujit import abi, cuda
from cujit.options import Options
from cujit.pipeline import compile_kernel
from cujit.types import float64, int64


@cuda.jit(device=True, forceinline=True)
def scaled(x, k):
    return x * k


@cuda.jit(device=True)
def offset(x):
    return scaled(x, 3.0) + 1.0


@cuda.jit(device=True)
def store_at(out, i, v):
    out[i] = v  # returns nothing


def chain(x, out):
    i = cuda.grid(1)
    if i < x.size:
        store_at(out, i, offset(x[i]))


TYPES = (float64[::1], float64[::1])


def modules(llvm: str) -> list[str]:
    return [m for m in re.split(r"(?m)^(?=; ModuleID = )", llvm) if m.strip()]


def test_each_device_function_has_its_own_module_and_is_declared_where_called():
    llvm = compile_kernel(chain, TYPES, Options(verify=True), stop_after="llvm").outputs["llvm"]
    kernel, *callees = modules(llvm)
    names = [re.search(r'ModuleID = "([^"]+)"', m).group(1) for m in callees]
    assert len(names) == 3 and all(n.startswith("cujit$dev$") for n in names), names
    assert sorted(n.split("$")[2].split("_")[0] for n in names) == ["offset", "scaled", "store"]
    for module in callees:  # one definition each, numba's linkage and convention
        defs = re.findall(r"^define (\S+) i32 @\"([^\"]+)\"\(([^)]*)\)", module, re.M)
        assert len(defs) == 1 and defs[0][0] == "linkonce_odr", defs
        assert defs[0][2].split(",")[0].endswith('* %".ret"')
        assert "!nvvmir.version" in module
    # The kernel calls offset and store_at; offset's module calls scaled.
    assert re.search(r'declare i32 @"cujit\$dev\$offset_float64"\(double\*', kernel)
    assert "scaled" not in kernel
    offset_module = next(m for m in callees if 'ModuleID = "cujit$dev$offset' in m)
    scaled_decl = r'declare i32 @"cujit\$dev\$scaled[^"]*"\([^)]*\) alwaysinline'
    assert re.search(scaled_decl, offset_module)
    assert re.search(r'call i32 @"cujit\$dev\$store_at[^"]*"\(i8\*\* null', kernel)


def test_the_linked_program_compiles_with_each_function_inlined_once_or_called():
    result = compile_kernel(chain, TYPES, Options(verify=True))
    assert result.cubin[:4] == b"\x7fELF"
    assert ".func" not in result.ptx  # at -O3 libNVVM inlines across the modules
    o0 = compile_kernel(chain, TYPES, Options(opt=0, verify=True))
    assert len(re.findall(r"^\.func|^\.weak \.func", o0.ptx, re.M)) >= 2  # real calls at -O0


def test_a_checked_device_function_reports_through_the_kernels_record():
    options = Options(debug=True, opt=0, boundscheck=True, verify=True)
    result = compile_kernel(chain, TYPES, options)
    llvm = result.outputs["llvm"]
    kernel, *callees = modules(llvm)
    sym = abi.DEBUG_RECORD_SYMBOL
    assert re.search(
        rf'^@"{sym}" = addrspace\(1\) global \[\d+ x i64\] zeroinitializer', kernel, re.M
    )
    store_module = next(m for m in callees if "store_at" in m.split("\n")[0])
    assert re.search(rf'^@"{sym}" = external addrspace\(1\) global', store_module, re.M)
    assert result.ptx.count(f"{sym}[") == 1  # one definition in the linked PTX
    sites = result.record.debug_sites.values()
    assert any(s.exc is IndexError and s.loc.line == _line("out[i] = v") for s in sites)


def _line(text: str) -> int:
    with open(__file__) as f:
        return next(n for n, ln in enumerate(f, 1) if text in ln and "_line" not in ln)


@pytest.mark.parametrize("target", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_the_chain_computes_on_each_target(target):
    rng = np.random.default_rng()
    x = rng.standard_normal(100)
    out = np.full(100, np.nan)
    cuda.jit(chain, target=target)[4, 32](x, out)
    # the GPU fuses 3 * x + 1 into one fma (one rounding where NumPy rounds twice)
    np.testing.assert_allclose(out, 3.0 * x + 1.0, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("target", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_a_failing_device_function_stops_its_caller_on_each_target(target):
    kernel = cuda.jit(chain, target=target, debug=True, opt=False, boundscheck=True)
    x = np.arange(1.0, 9.0)
    out = np.full(7, np.nan)
    with pytest.raises(IndexError) as info:
        kernel[1, 8](x, out)  # thread 7 stores past out's end inside store_at
    assert info.value.kernel_failure.loc.line == _line("out[i] = v")
    np.testing.assert_allclose(out, 3.0 * x[:7] + 1.0, rtol=1e-15)


def test_int64_results_pass_through_the_result_pointer():
    @cuda.jit(device=True)
    def triple(n):
        return 3 * n

    def kernel(out, n):
        out[0] = triple(n)

    llvm = compile_kernel(kernel, (int64[::1], int64), stop_after="llvm").outputs["llvm"]
    head = r'define linkonce_odr i32 @"cujit\$dev\$triple_int64"\(i64\* %"\.ret"'
    assert re.search(head, llvm)
    assert re.search(r'store i64 %"v\d+", i64\* %"\.ret"\n  ret i32 0', llvm)
    out = np.full(1, -1, np.int64)
    cuda.jit(kernel, target="cpu")[1, 1](out, 14)
    assert out[0] == 42
