"""Stage 7 without a GPU: hand-written NVVM IR -> PTX (libNVVM) -> cubin (nvJitLink)."""

from __future__ import annotations

import os
import struct
import subprocess
import sys

import pytest

import cujit
from cujit.ptx import LinkError, NVVMError, compile_ptx, link_cubin, toolchain_versions

DATALAYOUT = (
    "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-f32:32:32-f64:64:64-"
    "v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"
)

# out[i] = sinf(x[i]) / d with the cujit.abi array layout (ptr, extent, byte stride).
# The division shows which float flags were used; __nv_sinf needs libdevice.
SIN_KERNEL = f"""
target triple = "nvptx64-nvidia-cuda"
target datalayout = "{DATALAYOUT}"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare float @__nv_sinf(float)

define void @sin_div(float* %out, i64 %n_out, i64 %s_out, float* %x, i64 %n_x, i64 %s_x,
                     float %d) {{
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %b = mul i32 %ctaid, %ntid
  %i32 = add i32 %b, %tid
  %i = sext i32 %i32 to i64
  %inb = icmp slt i64 %i, %n_out
  br i1 %inb, label %body, label %exit
body:
  %xb = bitcast float* %x to i8*
  %xo = mul i64 %i, %s_x
  %xp8 = getelementptr i8, i8* %xb, i64 %xo
  %xp = bitcast i8* %xp8 to float*
  %xv = load float, float* %xp
  %s = call float @__nv_sinf(float %xv)
  %r = fdiv float %s, %d
  %ob = bitcast float* %out to i8*
  %oo = mul i64 %i, %s_out
  %op8 = getelementptr i8, i8* %ob, i64 %oo
  %op = bitcast i8* %op8 to float*
  store float %r, float* %op
  br label %exit
exit:
  ret void
}}

!nvvm.annotations = !{{!0}}
!0 = !{{void (float*, i64, i64, float*, i64, i64, float)* @sin_div, !"kernel", i32 1}}
!nvvmir.version = !{{!1}}
!1 = !{{i32 2, i32 0, i32 3, i32 1}}
"""

EM_CUDA = 190  # ELF e_machine of NVIDIA cubins


def elf_sm(cubin: bytes) -> int:
    """The SM number a cubin targets: CUDA ELF keeps it in e_flags bits 8-15."""
    assert cubin[:4] == b"\x7fELF", "not an ELF image"
    assert cubin[4] == 2, "not a 64-bit ELF"
    assert struct.unpack_from("<H", cubin, 18)[0] == EM_CUDA
    return (struct.unpack_from("<I", cubin, 48)[0] >> 8) & 0xFF


@pytest.mark.parametrize("quoted", [False, True])
def test_compile_ptx_has_the_entry_and_target(quoted):
    # llvmlite quotes symbol names (@"__nv_sinf"): libdevice must still be linked.
    ir = SIN_KERNEL.replace("@__nv_sinf", '@"__nv_sinf"') if quoted else SIN_KERNEL
    ptx = compile_ptx(ir, (9, 0))
    assert ".target sm_90" in ptx
    assert ".visible .entry sin_div(" in ptx
    # 7 parameters: 3 + 3 for the two arrays, then the float.
    assert "sin_div_param_6" in ptx and "sin_div_param_7" not in ptx
    # libdevice was linked in and internalised: no external call to __nv_sinf remains.
    assert "__nv_sinf" not in ptx
    assert ".extern" not in ptx


@pytest.mark.parametrize("arch", [(9, 0), (8, 0)])
def test_link_cubin_for_each_arch(arch):
    ptx = compile_ptx(SIN_KERNEL, arch)
    assert f".target sm_{arch[0]}{arch[1]}" in ptx
    cubin = link_cubin(ptx, arch)
    assert elf_sm(cubin) == arch[0] * 10 + arch[1]


