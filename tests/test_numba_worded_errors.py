"""Typing errors that open with numba's words (cujit/infer/numba_text.py and the rules
that use it), list displays (infer/list_display.py) and ``np.dtype()`` in kernels
(infer/dtype_calls.py).  Each message keeps cujit's own location and explanation."""

import inspect

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import RequireLiteralValue, TypingError, UnsupportedError
from cujit.types import float32, int32, none, void

ROWS, COLS = 5, 6


def _line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _error(fn, sig, cls=TypingError):
    with pytest.raises(cls) as info:
        cuda.jit(fn, target="cpu").compile(sig)
    return info.value


def shape_from_array(a):
    s = cuda.shared.array(shape=a[0], dtype=float32)
    a[0] = s[0]


def shape_tuple_with_runtime_item(a):
    s = cuda.shared.array((1, a[0]), float32)
    a[0] = s[0, 0]


def shape_list_of_globals(a):
    s = cuda.shared.array(shape=[ROWS, COLS], dtype=float32)
    a[0] = s[0, 0]


@pytest.mark.parametrize(
    "fn,sig,call",
    [
        (shape_from_array, "void(float32[:])", "array(shape=float32, dtype=class(float32))"),
        (shape_from_array, "void(int32[:])", "array(shape=int32, dtype=class(float32))"),
        (
            shape_tuple_with_runtime_item,
            "void(int32[:])",
            "array(Tuple(Literal[int](1), int32), class(float32))",
        ),
        (
            shape_tuple_with_runtime_item,
            "void(float32[:, :])",
            "array(Tuple(Literal[int](1), array(float32, 1d, A)), class(float32))",
        ),
        (
            shape_list_of_globals,
            "void(float32[:])",
            "array(shape=list(int64)<iv=[5, 6]>, dtype=class(float32))",
        ),
    ],
)
def test_bad_shape_opens_with_numbas_signature(fn, sig, call):
    err = _error(fn, sig)
    assert err.message.startswith(
        "No implementation of function Function(<function shared.array>) found for "
        f"signature:\n \n >>> {call}\n \n"
    )
    assert "the shape of cuda.shared.array must be a constant integer" in err.message
    assert err.loc.file == __file__ and err.loc.line == _line_of(fn, "cuda.shared.array")


def test_list_shape_hints_at_a_tuple():
    assert "use a tuple" in _error(shape_list_of_globals, "void(float32[:])").hint


def list_of_runtime_values(a, n):
    x = [n, 2]  # noqa: F841


def list_used_as_value(a):
    x = [1, 2]
    a[0] = x[0]


def list_printed(a):
    print([1, 2])


@pytest.mark.parametrize(
    "fn,sig,at",
    [
        (list_of_runtime_values, "void(float32[:], int64)", "[n, 2]"),
        (list_used_as_value, "void(float32[:])", "[1, 2]"),
        (list_printed, "void(float32[:])", "[1, 2]"),
    ],
)
def test_other_list_displays_are_refused_at_the_display(fn, sig, at):
    err = _error(fn, sig, UnsupportedError)
    assert "list displays are not supported in kernels (use a tuple)" in err.message
    assert err.loc.line == _line_of(fn, at)


def nonliteral_grid(n):
    cuda.grid(n)


def test_grid_of_a_runtime_value_is_require_literal_value():
    err = _error(nonliteral_grid, "void(int32)", RequireLiteralValue)
    assert isinstance(err, TypingError)
    assert err.message.startswith("RequireLiteralValue: int32: cuda.grid(ndim)")


def vote_with(mask, pred, out):
    out[0] = cuda.all_sync(mask[0], pred[0])


@pytest.mark.parametrize("mask", ["float32", "boolean", "float64"])
def test_vote_mask_must_be_integer(mask):
    err = _error(vote_with, f"void({mask}[:], int32[:], int32[:])")
    assert err.message.startswith("Mask type must be an integer. Got ")


def test_vote_predicate_must_be_integer_or_bool():
    err = _error(vote_with, "void(uint32[:], float32[:], int32[:])")
    assert err.message == (
        "Predicate must be an integer or boolean. Got float32 (cuda.all_sync's predicate)"
    )


@cuda.jit(device=True)
def _calls_unknown(x):
    return floor(x)  # noqa: F821


def calls_device_with_unknown_name(a):
    a[0] = _calls_unknown(a[0])


def test_unknown_name_in_device_function():
    err = _error(calls_device_with_unknown_name, "void(float32[:])")
    text = str(err)
    assert err.message == "NameError: name 'floor' is not defined"
    assert "resolving callee type: type(CUDADispatcher(<function _calls_unknown>))" in text


def object_dtype(a):
    arr = cuda.shared.array(10, dtype=np.dtype("O"))
    a[0] = arr[0]


def test_unsupported_dtype_names_the_variable():
    err = _error(object_dtype, "void(float32[:])")
    assert err.message.startswith("Cannot infer the type of variable 'arr': ")
    assert "not dtype('O')" in err.message


def dtype_object_as_dtype(a):
    arr = cuda.local.array(3, dtype=np.dtype("int32"))
    for i in range(3):
        arr[i] = i * 7 + 1
    a[0] = arr[0] + arr[1] + arr[2]


def test_np_dtype_in_a_kernel_is_a_constant():
    out = np.full(1, -1, dtype=np.int32)
    cuda.jit(dtype_object_as_dtype, target="cpu")[1, 1](out)
    assert out[0] == 1 + 8 + 15


def test_void_is_none():
    assert void == none and hash(void) == hash(none)
    assert str(void) == "void" and str(none) == "none"
    assert void(int32) == none(int32)


def test_numba_jit_with_explicit_signatures_is_refused():
    numba = pytest.importorskip("numba")

    @numba.jit("(i4, i4)")
    def add(a, b):
        return a + b

    def kernel_fn(a):
        a[0] = add(a[0], 1)

    err = _error(kernel_fn, "void(int32[:])")
    assert err.message.startswith(
        "Untyped global name 'add': using cpu function on device but its compilation is disabled"
    )
    assert err.loc.line == _line_of(kernel_fn, "add(a[0], 1)")


def test_numba_jit_without_signatures_still_compiles():
    numba = pytest.importorskip("numba")

    @numba.jit
    def add(a, b):
        return a + b

    def kernel_fn(a):
        a[0] = add(a[0], 5)

    out = np.full(1, 37, dtype=np.int32)
    cuda.jit(kernel_fn, target="cpu")[1, 1](out)
    assert out[0] == 42
