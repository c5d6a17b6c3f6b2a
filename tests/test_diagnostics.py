"""Diagnostics (testing layer 6): bad kernels and bad launches, each pinned to its
exact message and ``line:col``, and neither the message nor the traceback the user
sees shows cujit's own files.

A compile case marks its offending line with ``# <-`` and names the text the caret
must start at (``at``): the expected column is where that text starts on the line.
"""

from __future__ import annotations

import datetime
import fractions
import inspect
import math
import os
import sys
import traceback

import numpy as np
import pytest

import cujit
from cujit import cuda, float32
from cujit.diagnostics import (
    CompileError,
    InternalCompilerError,
    KernelReturnError,
    LaunchError,
    LaunchTypeError,
    LaunchValueError,
    NoGPUError,
    TypingError,
    UnsupportedError,
)

CUJIT_SRC = os.path.dirname(os.path.abspath(cujit.__file__)) + os.sep


def marked_line(fn) -> int:
    """The line of ``fn`` that carries the ``# <-`` marker."""
    lines, first = inspect.getsourcelines(fn)
    for offset, text in enumerate(lines):
        if "# <-" in text:
            return first + offset
    raise AssertionError("no marker")


def uses_try(x):
    try:  # <-
        x[0] = 1.0
    except Exception:  # noqa: BLE001, S110
        pass


def uses_generator(x):
    yield x[0]  # <-


def uses_string(x):
    s = "text"  # <-
    x[0] = len(s)


def calls_unknown(x):
    x[0] = sorted(x)  # <-


def dynamic_shape(x, n):
    buf = cuda.shared.array(n, float32)  # <-
    buf[0] = x[0]
    x[0] = buf[0]


def undefined_name(x):
    x[0] = not_defined_anywhere  # noqa: F821  # <-


def indexes_scalar(x, a):
    x[0] = a[0]  # <-


def three_indices(x):
    x[0, 0, 0] = 1.0  # <-


CASES = [
    (uses_try, "void(float32[:])", "try"),
    (uses_generator, "void(float32[:])", "generator"),
    (uses_string, "void(float32[:])", "string"),
    (calls_unknown, "void(float32[:])", "sorted"),
    (dynamic_shape, "void(float32[:], int64)", "constant"),
    (undefined_name, "void(float32[:])", "not_defined_anywhere"),
    (indexes_scalar, "void(float32[:], float32)", "index"),
    (three_indices, "void(float32[:, :])", "ind"),
]


@pytest.mark.parametrize("fn,sig,words", CASES, ids=[c[0].__name__ for c in CASES])
def test_error_points_at_user_line(fn, sig, words):
    with pytest.raises(CompileError) as info:
        cuda.compile_ptx(fn, sig)
    err = info.value
    line = marked_line(fn)
    assert err.loc is not None and err.loc.line == line, str(err)
    text = str(err)
    assert f"{__file__}:{line}:" in text.splitlines()[0]
    assert words.lower() in text.lower()
    source = inspect.getsourcelines(fn)[0][line - fn.__code__.co_firstlineno].strip()
    assert source in text and "^" in text
    assert "cujit/" not in text.replace(__file__, "")


# -- the traceback the user sees ---------------------------------------------------


def shown_cujit_frames(exc: BaseException) -> list[tuple[str, str]]:
    """(file name, function) of each frame inside cujit that the traceback shows."""
    frames = traceback.extract_tb(exc.__traceback__)
    return [
        (os.path.basename(f.filename), f.name)
        for f in frames
        if os.path.abspath(f.filename).startswith(CUJIT_SRC)
    ]


def assert_user_facing(exc: BaseException) -> None:
    """No cujit file in the message; the traceback holds the user's frames only (the
    API boundary re-raises with a bare ``raise``, which lists no frame of its own)."""
    assert CUJIT_SRC not in str(exc)
    assert "cujit/" not in str(exc).replace(__file__, "")
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if os.path.abspath(f.filename).startswith(CUJIT_SRC)
    ]
    assert frames == [], shown_cujit_frames(exc)
    text = "".join(traceback.format_exception(exc))
    assert exc.__cause__ is None and exc.__suppress_context__
    assert CUJIT_SRC not in text, text


# -- bad kernels ---------------------------------------------------------------------
# Each: the kernel, its signature, the error class, the message, the text the caret
# starts at, and the hint (None: no hint line).


def too_many_indices(x):
    x[0, 1] = 1.0  # <-