def test_float_flags_follow_the_options():
    ieee = compile_ptx(SIN_KERNEL, (9, 0))
    fast = compile_ptx(SIN_KERNEL, (9, 0), fastmath=True)
    # IEEE round-to-nearest division by default; an approximate one under fastmath
    # (NVVM's -prec-div=0), with single-precision denormals flushed (-ftz=1).
    assert "div.rn.f32" in ieee and ".ftz" not in ieee
    assert "div.rn.f32" not in fast and ".ftz.f32" in fast


def test_bad_ir_reports_the_nvvm_log():
    bad = SIN_KERNEL.replace("  ret void", "  ret i32 0")
    with pytest.raises(NVVMError) as info:
        compile_ptx(bad, (9, 0), name="bad_module")
    err = info.value
    assert err.log.strip(), "libNVVM gave no log"
    assert "bad_module" in err.log  # libNVVM prefixes its messages with the module name
    assert err.log.strip() in str(err)
    assert "sm_90" in str(err)


def test_bad_ptx_reports_the_link_log():
    ptx = compile_ptx(SIN_KERNEL, (9, 0))
    broken = ptx.replace("ret;", "frobnicate.u32 %r1;", 1)
    with pytest.raises(LinkError) as info:
        link_cubin(broken, (9, 0), name="broken.ptx")
    assert "frobnicate" in info.value.log or "broken.ptx" in info.value.log
    assert info.value.log.strip() in str(info.value)


def test_toolchain_versions():
    v = toolchain_versions()
    assert v["libnvvm"][0] >= 2 and len(v["nvvm_ir"]) == 4
    assert v["nvjitlink"][0] >= 12
    assert v["libnvvm_path"] and v["nvjitlink_path"]


def test_import_loads_no_toolchain_library():
    code = (
        "import sys, cujit.ptx; print(any(m.startswith('cuda.bindings.nv') for m in sys.modules))"
    )
    src = os.path.dirname(os.path.dirname(cujit.__file__))
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.strip() == "False"


def test_toolkit_layout_fallback(tmp_path):
    """Without pathfinder's help, libNVVM and libdevice are found under $CUDA_HOME.

    This is the GPU machine's layout (/usr/local/cuda/nvvm/{lib64,libdevice}); the
    fake toolkit links to this machine's copies.
    """
    from cujit.ptx import libs

    found = libs.load_library("nvvm"), libs.libdevice_path()
    (tmp_path / "nvvm" / "lib64").mkdir(parents=True)
    (tmp_path / "nvvm" / "libdevice").mkdir()
    (tmp_path / "nvvm" / "lib64" / "libnvvm.so.4").symlink_to(found[0])
    (tmp_path / "nvvm" / "libdevice" / "libdevice.10.bc").symlink_to(found[1])
    code = f"""
from cujit.ptx import libs, compile_ptx
def refuse(name):
    raise RuntimeError("pathfinder found nothing")
libs._pathfinder_load = libs._pathfinder_bitcode = refuse
ptx = compile_ptx({SIN_KERNEL!r}, (9, 0))
print(".entry sin_div" in ptx)
print(libs.load_library("nvvm"))
print(libs.libdevice_path())
"""
    src = os.path.dirname(os.path.dirname(cujit.__file__))
    env = dict(
        os.environ,
        CUDA_HOME=str(tmp_path),
        PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""),
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [
        "True",
        str(tmp_path / "nvvm/lib64/libnvvm.so.4"),
        str(tmp_path / "nvvm/libdevice/libdevice.10.bc"),
    ]


def test_missing_toolchain_says_what_to_install(monkeypatch, tmp_path):
    from cujit.ptx import ToolchainNotFoundError, libs

    def refuse(name):
        raise RuntimeError("pathfinder found nothing")

    monkeypatch.setattr(libs, "_loaded", {})
    monkeypatch.setattr(libs, "_pathfinder_load", refuse)
    monkeypatch.setattr(libs, "cuda_roots", lambda: [tmp_path])
    with pytest.raises(ToolchainNotFoundError, match="nvidia-nvjitlink' or set CUDA_HOME"):
        libs.load_library("nvJitLink")
