"""Full debug info's variables (``jit(debug=True)``, codegen/debugvars.py, debugtypes.py):
how each Python variable is stored and described in the LLVM module, checked on the
LLVM text of small kernels, and that libNVVM and nvJitLink accept the result."""

from __future__ import annotations

import re

import numpy as np
import pytest

from cujit import cuda
from cujit.options import Options
from cujit.pipeline import compile_kernel
from cujit.types import boolean, complex64, float32, int32, int64

DEBUG = Options(debug=True, verify=True)


def llvm_of(fn, arg_types, stop_after="llvm") -> str:
    return compile_kernel(fn, arg_types, DEBUG, stop_after=stop_after).outputs["llvm"]


def variable(llvm: str, name: str) -> tuple[str, str]:
    """(metadata id, the line) of the DILocalVariable named ``name``: exactly one."""
    found = re.findall(rf'^!(\d+) = (!DILocalVariable\([^\n]*name: "{name}"[^\n]*)$', llvm, re.M)
    assert len(found) == 1, (name, found)
    return found[0]


def metadata(llvm: str, md: str) -> str:
    line = re.search(rf"^!{md} = (.*)$", llvm, re.M)
    assert line, md
    return line.group(1)


def line_of(fn, text: str) -> int:
    import inspect

    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, ln in enumerate(lines) if text in ln)


def locals_and_param(x, y):
    z1 = x  # noqa: F841
    z2 = 100  # noqa: F841
    z3 = x == y  # noqa: F841  (unread: debug builds keep it)


def test_parameters_are_declared_slots_and_locals_are_values():
    llvm = llvm_of(locals_and_param, (int32, int32))
    for argno, name in ((1, "x"), (2, "y")):
        md, text = variable(llvm, name)
        assert f"arg: {argno}," in text
        # The slot x.1 (x is the LLVM argument) is declared, and the body reads it.
        assert re.search(
            rf'llvm\.dbg\.declare"\(metadata i32\* %"{name}\.1", metadata !{md}\b', llvm
        )
        assert re.search(rf'= load i32, i32\* %"{name}\.1"', llvm)
    for name, value in (("z1", r"i32 %\S+"), ("z2", "i64 100"), ("z3", r"i1 %\S+")):
        md, text = variable(llvm, name)
        assert "arg: 0," in text, text
        assert re.search(rf'llvm\.dbg\.value"\(metadata {value}, metadata !{md}\b', llvm), name
        assert not re.search(rf'llvm\.dbg\.declare"\([^)]*metadata !{md}\b', llvm), name
    # z3's type is the boolean base type.
    z3_type = re.search(r"type: !(\d+)", variable(llvm, "z3")[1]).group(1)
    assert "DW_ATE_boolean" in metadata(llvm, z3_type)


def merged(x):
    if x > 0:
        c = x > 10
    else:
        c = True
    if c:
        pass


def test_a_merged_variable_goes_through_memory_stored_on_each_edge():
    llvm = llvm_of(merged, (int64,))
    # Three versions, three slots: the then-branch's c, the else-branch's c.1, the
    # merge c.2; each edge stores into c.2 at its own line, and the merge loads it.
    for slot in ("c", "c.1", "c.2"):
        assert re.search(rf'%"{slot}" = alloca i1', llvm), slot
    assert re.search(r'store i1 true, i1\* %"c\.1"', llvm)
    stores = re.findall(r'store i1 (\S+), i1\* %"c\.2", !dbg !(\d+)', llvm)
    assert len(stores) == 2 and "true" in {v for v, _ in stores}, stores
    lines = {int(re.search(r"line: (\d+)", metadata(llvm, d)).group(1)) for _, d in stores}
    assert lines == {line_of(merged, "c = x > 10"), line_of(merged, "c = True")}
    load = re.search(r'(%\S+) = load i1, i1\* %"c\.2"', llvm)
    md, _ = variable(llvm, "c")
    assert re.search(
        rf"dbg\.value\"\(metadata i1 {re.escape(load.group(1))}, metadata !{md}\b", llvm
    )
    assert " phi " not in llvm  # no phi left for c