def adds_tuple(x):
    y = x + (1, 2)  # <-
    x[0] = y


def loop_cannot_unify(x, y):
    v = 0
    for _ in range(3):
        v = x  # <-
    y[0] = v


def sqrt_of_string(x):
    x[0] = math.sqrt("x")  # <-


def sqrt_of_array(x):
    x[0] = math.sqrt(x)  # <-


def sqrt_two_args(x):
    x[0] = math.sqrt(1.0, 2.0)  # <-


def sqrt_keyword(x):
    x[0] = math.sqrt(x=1.0)  # <-


def grid_of_four(x):
    i = cuda.grid(4)  # <-
    x[0] = i


def returns_value(x):
    return x[0]  # <-


def uses_with(x):
    with open("f"):  # <-
        x[0] = 1.0


def uses_list(x):
    values = [1, 2]  # <-
    x[0] = values[0]


def uses_dict(x):
    d = {}  # <-
    x[0] = len(d)


GLOBAL_COUNTER = 0


def stores_global(x):
    global GLOBAL_COUNTER
    GLOBAL_COUNTER = 1  # <-
    x[0] = 1.0


def float_index(x):
    x[1.5] = 1.0  # <-


def unknown_array_attribute(x):
    x[0] = x.foo  # <-


def stores_tuple(x):
    x[0] = (1, 2)  # <-


def calls_numpy(x):
    x[0] = np.cumsum(x)  # <-


def stores_into_scalar(x, a):
    a[0] = 1.0  # <-
    x[0] = a


def atomic_tuple_value(x):
    cuda.atomic.add(x, 0, (1, 2))  # <-


def compares_arrays(x, y):
    if x < y:  # <-
        x[0] = 1.0


def formats_string(x):
    print(f"{x[0]}")  # <-


def imports_module(x):
    import os  # noqa: F401  # <-

    x[0] = 1.0


def tuple_index_out_of_range(x):
    t = (1, 2)
    x[0] = t[5]  # <-


def tuple_index_not_constant(x, i):
    t = (x, x)  # (a run-time index into a tuple of numbers is allowed)
    x[0] = t[i][0]  # <-


def bitwise_and_float(x):
    x[0] = x[0] & 1  # <-


def shifts_float(x):
    x[0] = 1.0 << 2  # <-


def syncthreads_with_argument(x):
    cuda.syncthreads(1)  # <-
    x[0] = 1.0


def thread_index_w(x):
    x[0] = cuda.threadIdx.w  # <-


def negative_local_shape(x):
    buf = cuda.local.array(-1, float32)  # <-
    x[0] = buf[0]


def float_range(x):
    for i in range(2.5):  # <-
        x[0] = i


def loops_over_array(x):
    for v in x[0]:  # <-  (a number: arrays, tuples, zip and enumerate are iterable)
        x[0] = v


def sets_attribute(x):
    x.shape = (1,)  # <-


def deletes_name(x):
    del x  # <-


def matmul(x):
    x[0] = x @ x  # <-


def complex_literal(x):
    x[0] = 1j  # <-


def in_operator(x):
    x[0] = 1 in x  # <-


def indexes_element(x):
    x[0] = x[0][0]  # <-


def len_of_scalar(x, a):
    x[0] = len(a)  # <-


def stores_into_shape(x):
    x.shape[0] = 2  # <-


def calls_scalar(x, a):
    x[0] = a(1)  # <-


def abs_of_tuple(x):
    x[0] = abs((1, 2))  # <-


def array_as_condition(x):
    if x:  # <-
        x[0] = 1.0


def unpacks_too_many(x):
    i, j, k = cuda.grid(2)  # <-
    x[0] = i + j + k


def shape_index_out_of_range(x):
    x[0] = x.shape[2]  # <-


def float_atomic_and(x):
    cuda.atomic.and_(x, 0, 1.0)  # <-


def print_keyword(x):
    print(x[0], sep=",")  # noqa: FURB105  # <-


def negates_array(x):
    x[0] = -x  # <-


def plain_helper(v):
    return v


def calls_plain_function(x):
    x[0] = plain_helper(1.0)  # <-


def by_version(py311: str, py312: str, py313: str) -> str:
    """Where the caret starts on each CPython: these constructs' bytecode positions
    differ between versions, and stage 1 passes them on as CPython gives them."""
    return {(3, 11): py311, (3, 12): py312}.get(sys.version_info[:2], py313)


