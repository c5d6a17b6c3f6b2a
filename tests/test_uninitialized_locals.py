"""Local variables read where no assignment reaches them (cujit/infer/uninit.py): numba
compiles such reads, giving the variable its assignments' type, and cujit warns at the
read; the paths that do assign compute Python's values."""

import warnings

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import TypingError
from cujit.infer.uninit import UninitializedVariableWarning


def maybe_unset(result, n):
    if n:
        if n > 0:
            c = 7
        result[0] = c
    else:
        c += 1  # no assignment reaches this read
        result[0] = c


def _compile_collecting(fn, sig):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kernel = cuda.jit(fn, target="cpu")
        kernel.compile(sig)
    return kernel, [w for w in caught if issubclass(w.category, UninitializedVariableWarning)]


def test_read_with_no_assignment_compiles_and_warns_at_its_line():
    kernel, caught = _compile_collecting(maybe_unset, "void(int64[:], int64)")
    assert len(caught) == 1
    warning = caught[0]
    assert "Detected uninitialized variable c" in str(warning.message)
    assert warning.filename == __file__
    first = maybe_unset.__code__.co_firstlineno
    assert warning.lineno == first + 6  # the ``c += 1`` line, not one of cujit's


def test_assigned_path_computes_pythons_value():
    result = np.full(1, -5, dtype=np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UninitializedVariableWarning)
        kernel = cuda.jit(maybe_unset, target="cpu")
        kernel[1, 1](result, 3)
    expect = np.full(1, -5, dtype=np.int64)
    maybe_unset(expect, 3)
    assert result[0] == expect[0] == 7


def test_merge_with_an_assignment_does_not_warn():
    def kernel_fn(out, n):
        if n > 0:
            v = 2.5
        out[0] = v  # assigned on one path: the merge takes float64

    _, caught = _compile_collecting(kernel_fn, "void(float64[:], int64)")
    assert caught == []


@cuda.jit(device=True)
def _returns_on_some_paths(a, b):
    if a:
        first = b
        return first * 2
    else:
        if first:  # never assigned on this path
            return b
    return None


def test_device_function_with_unset_reads_returns_pythons_values():
    def caller(out, a, b):
        r = _returns_on_some_paths(a, b)
        out[0] = -1 if r is None else r

    out = np.zeros(1, dtype=np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UninitializedVariableWarning)
        kernel = cuda.jit(caller, target="cpu")
        kernel[1, 1](out, 3, 21)
    assert out[0] == 42  # 21 * 2: the path that assigns


def test_a_variable_typed_nowhere_is_still_an_error():
    def kernel_fn(out):
        out[0] = w  # noqa: F821
        return
        w = 1.0  # noqa: F841  # unreachable: nothing gives ``w`` a type

    with pytest.raises(TypingError, match="local variable 'w' may be used before"):
        cuda.jit(kernel_fn, target="cpu").compile("void(float64[:])")
