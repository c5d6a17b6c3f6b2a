"""Arrays as arguments of a device function compiled on its own (``cuda.compile``,
``compile_ptx(device=True)``): numba's array members cross the ABI (meminfo, parent,
nitems, itemsize, data, the extents, the byte strides); cujit reads data, extents and
strides.  Checked in the PTX (libNVVM, no GPU) and by linking a kernel that calls the
compiled function with numba's argument layout, on nvJitLink."""

from __future__ import annotations

import re

import pytest

from cujit import cuda
from cujit.cuda import types


def _store_at(a):
    a[0, 1] = 5.0


def _header(ptx: str, name: str) -> re.Match:
    found = re.search(rf"\.func\s+(?:\([^)]*\)\s*)?{name}\(([^)]*)\)", ptx)
    assert found, ptx
    return found


def _params(ptx: str, name: str) -> list[str]:
    return re.findall(rf"\.param \.b64 ({name}_param_\d+)", _header(ptx, name).group(1))


def test_numba_abi_takes_the_members_after_the_result_pointer():
    ptx, resty = cuda.compile_ptx(_store_at, (types.float64[:, :],), device=True)
    params = _params(ptx, "_store_at")
    assert len(params) == 1 + 5 + 2 + 2  # retptr, 5 members, 2 extents, 2 strides
    body = ptx[_header(ptx, "_store_at").end() :]
    # a[0, 1] is data (member 4, parameter 5) plus the second stride (parameter 9).
    loaded = dict(re.findall(r"ld\.param\.u64\s+(%rd\d+), \[_store_at_param_(\d+)\]", body))
    assert sorted(loaded.values()) == ["5", "9"]
    # 5.0's bits, stored as a 64-bit word
    assert "4617315517961601024" in body and re.search(r"st\.u64\s+\[%rd\d+\]", body)


def test_c_abi_takes_the_members_alone():
    ptx, _ = cuda.compile_ptx(_store_at, (types.float64[:, :],), device=True, abi="c")
    assert len(_params(ptx, "_store_at")) == 5 + 2 + 2


def test_forceinline_changes_the_ltoir_of_an_array_function():
    def set_zero(a):
        a[0] = 0

    args = (types.float32[::1],)
    plain, _ = cuda.compile(set_zero, args, device=True, output="ltoir")
    forced, _ = cuda.compile(set_zero, args, device=True, output="ltoir", forceinline=True)
    assert plain != forced


def test_an_array_result_is_still_refused():
    def identity(a):
        return a

    with pytest.raises(Exception, match="the return value is an array"):
        cuda.compile_ptx(identity, (types.float32[::1],), device=True)
