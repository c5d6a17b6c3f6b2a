"""Stage 6 on hand-built typed IR: control flow (block parameters become phis, loops,
branches, unreachable blocks, raise)."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from codegen_helpers import (
    FunctionBuilder,
    arr,
    host_compile,
    nvvm_text,
    to_ptx,
)

from cujit import ir
from cujit.types import (
    PyObject,
    RangeIter,
    RangeType,
    boolean,
    float32,
    int32,
    int64,
    none,
)

# == control flow: block params become phis ===========================================


def range_sum(step_is_arg: bool = True) -> ir.Function:
    """``acc = 0; for k in range(start, stop, step): acc += k * k; out[0] = acc``."""
    fb = FunctionBuilder("rsum", start=int64, stop=int64, step=int64, out=arr(int64))
    start, stop, step, out = fb.args
    rng = fb.intrinsic("range", (start, stop, step), RangeType(int64))
    it0 = fb.get_iter(rng)
    head, (it, acc) = fb.block(RangeIter(int64), int64)
    body, _ = fb.block()
    done, (total,) = fb.block(int64)
    fb.jump(head, it0, fb.const(int64, 0))
    fb.enter(head)
    fb.branch(fb.iter_valid(it), body, done, else_args=(acc,))
    fb.enter(body)
    k = fb.iter_value(it)
    fb.jump(head, fb.iter_next(it), fb.binop("+", acc, fb.binop("*", k, k)))
    fb.enter(done)
    fb.setitem(out, fb.const(int64, 0), total)
    fb.ret()
    return fb.finish()


def test_loop_phis_llvm_ir_and_ptx():
    text = nvvm_text(range_sum())
    # The iterator is carried as one phi per field, the accumulator as its own.
    for field in (0, 1, 2):  # next, stop, step
        assert re.search(
            rf'%"v\d+\.{field}" = phi  i64 \[%"[.\w]+", %"block0"\], '
            r'\[%"[.\w]+", %"block2"\]',
            text,
        )
    assert len(re.findall(r"= phi  i64", text)) >= 5  # next, stop, step, acc, total
    assert "add nsw i64" in text  # the range advance
    to_ptx(range_sum())


@pytest.mark.parametrize(
    "start,stop,step",
    [
        (0, 10, 1),
        (3, 20, 4),
        (10, 0, -1),
        (10, -7, -3),
        (5, 5, 1),
        (5, 0, 1),
        (0, 5, -1),
        (0, 5, 0),
        (-4, 4, 3),
    ],
)
def test_range_loop_on_host(start, stop, step):
    out = np.full(1, -1, np.int64)
    host_compile(range_sum())(start, stop, step, out)
    expect = sum(k * k for k in range(start, stop, step)) if step else 0
    assert out[0] == expect


def test_branch_to_one_block_with_different_args():
    """``out[0] = 1 if c else 2`` written as two edges into one block."""
    fb = FunctionBuilder("same", c=boolean, out=arr(int32))
    c, out = fb.args
    join, (v,) = fb.block(int32)
    fb.branch(c, join, join, then_args=(fb.const(int32, 1),), else_args=(fb.const(int32, 2),))
    fb.enter(join)
    fb.setitem(out, fb.const(int64, 0), v)
    fb.ret()
    fn = fb.finish()
    to_ptx(fn)
    run = host_compile(fn)
    out = np.zeros(1, np.int32)
    run(True, out)
    assert out[0] == 1
    run(False, out)
    assert out[0] == 2


def test_unreachable_blocks_compile_time_values_and_raise():
    fb = FunctionBuilder("odd", x=arr(float32))
    (x,) = fb.args
    fb.const(PyObject(math), math)  # a module: no machine value, no code
    fb.const(none, None)
    u = fb.undef(float32)
    dead, _ = fb.block()
    fail, _ = fb.block()
    ok, _ = fb.block()
    fb.branch(
        fb.compare("<", fb.intrinsic("array.size", (x,), int64), fb.const(int64, 0)), fail, ok
    )
    fb.enter(fail)
    fb.raise_()
    fb.enter(ok)
    fb.setitem(x, fb.const(int64, -1), fb.const(float32, 2.5))
    fb.ret()
    fb.enter(dead)  # no edge reaches it: not lowered
    fb.setitem(x, fb.const(int64, 0), u)
    fb.ret()
    fn = fb.finish()
    text = nvvm_text(fn)
    assert "block1" not in text and "undef" not in text.split("block0")[-1]
    assert text.count("ret void") == 2  # Raise ends the thread
    to_ptx(fn)
    a = np.zeros(3, np.float32)
    host_compile(fn)(a)
    assert a.tolist() == [0, 0, 2.5]  # a[-1] counts from the end