def retyped(x):
    v = 100  # noqa: F841
    v = 2.5  # noqa: F841
    v = True  # noqa: F841


def test_a_variable_of_several_types_is_a_union():
    llvm = llvm_of(retyped, (int32,))
    _, text = variable(llvm, "v")
    union = metadata(llvm, re.search(r"type: !(\d+)", text).group(1))
    assert union.startswith("distinct !DICompositeType(") and "DW_TAG_union_type" in union
    assert "size: 64," in union  # its largest member, float64
    elements = metadata(llvm, re.search(r"elements: !(\d+)", union).group(1))
    members = [metadata(llvm, m) for m in re.findall(r"!(\d+)", elements)]
    names = [re.search(r'name: "(\w+)"', m).group(1) for m in members]
    assert names == ["_bool", "_float64", "_int64"]
    assert all("offset" not in m for m in members)  # every member at the union's start


def arrays(x):
    shared = cuda.shared.array(16, np.float32)
    local = cuda.local.array((2, 3), np.int32)
    shared[0] = x[0]
    local[1, 2] = 7
    x[1] = shared[0] + local[1, 2]


def test_arrays_are_described_as_numbas_array_struct():
    llvm = llvm_of(arrays, (float32[::1],))
    seen = set()
    for name, ndim, element in (
        ("x", 1, "float32"),
        ("shared", 1, "float32"),
        ("local", 2, "int32"),
    ):
        _, text = variable(llvm, name)
        struct_id = re.search(r"type: !(\d+)", text).group(1)
        assert struct_id not in seen  # each array variable has its own type node
        seen.add(struct_id)
        struct = metadata(llvm, struct_id)
        assert "DW_TAG_structure_type" in struct and f"size: {64 * (5 + 2 * ndim)}," in struct
        elements = metadata(llvm, re.search(r"elements: !(\d+)", struct).group(1))
        members = [metadata(llvm, m) for m in re.findall(r"!(\d+)", elements)]
        names = [re.search(r'name: "(\w+)"', m).group(1) for m in members]
        assert names == ["meminfo", "parent", "nitems", "itemsize", "data", "shape", "strides"]
        data_ptr = metadata(llvm, re.search(r"baseType: !(\d+)", members[4]).group(1))
        assert "DW_TAG_pointer_type" in data_ptr and "dwarfAddressSpace" not in data_ptr
        pointee = metadata(llvm, re.search(r"baseType: !(\d+)", data_ptr).group(1))
        assert f'name: "{element}"' in pointee
        # The slot holds that struct (7 fields) and is declared.
        assert re.search(rf'%"{name}(\.1)?" = alloca {{i8\*, i8\*, i64, i64, ', llvm), name


def test_the_described_array_struct_holds_the_arrays_values():
    # nitems, itemsize and strides as numba's struct has them, for a C array (2, 3)
    # of int32: 6 items of 4 bytes, strides (12, 4); computed, then stored.
    llvm = llvm_of(arrays, (float32[::1],))
    assert "insertvalue {i8*, i8*, i64, i64, i32*, [2 x i64], [2 x i64]}" in llvm
    assert re.search(r"insertvalue \{i8\*, i8\*, i64, i64, i32\*.*i64 4, 3", llvm)


def complex_param(a, out):
    out[0] = a.real


def test_complex_is_numbas_struct_of_its_llvm_parts():
    llvm = llvm_of(complex_param, (complex64, float32[::1]))
    _, text = variable(llvm, "a")
    struct = metadata(llvm, re.search(r"type: !(\d+)", text).group(1))
    assert (
        'name: "complex64 ({float, float})"' in struct and 'identifier: "{float, float}"' in struct
    )
    elements = metadata(llvm, re.search(r"elements: !(\d+)", struct).group(1))
    members = [metadata(llvm, m) for m in re.findall(r"!(\d+)", elements)]
    assert [re.search(r'name: "(\w+)"', m).group(1) for m in members] == ["real", "imag"]
    assert "offset: 32," in members[1]


def grid_handle(x):
    grid = cuda.cg.this_grid()  # noqa: F841


