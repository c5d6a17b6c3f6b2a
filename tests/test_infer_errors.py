"""Stage 4, type inference: the errors it raises, at the user's line."""

from __future__ import annotations

import math

import pytest
from infer_helpers import F32_1D, B, foo, infer, op_of

from cujit import ir
from cujit.diagnostics import CompileError, TypingError, UnsupportedError
from cujit.infer import infer_types
from cujit.types import (
    PyObject,
    float64,
    int64,
    none,
)

# -- errors ---------------------------------------------------------------------------


def test_returning_a_value_is_an_error():
    b = B("x")
    b.ret(b.const(1))
    with pytest.raises(CompileError, match="a kernel cannot return a value") as e:
        infer(b, int64)
    assert e.value.loc.line == 2


def test_strings_in_computations_are_unsupported():
    b = B("x")
    b.binop("+", b.args[0], b.const("a"))
    b.ret()
    with pytest.raises(UnsupportedError, match="strings are not supported in kernels") as e:
        infer(b, int64)
    assert e.value.loc.line == 1  # the string constant itself


def test_raise_keeps_its_message():
    b = B("x")
    err = b.call(ValueError, b.const("bad input"))
    b.term(ir.Raise, exc=err)
    fn = infer(b, int64)
    term = fn.blocks[0].term
    assert isinstance(term, ir.Raise) and term.message == "bad input"
    assert term.exc.type == PyObject(ValueError)


def test_unknown_function_is_unsupported_and_named():
    b = B("x")
    b.call(foo, b.args[0])
    b.ret()
    with pytest.raises(UnsupportedError, match="call to unsupported function 'foo'") as e:
        infer(b, int64)
    assert e.value.loc.line == 2


def test_unknown_math_function_is_named_with_its_module():
    b = B("x")
    b.call(math.factorial, b.args[0])
    b.ret()
    with pytest.raises(UnsupportedError, match="'math.factorial'"):
        infer(b, float64)


def test_missing_attribute():
    b = B("x")
    b.attr(b.args[0], "flat")
    b.ret()
    with pytest.raises(TypingError, match="arrays have no attribute 'flat'"):
        infer(b, F32_1D)


def test_wrong_argument_count():
    b = B("x")
    b.ret()
    with pytest.raises(TypingError, match="takes 1 arguments but 2"):
        infer_types(b.build(), (int64, int64))


def test_unused_none_value_is_typed_none():
    b = B("x")
    c = b.const(None)
    b.ret(c)
    fn = infer(b, int64)
    assert op_of(fn, c).result.type == none
    assert fn.blocks[0].term.value is None
