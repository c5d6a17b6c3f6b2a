"""Stage 7's last step before the cubin: the PTX entry loses the parameters its code
never reads (``cujit.ptx.params``), and the compile result says which it kept."""

from __future__ import annotations

import pytest

from cujit import abi, cuda
from cujit.options import Options
from cujit.pipeline import compile_kernel
from cujit.ptx.params import prune_entry_params
from cujit.types import float32, float64, int32, int64

ENTRY = """\
.version 9.5
.target sm_90
.address_size 64

.visible .entry other_k(
\t.param .u64 other_k_param_0
)
{
\tret;
}

.visible .entry k(
\t.param .f32 k_param_0,
\t.param .u64 k_param_1,
\t.param .u64 k_param_2,
\t.param .u8 k_param_3,
\t.param .align 8 .b8 k_param_4[16],
\t.param .u64 k_param_10
)
{
\tld.param.f32 \t%f1, [k_param_0];
\tld.param.u64 \t%rd1, [k_param_10];
\tmov.u64 \t%rd2, k_param_4;
\tld.param.u64 \t%rd3, [k_param_2+8];
\tret;
}
"""


def test_unread_parameters_leave_the_entry_and_the_mask_says_which():
    ptx, kept = prune_entry_params(ENTRY, "k")
    # k_param_1 is read nowhere (k_param_10 is another name); k_param_3 neither.
    assert kept == (True, False, True, False, True, True)
    entry = ptx[ptx.index(".entry k("):ptx.index("{", ptx.index(".entry k("))]
    assert entry == (".entry k(\n\t.param .f32 k_param_0,\n\t.param .u64 k_param_2,\n"
                     "\t.param .align 8 .b8 k_param_4[16],\n\t.param .u64 k_param_10\n)\n")
    assert ".entry other_k(\n\t.param .u64 other_k_param_0\n)" in ptx  # another entry: as is
    start = ENTRY.index(".entry k(")
    old_entry = ENTRY[start:ENTRY.index("{", start)]
    assert ptx.replace(entry, "") == ENTRY.replace(old_entry, "")  # nothing else changed


def test_entry_that_reads_nothing_takes_no_parameters():
    text = (".visible .entry z(\n\t.param .u64 z_param_0,\n\t.param .u64 z_param_1\n)\n"
            "{\n\tret;\n}\n")
    ptx, kept = prune_entry_params(text, "z")
    assert kept == (False, False) and ".entry z()\n{" in ptx


@pytest.mark.parametrize("text", [
    ".visible .entry k()\n{\n\tret;\n}\n",  # no parameters
    ".visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n\tld.param.u64 %rd1, [k_param_0];\n}\n",
])
def test_nothing_to_drop_leaves_the_text_alone(text):
    ptx, kept = prune_entry_params(text, "k")
    assert ptx == text and all(kept)


@pytest.mark.parametrize("text,symbol", [
    (ENTRY, "missing"),  # no such entry
    (ENTRY, "other"),  # a prefix of an entry's name is not that entry
    (".visible .entry k(\n\t.reg .u64 odd\n)\n{\n}\n", "k"),  # not a parameter list
])
def test_an_unrecognised_entry_is_left_whole(text, symbol):
    assert prune_entry_params(text, symbol) == (text, None)


def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


SAXPY = (float32, float32[::1], float32[::1], float32[::1])


def entry_params(result) -> list[str]:
    return [ln.split()[-1].rstrip(",") for ln in result.ptx.splitlines()
            if ln.strip().startswith(".param") and result.symbol + "_param_" in ln]


def test_saxpy_takes_its_pointers_and_one_extent():
    result = compile_kernel(saxpy, SAXPY, Options(arch=(9, 0)))
    # a, x.data, x.shape0 (x.size), y.data, out.data: the grid index is known to be
    # non-negative, so no negative-index wrap needs y's or out's extent.
    assert result.kept == (True, True, True, True, False, True, False)
    assert entry_params(result) == [f"saxpy_param_{k}" for k in (0, 1, 2, 3, 5)]
    assert abi.keep(abi.flat_param_kinds(SAXPY), result.kept) == [
        "float32", "ptr", "int64", "ptr", "ptr"]
    assert result.cubin[:4] == b"\x7fELF"


def neg_index(x, out):
    i = cuda.grid(1)
    out[i] = x[i - 1]  # i - 1 may be -1: Python's wrap needs x's extent


def strided_2d(a, out, n):
    i, j = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = a[i, j]  # 'A' layout: a's strides; C: out's row length


@pytest.mark.parametrize("fn,types,want", [
    (neg_index, (float64[::1], float64[::1]), (True, True, True, False)),
    (strided_2d, (float64[:, :], float64[:, ::1], int32),
     # a: data, extents dead (no wrap), strides read; out: data and extents; n unread
     (True, False, False, True, True, True, True, True, False)),
])
def test_what_the_code_reads_decides(fn, types, want):
    assert compile_kernel(fn, types, Options(arch=(9, 0))).kept == want


def test_debug_builds_keep_every_parameter():
    result = compile_kernel(saxpy, SAXPY, Options(arch=(9, 0), debug=True))
    assert result.kept is None and len(entry_params(result)) == 7


def test_cpu_target_keeps_every_parameter():
    result = compile_kernel(saxpy, SAXPY, Options(target="cpu"))
    assert result.kept is None


def test_nothing_is_kept_from_arguments_a_kernel_ignores():
    def ignore(a, b, c):
        pass

    result = compile_kernel(ignore, (float64[:, :], int64, cuda.complex128), Options(arch=(9, 0)))
    assert result.kept == (False,) * 8 and entry_params(result) == []
