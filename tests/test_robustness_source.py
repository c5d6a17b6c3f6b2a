"""Robustness, source problems: kernels a new user might write that cujit cannot
compile, and signatures it cannot parse.  Each must give one of cujit's errors at
the user's ``file:line`` (the line marked ``# <-``), name no cujit file, and leave
the process able to compile and run a correct kernel (``robust_helpers``)."""

# The kernels below are wrong on purpose (that is what is tested):
# ruff: noqa: F821, F841, E731, PLE0704, SIM115, RUF100

from __future__ import annotations

import math

import numpy as np
import pytest
from robust_helpers import expect_failure, marked_line, still_works

from cujit import cuda
from cujit.diagnostics import CompileError, SignatureError, TypingError, UnsupportedError

X = np.arange(1.0, 9.0)


def launch(fn, *args):
    cuda.jit(fn, target="cpu")[1, 4](*(args or (X.copy(),)))


# -- constructs kernels cannot contain (UnsupportedError) ---------------------------


def k_try(x):
    try:  # <-
        x[0] = 1
    except IndexError:
        pass


def k_with(x):
    with open("f"):  # <-
        x[0] = 1


def k_class(x):
    class C:  # <-
        pass

    x[0] = 1


def k_list(x):
    a = [1, 2]  # <-
    x[0] = a[0]


def k_dict(x):
    d = {"a": 1}  # <-
    x[0] = d["a"]


def k_set(x):
    s = {1, 2}  # <-
    x[0] = len(s)


def k_listcomp(x):
    a = [i for i in range(3)]  # <-
    x[0] = a[0]


def k_genexpr(x):
    x[0] = sum(i for i in range(3))  # <-


def k_fstring(x):
    s = f"{x[0]}"  # <-
    x[0] = len(s)


def k_del(x):
    v = 1
    del v  # <-
    x[0] = 1


G = 0


def k_global_store(x):
    global G
    G = 1  # <-
    x[0] = 1


def k_attr_store(x):
    x.flags = 1  # <-


def k_kw_call(x):
    kw = {"a": 1}
    x[0] = max(1, **kw)  # <-


def k_star_unpack(x):
    a, *b = (1, 2, 3)  # <-
    x[0] = a


def k_import(x):
    import os  # <-

    x[0] = len(os.sep)


def k_matmul(x):
    x[0] = x @ x  # <-


def k_bare_raise(x):
    raise  # <-


def k_yield(x):
    yield x[0]  # <-


async def k_async(x):  # <-
    x[0] = 1


def k_varargs(*args):  # <-
    args[0][0] = 1


def k_varkw(x, **kw):  # <-
    x[0] = 1


def k_kwonly(x, *, scale):  # <-
    x[0] = scale


def k_kwonly_default(x, *, scale=2):  # <-
    x[0] = scale


def k_class_in_if(x):
    if x[0] > 0:

        class D:  # <-
            pass


def k_decorated_nested(x):
    @staticmethod  # <-
    def g():
        return 1


UNSUPPORTED = [
    (k_try, "'try'"),
    (k_with, "'with'"),
    (k_class, "class definitions"),
    (k_list, "list displays"),
    (k_dict, "dict displays"),
    (k_set, "set displays"),
    (k_listcomp, "comprehensions"),
    (k_genexpr, "generator"),
    (k_fstring, "f-strings"),
    (k_del, "'del'"),
    (k_global_store, "'global'"),
    (k_attr_store, "attribute"),
    (k_kw_call, "**kwargs"),
    (k_star_unpack, "star-unpacking"),
    (k_import, "'import'"),
    (k_matmul, "'@'"),
    (k_bare_raise, "bare 'raise'"),
    (k_yield, "'yield'"),
    (k_async, "async"),
    (k_varargs, "'*args'"),
    (k_varkw, "'**kw'"),
    (k_kwonly, "keyword-only parameters (scale)"),
    (k_kwonly_default, "keyword-only parameters (scale)"),
    (k_class_in_if, "class definitions"),
    (k_decorated_nested, "decorators on nested functions"),
]


@pytest.mark.parametrize("fn,words", UNSUPPORTED, ids=[f.__name__ for f, _ in UNSUPPORTED])
def test_unsupported_construct(fn, words):
    err = expect_failure(lambda: launch(fn), UnsupportedError, (__file__, marked_line(fn)), words)
    assert "not supported" in err.message


def test_parameter_errors_come_at_the_def_and_agree_with_each_other():
    # The launch used to count only positional parameters ("takes 1 arguments, 2 given"),
    # contradicting the compiler ("takes 2 arguments but 1 types were given").
    for fn in (k_varargs, k_kwonly, k_varkw):
        messages = set()
        for args in ((), (X.copy(),), (X.copy(), X.copy())):
            try:
                cuda.jit(fn, target="cpu")[1, 1](*args)
            except UnsupportedError as exc:
                messages.add(exc.message)
        assert len(messages) == 1, messages
    still_works(fresh=True)


# -- typing problems (TypingError and other CompileErrors) --------------------------


def t_index_scalar(x, n):
    x[0] = n[0]  # <-


def t_undefined(x):
    x[0] = not_defined_anywhere  # <-


def t_string_arith(x):
    x[0] = "a" + 1  # <-


def t_float_index(x):
    x[1.5] = 1  # <-


def t_too_many_indices(x):
    x[0, 1] = 1  # <-


def t_tuple_index_range(x):
    t = (1, 2)
    x[0] = t[5]  # <-