F = "array(float32, 1d, A)"
V1, V11, V2 = "void(float32[:])", "void(float32[:], float32[:])", "void(float32[:, :])"
T, U = TypingError, UnsupportedError

KERNEL_CASES = [
    (uses_try, V1, U, "'try' statements are not supported in kernels", "try", None),
    (uses_generator, V1, U, "generators ('yield') are not supported in kernels", "yield", None),
    (uses_string, V1, U, "strings are not supported in kernels", '"text"', None),
    (calls_unknown, V1, U, "call to unsupported function 'sorted'", "sorted", None),
    (
        dynamic_shape,
        "void(float32[:], int64)",
        T,
        (
            "No implementation of function Function(<function shared.array>) found for "
            "signature:\n \n >>> array(int64, class(float32))\n \n"
            "the shape of cuda.shared.array must be a constant integer or a tuple of constant "
            "integers"
        ),
        "cuda.shared",
        (
            "for a size chosen at launch, use cuda.shared.array(0, dtype) and pass the size in "
            "bytes as the launch's 4th item: kernel[grid, block, stream, nbytes]"
        ),
    ),
    (
        undefined_name,
        V1,
        T,
        "NameError: name 'not_defined_anywhere' is not defined",
        "not_defined",
        None,
    ),
    (
        indexes_scalar,
        "void(float32[:], float32)",
        T,
        "cannot index a value of type float32",
        "a[0]",
        None,
    ),
    (three_indices, V2, T, "array of 2 dimensions indexed with 3 indices", "x[0, 0, 0]", None),
    (too_many_indices, V1, T, "array of 1 dimension indexed with 2 indices", "x[0, 1]", None),
    (
        adds_tuple,
        V1,
        T,
        f"unsupported operand types for +: '{F}' and 'tuple(int64, int64)'",
        "x + (1, 2)",
        None,
    ),
    (
        loop_cannot_unify,
        V11,
        T,
        (
            f"variable 'v' holds int64 on one path and {F} on another; "
            "give it one type on every path"
        ),
        "v = x",
        None,
    ),
    (sqrt_of_string, V1, U, "strings are not supported in kernels", '"x"', None),
    (sqrt_of_array, V1, T, f"math.sqrt() needs a number, not {F}", "math.sqrt", None),
    (sqrt_two_args, V1, T, "math.sqrt() takes 1 argument (2 given)", "math.sqrt", None),
    (sqrt_keyword, V1, T, "math.sqrt() got an unexpected keyword argument 'x'", "math.sqrt", None),
    (
        grid_of_four,
        V1,
        T,
        "cuda.grid(ndim) needs ndim to be a constant 1, 2 or 3",
        "cuda.grid",
        None,
    ),
    (
        returns_value,
        V1,
        KernelReturnError,
        "a kernel cannot return a value: kernels must have void return type",
        "return",
        "write the result into an array argument instead\n"
        "guide: docs/guide/first-kernel.md#results-go-into-arrays",
    ),
    (
        uses_with,
        V1,
        U,
        "'with' statements are not supported in kernels",
        by_version("with", "with", 'open("f")'),
        None,
    ),
    (uses_list, V1, U, "list displays are not supported in kernels (use a tuple)", "[1, 2]", None),
    (uses_dict, V1, U, "dict displays are not supported in kernels", "{}", None),
    (
        stores_global,
        V1,
        U,
        "assigning to a 'global' variable is not supported in kernels",
        "GLOBAL_COUNTER",
        (
            "a kernel cannot change Python variables: write the result into an array "
            "argument (out[0] = ...) and read that array on the host after the launch"
            "\nguide: docs/guide/first-kernel.md#results-go-into-arrays"
        ),
    ),
    (float_index, V1, T, "an array index must be an integer, not float64", "x[1.5]", None),
    (
        unknown_array_attribute,
        V1,
        T,
        (
            "arrays have no attribute 'foo' in kernels (supported: "
            "shape, size, ndim, dtype, ctypes.data, sum(), prod(), min(), max(), mean(), "
            "var(), std(), all(), any(), reshape(), view(), copy())"
        ),
        "x.foo",
        None,
    ),
    (
        stores_tuple,
        V1,
        T,
        ("storing into an array of float32 needs a number, not tuple(int64, int64)"),
        "x[0]",
        None,
    ),
    (
        calls_numpy,
        V1,
        U,
        "call to unsupported function 'numpy.cumsum'",
        "np.cumsum",
        (
            "in a kernel NumPy's math functions take numbers (np.sin(x[i])) or fill an 'out' array "
            "(np.sin(x, out)); for np.cumsum loop over the elements, or combine threads' results with "
            "cuda.atomic.add; docs/numba-api.md lists what kernels can call"
            "\nguide: docs/guide/first-kernel.md#what-a-kernel-can-call"
        ),
    ),
    (
        stores_into_scalar,
        "void(float32[:], float32)",
        T,
        "cannot assign into a value of type float32",
        "a[0]",
        None,
    ),
    (
        atomic_tuple_value,
        "void(int32[:])",
        T,
        "cuda.atomic.add's value needs a number, not tuple(int64, int64)",
        "cuda.atomic",
        None,
    ),
    (compares_arrays, V11, T, f"unsupported operand types for <: '{F}' and '{F}'", "x < y", None),
    (
        formats_string,
        V1,
        U,
        "f-strings are not supported in kernels",
        by_version('f"', "{x[0]}", "{x[0]}"),
        None,
    ),
    (imports_module, V1, U, "'import' statements are not supported in kernels", "import", None),
    (
        tuple_index_out_of_range,
        V1,
        T,
        "tuple index 5 out of range for a tuple of 2 items",
        "t[5]",
        None,
    ),
    (
        tuple_index_not_constant,
        "void(float32[:], int64)",
        T,
        "a tuple index must be a constant integer",
        "t[i]",
        None,
    ),
    (
        bitwise_and_float,
        V1,
        T,
        (
            "unsupported operand types for &: 'float32' and 'int64' "
            "(bitwise operators need integer or bool operands)"
        ),
        "x[0] &",
        None,
    ),
    (
        shifts_float,
        V1,
        T,
        ("unsupported operand types for <<: 'float64' and 'int64' (shifts need integer operands)"),
        "1.0 <<",
        None,
    ),
    (
        syncthreads_with_argument,
        V1,
        T,
        "cuda.syncthreads() takes no arguments (1 given)",
        "cuda",
        None,
    ),
    (
        thread_index_w,
        V1,
        T,
        "'cuda.threadIdx' has no attribute 'w'",
        "cuda",
        "cuda.threadIdx has the attributes x, y and z",
    ),
    (
        negative_local_shape,
        V1,
        T,
        "the shape of cuda.local.array must not be negative: -1",
        "cuda",
        None,
    ),
    (float_range, V1, T, "a range() argument must be an integer, not float64", "range", None),
    (
        loops_over_array,
        V1,
        U,
        "for loops over float32 are not supported; loop over range(...)",
        by_version("for", "for", "x[0]:"),
        None,
    ),
    (
        sets_attribute,
        V1,
        U,
        f"assigning to an attribute of {F} is not supported in kernels (only a record's fields)",
        "x.shape",
        None,
    ),
    (deletes_name, V1, U, "'del' statements are not supported in kernels", "x", None),
    (matmul, V1, U, "the '@' operator is not supported in kernels", "x @", None),
    (
        complex_literal,
        V1,
        T,
        "cannot convert complex128 to float32: take .real, .imag or abs() of a complex number",
        "x[0] = 1j",
        None,
    ),
    (
        in_operator,
        V1,
        U,
        "the 'in' operator is supported with a tuple on its right, not with 'array(float32, 1d, A)'",
        "1 in",
        None,
    ),
    (indexes_element, V1, T, "cannot index a value of type float32", "x[0][0]", None),
    (
        len_of_scalar,
        "void(float32[:], float32)",
        T,
        "len() of a value of type float32 is not supported",
        "len",
        None,
    ),
    (stores_into_shape, V1, T, "tuples are immutable", "x.shape", None),
    (
        calls_scalar,
        "void(float32[:], float32)",
        T,
        "a value of type float32 is not callable",
        "a(1)",
        None,
    ),
    (abs_of_tuple, V1, T, "abs() needs a number, not tuple(int64, int64)", "abs", None),
    (
        array_as_condition,
        V1,
        T,
        f"cannot use a value of type {F} as a condition",
        by_version("if", "x:", "x:"),
        None,
    ),
    (unpacks_too_many, V1, T, "too many names to unpack: the tuple has only 2 items", "i, j", None),
    (
        shape_index_out_of_range,
        V1,
        T,
        "tuple index 2 out of range for a tuple of 1 item",
        "x.shape[2]",
        None,
    ),
    (
        float_atomic_and,
        V1,
        T,
        (
            "cuda.atomic.and_ does not support arrays of float32 "
            "(supported: int32, uint32, int64, uint64)"
        ),
        "cuda",
        None,
    ),
    (
        print_keyword,
        V1,
        U,
        ("print() in a kernel takes no keyword arguments (sep=, end=, file=, flush=)"),
        "print",
        None,
    ),
    (negates_array, V1, T, f"unary - needs a number, not {F}", "-x", None),
    (
        calls_plain_function,
        V1,
        U,
        "call to unsupported function 'plain_helper'",
        "plain_helper",
        (
            "decorate 'plain_helper' with @cuda.jit(device=True) to call it from "
            "a kernel\nguide: docs/guide/first-kernel.md#device-functions"
        ),
    ),
]


