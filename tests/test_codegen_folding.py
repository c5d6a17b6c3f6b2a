"""Stage 6's builder folds a member read from an ``insertvalue`` chain that put it there
(``codegen/folding.py``); reads it cannot answer still emit ``extractvalue``; chains
nothing reads are dropped before the module is printed."""

from llvmlite import ir as ll

import cujit.codegen.module as codegen_module
from cujit import cuda, pipeline
from cujit.codegen.folding import FoldingBuilder, drop_unread_chains, inserted_member
from cujit.options import Options
from cujit.types import float32

I64, F32 = ll.IntType(64), ll.FloatType()
INNER = ll.LiteralStructType([I64, I64])
OUTER = ll.LiteralStructType([F32, INNER, ll.ArrayType(I64, 2)])


def _function(*params):
    module = ll.Module()
    fn = ll.Function(module, ll.FunctionType(ll.VoidType(), list(params)), "f")
    return fn, FoldingBuilder(fn.append_basic_block("entry"))


def test_a_member_inserted_by_the_chain_is_the_inserted_value():
    fn, b = _function(F32, I64, I64)
    x, n, m = fn.args
    agg = b.insert_value(ll.Constant(OUTER, None), x, 0)
    agg = b.insert_value(agg, n, [2, 0])
    agg = b.insert_value(agg, m, [2, 1])
    assert b.extract_value(agg, 0) is x
    assert b.extract_value(agg, [2, 0]) is n
    assert b.extract_value(agg, (2, 1)) is m
    assert "extractvalue" not in str(fn)


def test_a_read_inside_a_member_inserted_whole_reads_on_in_it():
    fn, b = _function(I64, I64)
    lo, hi = fn.args
    inner = b.insert_value(b.insert_value(ll.Constant(INNER, None), lo, 0), hi, 1)
    outer = b.insert_value(ll.Constant(OUTER, None), inner, 1)
    assert b.extract_value(outer, [1, 1]) is hi
    assert b.extract_value(outer, 1) is inner


def test_reads_the_chain_cannot_answer_emit_an_extractvalue():
    fn, b = _function(OUTER, I64)
    param, n = fn.args
    assert isinstance(b.extract_value(param, 0), ll.ExtractValue)  # not built here
    agg = b.insert_value(param, n, [2, 0])
    assert isinstance(b.extract_value(agg, [2, 1]), ll.ExtractValue)  # came with param
    # a larger member read after part of it was overwritten: the chain has no one value
    assert inserted_member(agg, (2,)) is None
    assert isinstance(b.extract_value(agg, 2), ll.ExtractValue)
    assert str(fn).count("extractvalue") == 3


def _scale(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = 2.0 * x[i]


def test_a_kernel_reads_its_array_arguments_without_extractvalue():
    result = pipeline.compile_kernel(
        _scale, (float32[::1], float32[::1]), Options(arch=(9, 0)), stop_after="llvm"
    )
    llvm = result.outputs["llvm"]
    assert "extractvalue" not in llvm
    assert '%"x.shape0"' in llvm and '%"x.data"' in llvm  # read straight from the parameters


def _chain(b, *members):
    agg = ll.Constant(OUTER, None)
    for value, path in members:
        agg = b.insert_value(agg, value, path)
    return agg


def test_an_unread_chain_is_dropped_and_a_read_one_kept():
    fn, b = _function(F32, I64, OUTER.as_pointer())
    x, n, slot = fn.args
    _chain(b, (x, 0), (n, [2, 0]))  # read by nothing
    kept = _chain(b, (x, 0), (n, [2, 1]))
    b.store(kept, slot)
    b.ret_void()
    drop_unread_chains(fn.module)
    text = str(fn)
    assert text.count("insertvalue") == 2  # the stored chain, both links
    assert 'i64 %".2", 2, 1' in text and "2, 0" not in text


def test_a_chain_read_by_a_phi_or_through_metadata_is_kept():
    fn, b = _function(F32, I64)
    x, n = fn.args
    entry = b.block
    by_phi = _chain(b, (x, 0))
    by_metadata = _chain(b, (n, [2, 0]))
    use = fn.module.add_metadata([by_metadata])
    hook = ll.Function(fn.module, ll.FunctionType(ll.VoidType(), [ll.MetaDataType()]), "hook")
    b.call(hook, [use])
    after = fn.append_basic_block("after")
    b.branch(after)
    b.position_at_end(after)
    phi = b.phi(OUTER)
    phi.add_incoming(by_phi, entry)
    b.ret_void()
    drop_unread_chains(fn.module)
    assert str(fn).count("insertvalue") == 2


def test_dropping_the_chains_changes_no_ptx(monkeypatch):
    sig, opts = (float32[::1], float32[::1]), Options(arch=(9, 0))
    dropped = pipeline.compile_kernel(_scale, sig, opts)
    assert "insertvalue" not in dropped.outputs["llvm"]
    monkeypatch.setattr(codegen_module, "drop_unread_chains", lambda module: None)
    kept = pipeline.compile_kernel(_scale, sig, opts)
    assert kept.outputs["llvm"].count("insertvalue") == 6  # two arrays, three members each
    assert kept.outputs["ptx"] == dropped.outputs["ptx"]