def t_return_value(x):
    return x[0]  # <-


def t_unknown_math(x):
    x[0] = math.not_a_function(1.0)  # <-


def t_unknown_cuda(x):
    x[0] = cuda.not_an_intrinsic()  # <-


def t_numpy_call(x):
    x[0] = np.linalg.norm(x)  # <-


def t_unknown_function(x):
    x[0] = open(x)  # <-


def t_shared_shape(x):
    n = x.size
    s = cuda.shared.array(n, np.float64)  # <-
    x[0] = s[0]


def t_local_shape(x):
    n = x.size
    s = cuda.local.array(n, np.float64)  # <-
    x[0] = s[0]


def t_call_int(x):
    v = 3
    x[0] = v(1)  # <-


def t_array_attr(x):
    x[0] = x.no_such_attribute  # <-


def t_atomic_scalar(x, n):
    cuda.atomic.add(n, 0, 1)  # <-


def t_store_into_tuple(x):
    t = (1, 2)
    t[0] = 3  # <-


def t_none_arith(x):
    v = None
    x[0] = v + 1  # <-


def t_array_as_bool(x):
    if x:  # <-
        x[0] = 1


def t_str_store(x):
    x[0] = "text"  # <-


def t_launch_in_kernel(x):
    _inner[1, 1](x)  # <-


@cuda.jit(target="cpu")
def _inner(x):
    x[0] = 1


TYPING = [
    (t_index_scalar, (X, 1.0)),
    (t_undefined, ()),
    (t_string_arith, ()),
    (t_float_index, ()),
    (t_too_many_indices, ()),
    (t_tuple_index_range, ()),
    (t_return_value, ()),
    (t_unknown_math, ()),
    (t_unknown_cuda, ()),
    (t_numpy_call, ()),
    (t_unknown_function, ()),
    (t_shared_shape, ()),
    (t_local_shape, ()),
    (t_call_int, ()),
    (t_array_attr, ()),
    (t_atomic_scalar, (X, 1.0)),
    (t_store_into_tuple, ()),
    (t_none_arith, ()),
    (t_array_as_bool, ()),
    (t_str_store, ()),
    (t_launch_in_kernel, ()),
]


@pytest.mark.parametrize("fn,args", TYPING, ids=[f.__name__ for f, _ in TYPING])
def test_typing_problem(fn, args):
    copies = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
    expect_failure(lambda: launch(fn, *copies), CompileError, (__file__, marked_line(fn)))


def test_a_kernel_launched_from_a_kernel_says_so():
    err = expect_failure(
        lambda: launch(t_launch_in_kernel),
        UnsupportedError,
        (__file__, marked_line(t_launch_in_kernel)),
        "dynamic parallelism",
    )
    assert "pyobject" not in str(err)


# -- signatures that do not parse (SignatureError, a TypeError too) -----------------


def _noop(x):
    x[0] = 1


SIGNATURES = [
    ("void(floot32[:])", "'floot32' is not a type name"),
    ("void(float32[:]", "syntax error"),
    ("garbage(((", "syntax error"),
    ("", "syntax error"),
    ("void(float32[:], )(", "syntax error"),
    ("void(np.float32[:])", "unexpected"),
    ("void(__import__('os'))", "'__import__' is not a type name"),
    ("void(float32[:::])", ""),
    ("void(int33)", "'int33' is not a type name"),
    ("void(float32[:], 'x')", "unexpected"),
    ("void(float32[x])", "'x' is not a type name"),
    (42, "not int 42"),
    (object(), "not object"),
    (3.5, "not float"),
    (b"void(float32[:])", "not bytes"),
    ([None], "not NoneType"),
]


@pytest.mark.parametrize("sig,words", SIGNATURES, ids=[repr(s)[:30] for s, _ in SIGNATURES])
def test_bad_signature_names_the_line_and_token(sig, words):
    line = marked_line(test_bad_signature_names_the_line_and_token)
    err = expect_failure(
        lambda: cuda.jit(sig, target="cpu")(_noop),  # <- the decorator
        SignatureError,
        (__file__, line),
        words,
    )
    assert isinstance(err, TypeError)  # as numba raises


def test_bad_signature_suggests_the_close_name():
    err = expect_failure(
        lambda: cuda.jit("void(floot32[:])", target="cpu"),
        SignatureError,
        None,
        "did you mean 'float32'?",
    )
    assert err.hint is not None


def test_compile_with_bad_types_tuple():
    kernel = cuda.jit(_noop, target="cpu")
    expect_failure(
        lambda: kernel.compile(("float32[:]", object())), SignatureError, None, "cannot use"
    )
    expect_failure(lambda: kernel.compile(42), SignatureError, None, "not int 42")
    expect_failure(lambda: kernel.compile("void(float32[:]"), SignatureError, None, "syntax")


def test_non_void_kernel_signature():
    expect_failure(
        lambda: cuda.jit("int32(float64[:])", target="cpu")(_noop),
        TypingError,
        None,
        "must return void",
    )


def test_decorating_an_unsupported_kernel_raises_nothing_until_it_compiles():
    # As in numba, a module that defines such a kernel still imports (its other kernels
    # run); the error comes at the kernel's first compile or launch, at its def line.
    kernel = cuda.jit(k_varargs, target="cpu")
    with pytest.raises(UnsupportedError):
        kernel[1, 1](X.copy())
    still_works(fresh=True)