def source_at(fn, line: int) -> str:
    return inspect.getsourcelines(fn)[0][line - fn.__code__.co_firstlineno].rstrip("\n")


def expected_position(fn, at: str) -> tuple[int, int]:
    """The marked line and the 1-based column where ``at`` starts on it."""
    line = marked_line(fn)
    text = source_at(fn, line)
    assert at in text, (at, text)
    return line, text.index(at) + 1


@pytest.mark.parametrize(
    "fn,sig,cls,message,at,hint", KERNEL_CASES, ids=[c[0].__name__ for c in KERNEL_CASES]
)
def test_bad_kernel(fn, sig, cls, message, at, hint):
    kernel = cuda.jit(fn, target="cpu")
    with pytest.raises(CompileError) as info:
        kernel.compile(sig)
    err = info.value
    assert type(err) is cls
    line, col = expected_position(fn, at)
    source = source_at(fn, line)
    indent = len(source) - len(source.lstrip())
    head = f"{__file__}:{line}:{col}: {cls.kind}: {message}".splitlines()
    lines = str(err).splitlines()[len(head) - 1 :]  # the message may take several lines
    assert str(err).splitlines()[: len(head)] == head
    assert lines[1] == "    " + source.strip()
    assert lines[2].index("^") == 4 + (col - 1 - indent)  # the caret under ``at``
    assert "\n".join(lines[3:]) == (f"hint: {hint}" if hint else "")  # with its guide line
    assert_user_facing(err)


