"""``passes.inline``: device functions inlined into the kernel's typed IR.

The CPU target inlines the device functions that wait (barriers, warp functions: the
end-to-end tests are tests/test_cpu_device_sync.py).  Here the pass is applied to every
call, and the inlined kernel must compute what the kernel with calls computes.
"""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda, ir
from cujit.options import Options
from cujit.passes.inline import inline_calls
from cujit.pipeline import compile_kernel
from cujit.targets.cpu import compile_cpu_kernel
from cujit.types import typeof


@cuda.jit(device=True)
def clamp_twice(v, hi):
    if v > hi:
        return hi * 2.0
    return v * 2.0


@cuda.jit(device=True)
def scaled(v, hi):
    return clamp_twice(v, hi) + clamp_twice(-v, hi)  # two calls of one callee


@cuda.jit(device=True)
def mark_small(a, i):
    if i >= 3:
        return  # a bare return from a function that returns nothing
    a[i] = -1.0


@cuda.jit(device=True)
def checked_half(v):
    if v < 0:
        raise ValueError("negative")
    return v / 2


def calls(x, out, flags):
    i = cuda.grid(1)
    if i < x.size:
        acc = 0.0
        for k in range(3):  # a call inside a loop
            acc += scaled(x[i] + k, 1.5)
        out[i] = acc
        mark_small(flags, i)


def raising(x, out, after):
    i = cuda.grid(1)
    out[i] = checked_half(x[i])
    after[i] = 7.0  # reached by every thread: a device function's raise returns (release)


def typed(fn, args, debug=False):
    return compile_kernel(
        fn,
        tuple(typeof(a) for a in args),
        Options(target="cpu", verify=True, debug=debug),
        stop_after="passes",
    ).outputs["passes"]


def run(fn_ir, args, grid, block, debug=False):
    kernel = compile_cpu_kernel(fn_ir, Options(target="cpu", debug=debug))
    kernel.launch((grid, 1, 1), (block, 1, 1), 0, tuple(p.type for p in fn_ir.args), args)


def call_ops(fn: ir.Function) -> list[ir.CallFunction]:
    return [op for op in fn.all_ops() if isinstance(op, ir.CallFunction)]


def fresh_args(seed=0):
    x = np.random.default_rng(seed).normal(size=40)
    return x, np.full(40, np.nan), np.zeros(40)


def test_inlined_kernel_computes_what_the_calls_did():
    args = fresh_args()
    fn = typed(calls, args)
    assert {op.callee for op in call_ops(fn)} == {f.name for f in fn.callees}
    inlined = inline_calls(fn, lambda callee: True)
    ir.verify(inlined)
    assert call_ops(inlined) == []  # the callees' own calls were inlined too
    want = fresh_args()
    run(fn, want, 1, 64)
    got = fresh_args()
    run(inlined, got, 1, 64)
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[2], want[2])

    def clamp_twice_ref(v):
        return np.where(v > 1.5, 3.0, 2.0 * v)

    x = want[0]
    ref = sum(clamp_twice_ref(x + k) + clamp_twice_ref(-(x + k)) for k in range(3))
    np.testing.assert_allclose(want[1], ref, rtol=1e-12)
    assert (want[2][:3] == -1.0).all() and (want[2][3:] == 0.0).all()


def test_only_the_wanted_callee_is_inlined():
    fn = typed(calls, fresh_args())
    inlined = inline_calls(fn, lambda callee: callee.name.startswith("mark_small"))
    ir.verify(inlined)
    left = {op.callee for op in call_ops(inlined)}
    assert left and not any(name.startswith("mark_small") for name in left)
    assert inline_calls(fn, lambda callee: False) is fn  # nothing to do: the same function


@pytest.mark.parametrize("debug", [False, True])
def test_a_raise_in_an_inlined_callee_keeps_its_meaning(debug):
    x = np.array([4.0, -2.0, 6.0, 8.0])
    fn = typed(raising, (x, np.zeros(4), np.zeros(4)), debug=debug)
    inlined = inline_calls(fn, lambda callee: True, keep_raise=debug)
    ir.verify(inlined)
    assert any(isinstance(b.term, ir.Raise) for b in inlined.blocks) == debug
    out, after = np.full(4, np.nan), np.zeros(4)
    if not debug:  # release: the raising thread goes on with an undefined value
        run(inlined, (x, out, after), 1, 4)
        assert (after == 7.0).all()
        np.testing.assert_array_equal(out[[0, 2, 3]], [2.0, 3.0, 4.0])
    else:  # debug: reported at the callee's line, as the call would report it
        with pytest.raises(ValueError, match="negative"):
            run(inlined, (x, out, after), 1, 4, debug=True)
