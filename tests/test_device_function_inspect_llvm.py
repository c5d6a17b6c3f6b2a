"""``jit(device=True)``'s ``inspect_llvm``: the LLVM IR of a device function compiled
alone (numba's form: a dict from each declared signature to its IR)."""

from __future__ import annotations

import re

from cujit import cuda
from cujit.types import float32, int32


def test_declared_signatures_map_to_their_ir():
    @cuda.jit(["int64(boolean, boolean)", "float32(float32, float32)"], device=True)
    def pick(a, b):
        return a if a else b

    irs = pick.inspect_llvm()
    assert list(irs) == list(pick.signatures)
    first, second = (irs[s] for s in pick.signatures)
    # numba's calling convention: an i32 status, the result stored through a pointer.
    assert re.search(r"define [^\n]*i32 @\S*pick\S*\(i64\* [^,]*, i1 [^,]*, i1 ", first)
    assert re.search(r"define [^\n]*i32 @\S*pick\S*\(float\* [^,]*, float [^,]*, float ", second)


def test_one_signature_gives_its_ir():
    @cuda.jit(device=True)
    def add(a, b):
        return a + b

    ir = add.inspect_llvm((int32, int32))
    assert re.search(r"define [^\n]*i32 @\S*add\S*\(i64\* [^,]*, i32 [^,]*, i32 ", ir)  # int64
    assert "!DICompileUnit" not in ir
    ir = add.inspect_llvm([float32, float32])
    assert re.search(r"fadd float", ir)


def test_debug_bool_conditions_are_not_declared_slots():
    @cuda.jit("int64(boolean, boolean)", debug=True, opt=False, device=True)
    def choice(cond1, cond2):
        if cond1 and cond2:
            return 1
        return 2

    ir = choice.inspect_llvm()[choice.signatures[0]]
    assert "!DICompileUnit" in ir
    calls = [ln for ln in ir.splitlines() if 'call void @"llvm.dbg.' in ln]
    assert not [ln for ln in calls if "dbg.declare" in ln and "i1*" in ln]
    assert sum('dbg.value"(metadata i1 ' in ln for ln in calls) >= 2