def test_compile_ptx_error_is_user_facing():
    """The same through cuda.compile_ptx (the CUDA target's entry point)."""
    with pytest.raises(UnsupportedError) as info:
        cuda.compile_ptx(calls_unknown, V1)
    line, col = expected_position(calls_unknown, "sorted")
    assert str(info.value).splitlines()[0] == (
        f"{__file__}:{line}:{col}: unsupported: call to unsupported function 'sorted'"
    )
    assert_user_facing(info.value)


def test_show_internals_keeps_cujit_frames(monkeypatch):
    monkeypatch.setenv("CUJIT_SHOW_INTERNALS", "1")
    with pytest.raises(UnsupportedError) as info:
        cuda.jit(calls_unknown, target="cpu").compile(V1)
    files = {name for name, _ in shown_cujit_frames(info.value)}
    assert {"dispatcher.py", "pipeline.py"} <= files


# -- device functions: the chain of calls ------------------------------------------


@cuda.jit(device=True)
def innermost(v):
    return v[0]  # <-


@cuda.jit(device=True)
def middle(v):
    return innermost(v)  # <-


def calls_device_chain(x):
    x[0] = middle(x[0])  # <-


def test_error_in_device_function_shows_the_call_chain():
    with pytest.raises(TypingError) as info:
        cuda.jit(calls_device_chain, target="cpu").compile(V1)
    inner = expected_position(innermost.py_func, "v[0]")
    mid = expected_position(middle.py_func, "innermost")
    outer = expected_position(calls_device_chain, "middle")
    assert str(info.value).splitlines() == [
        f"{__file__}:{inner[0]}:{inner[1]}: type error: cannot index a value of type float32",
        "    return v[0]  # <-",
        "           ^^^^",
        f"note: called from {__file__}:{mid[0]}:{mid[1]} (calling device function 'innermost'"
        "; during: resolving callee type: type(CUDADispatcher(<function innermost>)))",
        f"note: called from {__file__}:{outer[0]}:{outer[1]} (calling device function 'middle'"
        "; during: resolving callee type: type(CUDADispatcher(<function middle>)))",
    ]
    assert_user_facing(info.value)