def test_the_grid_group_is_described_as_a_handle_without_location():
    llvm = llvm_of(grid_handle, (int32,))
    md, text = variable(llvm, "grid")
    gtype = metadata(llvm, re.search(r"type: !(\d+)", text).group(1))
    assert gtype == '!DIBasicType(encoding: DW_ATE_unsigned, name: "GridGroup", size: 64)'
    assert re.search(rf'dbg\.value"\(metadata i64 undef, metadata !{md}\b', llvm)


def test_the_compile_unit_names_numbas_producer():
    llvm = llvm_of(grid_handle, (int32,))
    unit = re.search(r"distinct !DICompileUnit\(.*\)", llvm).group(0)
    assert 'producer: "clang (Numba)"' in unit and "emissionKind: FullDebug" in unit


def test_nvvm_and_the_linker_accept_it():
    for fn, types in (
        (locals_and_param, (int32, int32)),
        (merged, (int64,)),
        (retyped, (int32,)),
        (arrays, (float32[::1],)),
        (complex_param, (complex64, float32[::1])),
        (grid_handle, (boolean,)),
    ):
        r = compile_kernel(fn, types, DEBUG)
        assert re.search(r"\.section\s+\.debug_info", r.ptx), fn.__name__
        assert r.cubin[:4] == b"\x7fELF"


# -- the lowering for debuggers computes what the kernel computes -------------------


def loops_and_merges(n, x, out):
    bar = 0
    for i in range(n):
        if i == 5:
            continue
        bar = bar + i
    acc = 0.0
    j = 0
    while j < n:
        acc += x[j % x.size] * 0.5
        j += 1
    flag = n > 3
    if flag:
        v = 1
    else:
        v = 2.5
    out[0] = bar
    out[1] = acc
    out[2] = v


def reference(n, x):
    bar = sum(i for i in range(n) if i != 5)
    acc = sum(x[j % x.size] * 0.5 for j in range(n))
    return [bar, acc, 1 if n > 3 else 2.5]


def test_cpu_target_runs_the_debug_info_lowering_correctly(monkeypatch):
    # The CPU target lowers without debug info; run it with full debug info (slots,
    # merged values through memory) to check that lowering against Python.
    import cujit.codegen

    lowered = []
    original = cujit.codegen.lower_to_llvm

    def with_debug_info(fn, target, **kw):
        module = original(fn, target, **{**kw, "debug_info": "full"})
        lowered.append(str(module))
        return module

    monkeypatch.setattr(cujit.codegen, "lower_to_llvm", with_debug_info)
    x = np.random.default_rng(3).uniform(1.0, 2.0, 7)
    k = cuda.jit(loops_and_merges, target="cpu", debug=True)
    for n in (2, 9, 13):
        out = np.full(3, -99.0)
        k[1, 1](n, x, out)
        np.testing.assert_allclose(out, reference(n, x), rtol=1e-12)
    assert lowered and all("llvm.dbg.value" in m for m in lowered)


@pytest.mark.gpu
def test_gpu_debug_kernel_computes_with_its_debug_info():
    x = np.random.default_rng(4).uniform(1.0, 2.0, 7)
    k = cuda.jit(loops_and_merges, debug=True, opt=False)
    for n in (2, 9, 13):
        out = np.full(3, -99.0)
        k[1, 1](n, x, out)
        np.testing.assert_allclose(out, reference(n, x), rtol=1e-12)


def test_a_bool_parameter_is_described_by_its_value_not_an_i1_slot():
    # libNVVM of CUDA 13.0 (the H200 machine's) dies with SIGSEGV on llvm.dbg.declare of
    # an i1 slot: bool parameters get llvm.dbg.value, and keep their DILocalVariable.
    from cujit import cuda, types

    sig = (types.boolean, types.boolean)

    @cuda.jit(sig, debug=True, opt=False, target="cuda")
    def both(flag1, flag2):
        result = flag1 and flag2  # noqa: F841

    llvm = both.inspect_llvm(sig)
    assert 'dbg.declare"(metadata i1*' not in llvm
    assert 'dbg.value"(metadata i1 ' in llvm
    for k, name in ((1, "flag1"), (2, "flag2")):
        assert llvm.count(f"!DILocalVariable(arg: {k}, ") == 1 and f'name: "{name}"' in llvm
