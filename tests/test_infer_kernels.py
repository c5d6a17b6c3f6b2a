"""Stage 4, type inference on real kernels through irgen: the kernel set meets the typed-IR
contract, and widening, merges and errors on real code."""

from __future__ import annotations

import pytest
from infer_helpers import F32_1D, F32_2D, _frontend, _kernel_cases, check_contract, foo, ops

from cujit import ir
from cujit.diagnostics import CompileError, TypingError, UnsupportedError
from cujit.infer import infer_types
from cujit.types import (
    Array,
    PyObject,
    RangeIter,
    boolean,
    float64,
    int32,
    int64,
)

# -- real kernels through irgen ------------------------------------------------------


@pytest.mark.parametrize("pyfunc,arg_types", _kernel_cases())
def test_kernel_set_meets_the_contract(pyfunc, arg_types):
    check_contract(infer_types(_frontend(pyfunc), arg_types))


def widening_loop(x, out):
    s = 0
    for k in range(x.shape[0]):
        s = s + x[k]
    out[0] = s


def test_real_loop_widens_like_numba():
    fn = infer_types(_frontend(widening_loop), (F32_1D, F32_1D))
    check_contract(fn)
    headers = [b for b in fn.blocks if any(isinstance(p.type, RangeIter) for p in b.params)]
    (header,) = headers
    assert float64 in [p.type for p in header.params]


def mixed_paths(flag, x, out):
    if flag:
        v = x[0]
    else:
        v = 1
    out[0] = v


def test_real_if_else_merge_unifies():
    fn = infer_types(_frontend(mixed_paths), (boolean, Array(int32, 1, "C"), Array(int32, 1, "C")))
    check_contract(fn)
    merges = [b for b in fn.blocks if b.params and b.id != fn.blocks[0].id]
    # int32 from x[0] and the int64 literal 1 unify to int64
    assert [p.type for b in merges for p in b.params] == [int64]


def returns_value(x):
    return x[0]


def test_real_return_value_error_points_at_the_return():
    with pytest.raises(CompileError, match="a kernel cannot return a value") as e:
        infer_types(_frontend(returns_value), (F32_1D,))
    assert e.value.loc.line == returns_value.__code__.co_firstlineno + 1


def bad_index(x, out):
    out[0] = x[1]


def test_real_index_count_error():
    # x[1] of a matrix is its row (a view), which cannot be stored as one element.
    with pytest.raises(TypingError, match="storing into an array of float32 needs a number") as e:
        infer_types(_frontend(bad_index), (F32_2D, F32_1D))
    assert e.value.loc.line == bad_index.__code__.co_firstlineno + 1
    assert "bad_index" not in str(e.value) or "test_infer.py" in e.value.loc.file


def uses_string(out):
    s = "abc"
    out[0] = len(s)


def test_real_string_use_is_unsupported():
    with pytest.raises(UnsupportedError, match="strings are not supported"):
        infer_types(_frontend(uses_string), (F32_1D,))


def calls_helper(out):
    out[0] = foo(1)


def test_real_unknown_call():
    with pytest.raises(UnsupportedError, match="call to unsupported function 'foo'") as e:
        infer_types(_frontend(calls_helper), (F32_1D,))
    assert e.value.loc.line == calls_helper.__code__.co_firstlineno + 1


# Compiled from text: pytest rewrites the assert statements of test modules.
_ASSERTS_SRC = """
def asserts_and_raises(x, n):
    assert n > 0, "n must be positive"
    if n > 100:
        raise ValueError("too big")
    x[0] = n
"""


def test_real_assert_and_raise_keep_their_messages():
    namespace: dict = {}
    exec(compile(_ASSERTS_SRC, "asserts.py", "exec"), namespace)  # noqa: S102
    fn = infer_types(_frontend(namespace["asserts_and_raises"]), (F32_1D, int64))
    check_contract(fn)
    raises = [b.term for b in fn.blocks if isinstance(b.term, ir.Raise)]
    assert sorted(r.message for r in raises) == ["n must be positive", "too big"]
    assert {r.exc.type for r in raises} == {PyObject(AssertionError), PyObject(ValueError)}


def maybe_set_in_loop(x, flag):
    for i in range(3):
        if flag:
            t = i
    x[0] = t


def test_real_variable_set_in_a_loop_merges_with_undef():
    fn = infer_types(_frontend(maybe_set_in_loop), (F32_1D, boolean))
    check_contract(fn)
    (undef,) = ops(fn, ir.Undef)
    assert undef.name == "t" and undef.result.type == int64


def min_of_shape(x, out):
    out[0] = min(x.shape) + max(x.shape[0], 2.5)


def test_real_min_of_a_tuple_and_max_of_mixed():
    fn = infer_types(_frontend(min_of_shape), (F32_2D, Array(float64, 1, "C")))
    check_contract(fn)
    names = [(o.name, o.result.type) for o in ops(fn, ir.Intrinsic) if o.name in ("min", "max")]
    assert names == [("min", int64), ("max", float64)]