# -- internal compiler errors -------------------------------------------------------


def plain_kernel(x):
    x[0] = 1.0


def test_internal_error_names_stage_kernel_and_location(monkeypatch):
    import cujit.passes

    def broken(fn, passes=None):
        raise KeyError("boom")

    monkeypatch.setattr(cujit.passes, "run_passes", broken)
    with pytest.raises(InternalCompilerError) as info:
        cuda.jit(plain_kernel, target="cpu").compile(V1)
    line = plain_kernel.__code__.co_firstlineno
    assert str(info.value) == (
        "internal compiler error in stage 'passes' while compiling 'plain_kernel' (kernel "
        f"defined at {__file__}:{line}:1): KeyError: 'boom'\n"
        "This is a bug in cujit; please report it with the kernel's source (set "
        "CUJIT_SHOW_INTERNALS=1 for the internal traceback)."
    )
    assert info.value.stage == "passes" and isinstance(info.value.cause, KeyError)
    assert_user_facing(info.value)


def test_internal_error_keeps_its_cause_for_bug_reports(monkeypatch):
    import cujit.passes

    monkeypatch.setenv("CUJIT_SHOW_INTERNALS", "1")
    monkeypatch.setattr(cujit.passes, "run_passes", lambda fn, passes=None: {}["boom"])
    with pytest.raises(InternalCompilerError) as info:
        cuda.jit(plain_kernel, target="cpu").compile(V1)
    assert isinstance(info.value.__cause__, KeyError)
    assert "pipeline.py" in {name for name, _ in shown_cujit_frames(info.value)}


# -- bad launches ------------------------------------------------------------------
# Raised before anything reaches the driver (or, here, the CPU target's runner).


@cuda.jit(target="cpu")
def fill(x, n):
    i = cuda.grid(1)
    if i < n:
        x[i] = 1.0


@cuda.jit("void(float32[:], int64)", target="cpu")
def fill_eager(x, n):
    x[0] = n


X = np.zeros(4, np.float32)
ARRAYS = "kernel arrays hold bool, int8-64, uint8-64, float16-64 or complex64/128"

