"""Messages, each as a class: a library intrinsic's bad answer is the user's error at the
call, numba's ``Optional`` in a signature is a cujit TypingError, ``intrinsic`` is in
``cujit.extending``, signature errors carry no cujit frames, and a kernel's ``*args``
or keyword-only parameters are refused at its ``def`` line."""

from __future__ import annotations

import os
import traceback

import numpy as np
import pytest

import cujit
from cujit import cuda, types
from cujit.diagnostics import (
    InternalCompilerError,
    SignatureError,
    TypingError,
    UnsupportedError,
)
from cujit.extending import intrinsic

HERE = os.path.abspath(__file__)
CUJIT_ROOT = os.path.dirname(os.path.abspath(cujit.__file__)) + os.sep


def _cujit_frames(error: BaseException) -> list[str]:
    """cujit's frames in ``error``'s traceback, but the boundary's one re-raise line."""
    frames = traceback.extract_tb(error.__traceback__)
    return [
        f"{f.filename}:{f.lineno}"
        for f in frames
        if os.path.abspath(f.filename).startswith(CUJIT_ROOT)
        and not f.filename.endswith("diagnostics.py")
    ]


def _line_of(fn, text: str) -> int:
    import inspect

    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, ln in enumerate(lines) if text in ln)


# -- intrinsic in cujit.extending ----------------------------------------------------


def test_intrinsic_is_importable_from_cujit_extending():
    from cujit.cuda.extending import intrinsic as numba_spelling
    from cujit.extension_intrinsic import intrinsic as own

    assert intrinsic is own is numba_spelling
    assert "intrinsic" in cujit.extending.__all__ and "intrinsic" in dir(cujit.extending)


# -- an intrinsic's bad answer: the user's error at the call -------------------------


@intrinsic
def _only_signature(typingctx, x):
    return types.int32(x)


@intrinsic
def _three_items(typingctx, x):
    return types.int32(x), None, 1


@intrinsic
def _string_signature(typingctx, x):
    return "int32(int32)", lambda context, builder, sig, args: args[0]


@intrinsic
def _not_callable(typingctx, x):
    return types.int32(x), 5


@intrinsic
def _typing_raises(typingctx, x):
    raise KeyError("the library's own bug")


@intrinsic
def _wrong_arity(typingctx, x):
    return types.int32(x, x), lambda context, builder, sig, args: args[0]


def _call(f):
    def k(a):
        a[0] = f(a[0])  # <- the call

    return k


@pytest.mark.parametrize(
    ("f", "words"),
    [
        (_only_signature, "it must return (signature, codegen) or None"),
        (_three_items, "it must return (signature, codegen) or None"),
        (_string_signature, "its first item must be a signature such as int32(int32), not str"),
        (
            _not_callable,
            "must be the codegen function (context, builder, signature, args), not int",
        ),
        (_typing_raises, 'KeyError: "the library\'s own bug"'),
        (_wrong_arity, "its signature takes 2 arguments, but the call passes 1"),
    ],
)
def test_bad_intrinsic_answer_is_a_typing_error_at_the_call(f, words):
    k = _call(f)
    with pytest.raises(TypingError) as info:
        cuda.jit(k, target="cpu")[1, 1](np.zeros(1, np.int32))
    err = info.value
    assert not isinstance(err, InternalCompilerError)
    assert words in str(err)
    assert "bug in cujit" not in str(err)
    assert (err.loc.file, err.loc.line) == (HERE, _line_of(k, "# <- the call"))


# -- numba's Optional in a signature --------------------------------------------------


def _noop(a):
    a[0] = 1


def test_numba_optional_in_a_signature_is_a_cujit_typing_error():
    nt = pytest.importorskip("numba").types
    for sig in (nt.void(nt.Optional(nt.int32)), (nt.Optional(nt.float32),)):
        with pytest.raises(SignatureError) as info:
            cuda.jit(sig, target="cpu")(_noop)  # <- the decorator
        err = info.value
        assert isinstance(err, TypingError) and isinstance(err, TypeError)
        assert "(Optional: a value of type" in str(err) and "declare it" in str(err)
        assert err.loc.file == HERE
        assert _cujit_frames(err) == []


# -- signature errors: no cujit frames ------------------------------------------------


@pytest.mark.parametrize(
    "sig",
    ["void(floot32[:])", "void((", 5, (5,), {"a": 1}, ["void(int32)", "void(("]],
    ids=["unknown-name", "syntax", "int", "tuple-of-non-types", "dict", "list"],
)
def test_signature_errors_show_no_cujit_frames(sig):
    with pytest.raises(SignatureError) as info:
        cuda.jit(sig, target="cpu")
    assert _cujit_frames(info.value) == []
    assert info.value.__cause__ is None and info.value.__suppress_context__


# -- *args and keyword-only: at the def line ------------------------------------------


def _star(a, *rest):
    a[0] = 1


def _kwonly(a, *, b=1):
    a[0] = b


def _starstar(a, **kw):
    a[0] = 1


@pytest.mark.parametrize(
    ("fn", "words"),
    [
        (_star, "'*rest': *args and **kwargs parameters are not supported in kernels"),
        (_kwonly, "keyword-only parameters (b) are not supported in kernels"),
        (_starstar, "'**kw': *args and **kwargs parameters are not supported in kernels"),
    ],
)
def test_parameter_refusals_name_the_def_line(fn, words):
    decorated = cuda.jit(target="cpu")(fn)
    with pytest.raises(UnsupportedError) as info:
        decorated[1, 1](np.zeros(1))
    err = info.value
    assert words in str(err)
    assert (err.loc.file, err.loc.line) == (HERE, _line_of(fn, "def "))


@cuda.jit(target="cpu")
def decorated_kwonly(a, *, b=1):
    a[0] = b


def test_a_decorated_kernel_is_refused_at_its_def_not_its_decorator():
    with pytest.raises(UnsupportedError) as info:
        decorated_kwonly[1, 1](np.zeros(1))
    line = _line_of(decorated_kwonly.py_func, "def decorated_kwonly")
    assert info.value.loc.line == line
    assert f":{line}:" in str(info.value) and "def decorated_kwonly(a, *, b=1):" in str(info.value)
