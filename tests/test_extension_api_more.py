"""The extension API beyond types and calls: ``overload_method``,
``overload_attribute``, ``intrinsic``, attribute templates with ``lower_attr``,
``register_jitable``, ``overload(target=..., prefer_literal=...)``, and a library's
struct value returned from a device function (CPU target)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from llvmlite import ir as llir

from cujit import cuda, types
from cujit.cuda import cgutils
from cujit.cuda.cudadecl import registry
from cujit.cuda.cudaimpl import lower_attr
from cujit.cuda.extending import (
    _Intrinsic,
    intrinsic,
    lower_builtin,
    make_attribute_wrapper,
    models,
    overload,
    overload_attribute,
    overload_method,
    register_jitable,
    register_model,
    type_callable,
)
from cujit.cuda.typing.templates import AttributeTemplate
from cujit.diagnostics import LoweringError, TypingError


def cpu(fn):
    return cuda.jit(fn, target="cpu")


class Span:
    """A host-side class the kernels below build as an extension value."""

    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi


class SpanType(types.Type):
    def __init__(self):
        super().__init__(name="Span")


span_type = SpanType()


@type_callable(Span)
def _type_span(context):
    def typer(lo, hi):
        if isinstance(lo, types.Float) and isinstance(hi, types.Float):
            return span_type

    return typer


@register_model(SpanType)
class _SpanModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("lo", types.float64), ("hi", types.float64)])


make_attribute_wrapper(SpanType, "lo", "lo")
make_attribute_wrapper(SpanType, "hi", "hi")


@lower_builtin(Span, types.Float, types.Float)
def _lower_span(context, builder, sig, args):
    s = cgutils.create_struct_proxy(sig.return_type)(context, builder)
    s.lo, s.hi = args
    return s._getvalue()


@registry.register_attr
class _SpanAttrs(AttributeTemplate):
    key = SpanType

    def resolve_length(self, ty):
        return types.float64


@lower_attr(SpanType, "length")
def _span_length(context, builder, ty, value):
    # value is the struct of the members, as numba hands it over
    return builder.fsub(builder.extract_value(value, 1), builder.extract_value(value, 0))


@overload_attribute(SpanType, "mid")
def _span_mid(s):
    return lambda s: (s.lo + s.hi) / 2


@overload_method(SpanType, "scaled")
def _span_scaled(s, k=2.0):
    def impl(s, k=2.0):
        return Span(s.lo * k, s.hi * k)

    return impl


def test_template_attribute_built_with_the_builder():
    @cpu
    def k(out, x):
        out[0] = Span(x[0], x[1]).length

    out = np.full(1, np.nan)
    k[1, 1](out, np.array([1.25, 4.0]))
    assert out[0] == 4.0 - 1.25


def test_overloaded_attribute_and_method():
    @cpu
    def k(out, x):
        s = Span(x[0], x[1])
        out[0] = s.mid
        t = s.scaled()
        out[1] = t.hi
        out[2] = s.scaled(k=-1.0).lo

    out = np.full(3, np.nan)
    k[1, 1](out, np.array([1.0, 3.0]))
    np.testing.assert_array_equal(out, [2.0, 6.0, -1.0])


def make_span(a, b):
    return Span(a, b)


def test_struct_value_returned_from_a_device_function():
    dev = cuda.jit(device=True)(make_span)

    @cpu
    def k(out, x):
        s = dev(x[0] + 1.0, x[1] * 3.0)
        out[0] = s.lo
        out[1] = s.hi

    out = np.full(2, np.nan)
    k[1, 1](out, np.array([0.5, 2.5]))
    np.testing.assert_array_equal(out, [1.5, 7.5])


def test_method_on_arrays_with_defaults_and_keywords():
    @overload_method(types.Array, "second_or")
    def _second_or(a, default=-1.0):
        def impl(a, default=-1.0):
            return a[1] if a.size > 1 else default

        return impl

    @cpu
    def k(out, a, b):
        out[0] = a.second_or()
        out[1] = b.second_or()
        out[2] = b.second_or(default=9.0)

    out = np.full(3, np.nan)
    k[1, 1](out, np.array([5.0, 7.0]), np.array([5.0]))
    np.testing.assert_array_equal(out, [7.0, -1.0, 9.0])


@intrinsic
def _times_three(typingctx, x):
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        return builder.mul(args[0], llir.Constant(args[0].type, 3))

    return x(x), codegen


def test_intrinsic_builds_its_value():
    @cpu
    def k(out, a):
        out[0] = _times_three(a[0])

    out = np.full(1, -1, np.int64)
    k[1, 1](out, np.array([14], np.int64))
    assert out[0] == 42


def test_intrinsic_with_no_value_where_one_is_due_is_a_lowering_error():
    @intrinsic
    def forgets(typingctx, x):
        def codegen(context, builder, sig, args):
            return None

        return types.int32(types.int32), codegen

    @cpu
    def k():
        forgets(1)

    with pytest.raises(LoweringError, match="non-void function returns None") as info:
        k[1, 1]()
    assert "test_extension_api_more.py" in str(info.value)


def test_void_intrinsic_is_kept_and_its_side_effect_happens():
    @intrinsic
    def store_seven(typingctx, arr):
        def codegen(context, builder, sig, args):
            # the array argument's data pointer is its first member
            data = builder.extract_value(args[0], 0)
            builder.store(llir.Constant(data.type.pointee, 7), data)

        return types.void(arr), codegen

    @cpu
    def k(a):
        store_seven(a)

    a = np.zeros(3, np.int64)
    k[1, 1](a)
    np.testing.assert_array_equal(a, [7, 0, 0])


def test_intrinsic_pickles_to_the_same_object_in_process():
    rebuilt = pickle.loads(pickle.dumps(_times_three))
    assert rebuilt is _times_three
    assert isinstance(rebuilt, _Intrinsic)
    assert _times_three.__name__ == "_times_three"


def test_register_jitable_function_runs_in_python_and_kernels():
    @register_jitable
    def bump(x, y):
        x[0] += y

    @cpu
    def k(x, y):
        bump(x, y)
        x[0] *= 2

    x = np.array([3, 4])
    bump(x, 1)
    assert x[0] == 4
    k[1, 1](x, 5)
    assert list(x) == [18, 4]


def picked():
    pass


@overload(picked, target="generic")
def _picked_generic():
    return lambda: 1


@overload(picked, target="cuda")
def _picked_cuda():
    return lambda: 2


@overload(picked, target="cpu")
def _picked_host_only():
    return lambda: 3


def test_cuda_target_overload_is_preferred_and_other_targets_unused():
    @cpu
    def k(out):
        out[0] = picked()

    out = np.zeros(1, np.int64)
    k[1, 1](out)
    assert out[0] == 2


def literal_or_plain(x):
    pass


def _typing(x):
    if isinstance(x, types.IntegerLiteral):
        if x.literal_value == 1:
            return lambda x: 1000
        raise ValueError("only the literal 1 is special")
    return lambda x: x * 10


def plain_first(x):
    pass


overload(literal_or_plain, prefer_literal=True)(_typing)
overload(plain_first)(_typing)


def test_literal_types_are_tried_in_numba_order():
    @cpu
    def k(out, n):
        out[0] = literal_or_plain(1)
        out[1] = literal_or_plain(2)  # its literal refused: the plain type answers
        out[2] = literal_or_plain(n)
        out[3] = plain_first(1)

    out = np.zeros(4, np.int64)
    k[1, 1](out, 3)
    np.testing.assert_array_equal(out, [1000, 20, 30, 10])


class LibraryError(Exception):
    pass


def refuses(x):
    pass


@overload(refuses)
def _refuses(x):
    raise LibraryError(f"refuses takes no {x}")


def test_library_typing_error_names_the_call_and_keeps_its_class():
    @cpu
    def k(out):
        out[0] = refuses(1.5)

    with pytest.raises(TypingError) as info:
        k[1, 1](np.zeros(1))
    assert isinstance(info.value, LibraryError)
    assert "refuses takes no float64" in str(info.value)
    assert "test_extension_api_more.py" in str(info.value)


def needs_sqrt(x):
    raise NotImplementedError


@type_callable(needs_sqrt)
def _type_needs_sqrt(context):
    return lambda x: x if isinstance(x, types.Float) else None


@lower_builtin(needs_sqrt, types.Float)
def _lower_needs_sqrt(context, builder, sig, args):
    import math

    def impl(x):
        return math.sqrt(2 * x) + 1

    return context.compile_internal(builder, impl, sig, args)


def test_compile_internal_compiles_a_python_function_into_the_lowering():
    @cpu
    def k(out, x):
        out[0] = needs_sqrt(x[0])

    out = np.full(1, np.nan)
    k[1, 1](out, np.array([18.0]))
    assert out[0] == 7.0


def keyed_overloaded(x):
    pass


@overload(keyed_overloaded)
def _keyed_first(x):
    return lambda x: x * 2


def test_overloads_intrinsics_and_methods_are_part_of_the_cache_key():
    from cujit.cache.key import kernel_key
    from cujit.options import Options

    def keyed(x, out):
        out[0] = keyed_overloaded(x[0]) + _times_three(x[0]) + x.keyed_method()

    args = (types.int64[::1], types.int64[::1])
    before = kernel_key(keyed, args, Options())
    assert before is not None and before == kernel_key(keyed, args, Options())

    def other_typing(x):
        return lambda x: x + 1

    overload(keyed_overloaded)(other_typing)  # a new overload: a different key
    after_overload = kernel_key(keyed, args, Options())
    assert after_overload != before

    @overload_method(types.Array, "unrelated_method_name")
    def _unrelated(a):
        return lambda a: 0

    # a method the kernel's code never names leaves the key alone...
    assert kernel_key(keyed, args, Options()) == after_overload

    @overload_method(types.Array, "keyed_method")
    def _keyed_method(a):
        return lambda a: 1

    # ... one it names is part of it
    assert kernel_key(keyed, args, Options()) != after_overload


def _overloaded_with(impl, strict=True):
    def target(a, b, kw=None):
        pass

    @overload(target, strict=strict)
    def _typing(a, b, kw=None):
        return impl

    def k(x, out):
        out[0] = target(x[0], x[1], kw=2.0)

    return cpu(k)


@pytest.mark.parametrize(
    "impl, what",
    [
        (lambda a, b, kw=1.0: a, "keyword argument default values"),
        (lambda a, c, kw=None: a, "argument names"),
        (lambda a, kw=None: a, "argument names"),
        (lambda a, b, kw=None, more=0: a, "keyword argument names"),
        (lambda a, b, **kws: a, r"VAR_KEYWORD .*'\*\*kws'"),
    ],
)
def test_implementation_must_take_the_typing_functions_arguments(impl, what):
    k = _overloaded_with(impl)
    with pytest.raises(TypingError, match=what) as info:
        k[1, 1](np.ones(2), np.zeros(1))
    assert "test_extension_api_more.py" in str(info.value)


def test_not_strict_overload_skips_the_signature_check():
    k = _overloaded_with(lambda a, b, kw=1.0: a + b + kw, strict=False)
    out = np.zeros(1)
    k[1, 1](np.array([1.5, 2.0]), out)
    assert out[0] == 5.5  # kw=2.0 from the call