LAUNCH_CASES = [
    (
        "argument count",
        lambda: fill[1, 4](X),
        LaunchError,
        (
            "kernel 'fill' takes 2 arguments, 1 given\nhint: pass one value per parameter: "
            "fill[blocks, threads](x, n)\nguide: docs/guide/first-kernel.md#launching"
        ),
    ),
    (
        "object array",
        lambda: fill[1, 4](np.zeros(3, object), 3),
        LaunchError,
        (
            f"kernel 'fill': argument 0 ('x'): unsupported dtype object: {ARRAYS}, not Python "
            "objects"
        ),
    ),
    (
        "datetime array",
        lambda: fill[1, 4](np.zeros(3, "M8[s]"), 3),
        TypingError,
        (
            f"{__file__}:{fill.py_func.__code__.co_firstlineno + 4}:9: type error: cannot convert "
            "float64 to datetime64[s]: datetimes and timedeltas convert only to their own kind\n"
            "    x[i] = 1.0\n    ^^^^"
        ),
    ),
    (
        "void array",
        lambda: fill[1, 4](np.zeros(3, "V4"), 3),
        LaunchError,
        (
            "kernel 'fill': argument 0 ('x'): unsupported dtype |V4: "
            f"{ARRAYS}; unstructured void dtypes have no fields to read"
        ),
    ),
    (
        "longdouble array",
        lambda: fill[1, 4](np.zeros(3, np.longdouble), 3),
        LaunchError,
        f"kernel 'fill': argument 0 ('x'): unsupported dtype {np.dtype(np.longdouble)}: {ARRAYS}",
    ),
    (
        "datetime scalar",
        lambda: fill[1, 4](X, datetime.datetime(2024, 1, 1)),
        LaunchError,
        (
            "kernel 'fill': argument 1 ('n'): cannot pass a value of Python type datetime to a "
            "kernel"
        ),
    ),
    (
        "string",
        lambda: fill[1, 4]("abc", 3),
        LaunchError,
        "kernel 'fill': argument 0 ('x'): cannot pass a value of Python type str to a kernel",
    ),
    (
        "None",
        lambda: fill[1, 4](None, 3),
        LaunchError,
        "kernel 'fill': argument 0 ('x'): cannot pass None to a kernel",
    ),
    (
        "list",
        lambda: fill[1, 4]([1.0, 2.0], 3),
        LaunchError,
        (
            "kernel 'fill': argument 0 ('x'): cannot pass a value of Python type list to a kernel\n"
            "hint: kernels take arrays, not lists: pass np.asarray(...) for 'x' (or "
            "cuda.to_device(np.asarray(...)) to keep it on the GPU between launches)"
            "\nguide: docs/guide/first-kernel.md#host-arrays-and-device-arrays"
        ),
    ),
    (
        "fraction scalar",
        lambda: fill[1, 4](X, fractions.Fraction(1, 2)),
        LaunchError,
        (
            "kernel 'fill': argument 1 ('n'): cannot pass a value of Python type Fraction to a "
            "kernel"
        ),
    ),
    (
        "eager signature, dtype",
        lambda: fill_eager[1, 4](np.zeros(3), 3),
        LaunchTypeError,
        (
            "No matching definition for argument type(s) (array(float64, 1d, C), int64) of "
            "kernel 'fill_eager', which was compiled for (array(float32, 1d, A), int64)\nhint: argument 0 ('x') is "
            "float64[::1] where the signature has float32[:]; the signature 'void(float64[::1], int64)' "
            "would take these arguments, or convert the argument (x.astype(np.float32)), or drop "
            "the signature so that cujit compiles for the types each launch passes"
            "\nguide: docs/guide/first-kernel.md#signatures"
        ),
    ),
    (
        "eager signature, ndim",
        lambda: fill_eager[1, 4](np.zeros((3, 3), np.float32), 3),
        LaunchTypeError,
        (
            "No matching definition for argument type(s) (array(float32, 2d, C), int64) of "
            "kernel 'fill_eager', which was compiled for (array(float32, 1d, A), int64)\nhint: argument 0 ('x') "
            "is float32[:, ::1] where the signature has float32[:]; the signature "
            "'void(float32[:, ::1], int64)' would take these arguments, or convert the argument "
            "(x.reshape(...) to 1 dimension(s)), or drop the signature so that cujit compiles for "
            "the types each launch passes\nguide: docs/guide/first-kernel.md#signatures"
        ),
    ),
    (
        "grid zero",
        lambda: fill[0, 4](X, 3),
        LaunchValueError,
        "grid dimensions must be positive, got 0",
    ),
    (
        "block negative",
        lambda: fill[1, -4](X, 3),
        LaunchValueError,
        "block dimensions must be positive, got -4",
    ),
    (
        "grid of floats",
        lambda: fill[1.5, 4](X, 3),
        LaunchTypeError,
        (
            "griddim must be a sequence of integers, got [1.5]\nhint: compute it with integer division, for "
            "instance (n + 255) // 256: '/' always gives a float"
            "\nguide: docs/guide/first-kernel.md#launching"
        ),
    ),
    # (a fresh kernel: the launch-configuration cache takes True for 1, see the report)
    (
        "grid of bools",
        lambda: cuda.jit(fill.py_func, target="cpu")[True, 4](X, 3),
        LaunchTypeError,
        "griddim must be a sequence of integers, got [True]",
    ),
    (
        "grid of four dimensions",
        lambda: fill[(1, 1, 1, 1), 4](X, 3),
        LaunchValueError,
        "griddim must be a sequence of 1, 2 or 3 integers, got [1, 1, 1, 1]",
    ),
    (
        "block.x beyond the limit",
        lambda: fill[1, 2048](X, 3),
        LaunchError,
        "block.x = 2048 exceeds CUDA's limit of 1024",
    ),
    (
        "block.z beyond the limit",
        lambda: fill[1, (1, 1, 65)](X, 3),
        LaunchError,
        "block.z = 65 exceeds CUDA's limit of 64",
    ),
    (
        "threads per block beyond the limit",
        lambda: fill[1, (32, 32, 2)](X, 3),
        LaunchError,
        "kernel 'fill': 2048 threads per block; the limit is 1024",
    ),
    (
        "grid.y beyond the limit",
        lambda: fill[(1, 70000), 1](X, 3),
        LaunchError,
        "grid.y = 70000 exceeds CUDA's limit of 65535",
    ),
    (
        "too much dynamic shared memory",
        lambda: fill[1, 4, 0, 1 << 20](X, 3),
        LaunchError,
        (
            "kernel 'fill' asks for 1048576 bytes of dynamic shared memory; a block may have "
            "232448 bytes (CUDA's limit on sm_90) and the kernel already uses 0 statically"
        ),
    ),
    (
        "negative dynamic shared memory",
        lambda: fill[1, 4, 0, -1](X, 3),
        LaunchError,
        "kernel 'fill': dynamic shared memory size must be >= 0, got -1",
    ),
    (
        "no launch configuration",
        lambda: fill(X, 3),
        LaunchValueError,
        (
            "kernel 'fill' needs a launch configuration (the launch configuration was not "
            "specified): fill[blocks, threads_per_block](...)\n"
            "hint: give blocks and threads per block in brackets, for instance "
            "fill[(x.size + 255) // 256, 256](x, n)\nguide: docs/guide/first-kernel.md#launching"
        ),
    ),
    (
        "configuration of one item",
        lambda: fill[1](X, 3),
        LaunchValueError,
        (
            "launch a kernel as kernel[grid, block](...) or kernel[grid, block, stream, "
            "dynamic_shared_bytes](...)"
        ),
    ),
    (
        "forall of negative size",
        lambda: fill.forall(-1)(X, 3),
        LaunchValueError,
        "Can't create ForAll with negative task count: -1 (forall needs a non-negative "
        "number of tasks)",
    ),
    (
        "device function called from the host",
        lambda: innermost(X),
        cujit.diagnostics.CujitError,
        (
            "device function 'innermost' can only be called from a kernel or from another device "
            "function, not from the host; launch a @cuda.jit kernel that calls it"
        ),
    ),
    (
        "kernel signature with a return type",
        lambda: cuda.jit("int32(float32[:])", target="cpu")(plain_kernel),
        TypingError,
        (
            "type error: kernel 'plain_kernel' must return void, not int32\n"
            "hint: a kernel returns results by writing into an array argument"
        ),
    ),
]


@pytest.mark.parametrize(
    "launch,cls,message", [c[1:] for c in LAUNCH_CASES], ids=[c[0] for c in LAUNCH_CASES]
)
def test_bad_launch(launch, cls, message):
    with pytest.raises(cls) as info:
        launch()
    assert type(info.value) is cls
    assert str(info.value) == message
    assert_user_facing(info.value)


def test_bad_launch_leaves_the_arrays_alone():
    out = np.full(4, -1.0, np.float32)
    with pytest.raises(LaunchError):
        fill[1, 2048](out, 4)
    assert (out == -1.0).all()
    fill[1, 4](out, 4)  # and the kernel still launches
    assert (out == 1.0).all()


@cuda.jit
def fill_on_gpu(x, n):
    x[0] = n


@pytest.mark.skipif(os.environ.get("CUJIT_TARGET") == "cpu", reason="CUDA target wanted")
def test_launch_without_a_gpu_names_the_cpu_target():
    from conftest import has_gpu

    if has_gpu():
        pytest.skip("a GPU is present")
    with pytest.raises(NoGPUError) as info:
        fill_on_gpu[1, 1](X, 3)
    text = str(info.value)
    assert text.startswith("no CUDA GPU found")
    assert text.endswith(
        "\nTo run kernels on the CPU instead, set CUJIT_TARGET=cpu or use "
        "@cuda.jit(target='cpu').\nguide: docs/guide/cpu-target.md"
    )
    assert_user_facing(info.value)


# -- signatures made of random text never crash, they raise TypeError ------------------


def test_random_and_mangled_signatures_raise_cleanly():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from cujit.types import parse_signature

    pieces = st.sampled_from(
        [
            "void",
            "float32",
            "int64",
            "[",
            "]",
            ":",
            "::1",
            "(",
            ")",
            ",",
            " ",
            "x",
            "1",
            "float32[:]",
            "__import__",
            "'",
            ".",
        ]
    )

    @settings(max_examples=300, deadline=None, derandomize=True)
    @given(
        st.one_of(
            st.text(max_size=40),
            st.lists(pieces, max_size=12).map("".join),
            st.binary(max_size=20).map(lambda b: b.decode("latin-1")),
        )
    )
    def check(text):
        try:
            sig = parse_signature(text)
        except TypeError:
            return
        assert type(sig).__name__ == "Signature"

    check()
    for bad in (
        "void(float32[:]",
        "void(float32[:], int64))",
        "float32[",
        "void(,)",
        "void(float32[:, ::1, ::1])",
        "(lambda: 0)()",
    ):
        with pytest.raises(TypeError):
            cuda.jit(bad)(plain_kernel)
