"""Typing of a library's attributes and methods on values (``cujit.extending``).

For ``value.name`` where ``type(value)``'s class (or a base) has an entry:

- ``overload_method``: ``value.name`` is a bound method whose call compiles the
  implementation the typing functions give, ``value`` its first argument;
- ``overload_attribute``: ``value.name`` calls the implementation ``impl(value)`` as a
  device function;
- an attribute template (``register_attr``) typing ``resolve_name`` with a
  ``lower_attr`` implementation: ``extension.call`` of that implementation, which
  receives ``(context, builder, type, value)``.

Values of kernels' own types (arrays, records...) keep their attributes where no
library entry names them.  ``a + b`` (any binary operator) with a library's value as
an operand calls the library's overload of ``operator.add`` (...).
"""

from __future__ import annotations

import operator

from cujit.diagnostics import TypingError
from cujit.infer.complex_calls import BoundMethod
from cujit.infer.extension_calls import emit_extension_call, front_type
from cujit.ir import Const, GetAttr, UnaryOp, Value
from cujit.types import PyObject, Signature, boolean
from cujit.types.extension import (
    ATTRIBUTE_LOWERINGS,
    ATTRIBUTE_OVERLOADS,
    ATTRIBUTE_TEMPLATES,
    METHODS,
    attribute_template_type,
    by_type_class,
    library_types,
)
from cujit.types.extension_typing import getattr_generic


class ExtensionMethod:
    """``value.name`` before its call: the typing functions of the method ``name``."""

    def __init__(self, name: str, typing_fns: list) -> None:
        self.__name__ = self.__qualname__ = name
        self.__module__ = None
        self.typing_fns = typing_fns


def _attr_impl(impl):
    """An ``extension.call`` implementation calling ``impl(context, builder, type, value)``."""

    def lower(context, builder, sig, args):
        return impl(context, builder, sig.args[0], args[0])

    return lower


def _generic_impl(generic, name: str):
    def impl(context, builder, ty, value):
        return generic(context, builder, ty, value, name)

    return impl


def extension_attribute(t, op: GetAttr, obj: Value) -> bool:
    """Type ``obj.name`` through the library's tables; False where none names it."""
    if not (METHODS or ATTRIBUTE_OVERLOADS or ATTRIBUTE_TEMPLATES) or isinstance(
        obj.type, PyObject
    ):
        return False
    ft = front_type(obj.type)
    typing_fns = by_type_class(METHODS, ft, op.name)
    if typing_fns:
        method = BoundMethod(ExtensionMethod(op.name, typing_fns), obj)
        t.emit(Const(loc=op.loc, result=Value(op.result.id, PyObject(method)), value=method))
        return True
    typing_fns = by_type_class(ATTRIBUTE_OVERLOADS, ft, op.name)
    if typing_fns:
        _call_attribute(t, op, obj, typing_fns)
        return True
    result = attribute_template_type(ft, op.name) if ATTRIBUTE_TEMPLATES else None
    if result is None:
        return False
    impl = by_type_class(ATTRIBUTE_LOWERINGS, ft, op.name)
    generic = getattr_generic(ft) if impl is None else None
    if generic is not None:  # lower_getattr_generic: the name is its last argument
        impl = _generic_impl(generic, op.name)
    if impl is None:
        raise TypingError(
            f"attribute '{op.name}' of {ft} is typed but has no implementation",
            op.loc,
            hint="the library declares one with lower_attr(type_class, name)",
        )
    from cujit.infer.calls import CallSite

    site = CallSite(op, op.name, [obj], {})
    emit_extension_call(t, site, _attr_impl(impl), Signature(result, (ft,)), [obj])
    return True


def _call_attribute(t, op: GetAttr, obj: Value, typing_fns: list) -> None:
    from cujit.device_function import DeviceFunction
    from cujit.infer.calls import CallSite
    from cujit.infer.extension_calls import first_implementation
    from cujit.infer.function_calls import call_device_function

    impl = first_implementation(typing_fns, (front_type(obj.type),), {}, op.loc)
    if impl is None:
        raise TypingError(f"no overload of attribute '{op.name}' takes {obj.type}", op.loc)
    site = CallSite(op, op.name, [obj], {})
    call_device_function(t, op, DeviceFunction(impl), site)


BINARY_OPERATORS = {
    "+": "add",
    "-": "sub",
    "*": "mul",
    "/": "truediv",
    "//": "floordiv",
    "%": "mod",
    "**": "pow",
    "&": "and_",
    "|": "or_",
    "^": "xor",
}


def _is_library_value(v: Value) -> bool:
    return library_types(v.type, v.type)


def extension_identity(t, op, a: Value, b: Value) -> bool:
    """``a is b`` / ``a is not b`` with a library's value as an operand, where the
    library's templates of ``operator.is_`` type it (``x is NA``); False otherwise
    (identity then folds as for any object)."""
    if not (_is_library_value(a) or _is_library_value(b)):
        return False
    from cujit.infer.calls import CallSite
    from cujit.infer.extension_templates import template_call

    site = CallSite(op, f"operator {op.op}", [a, b], {})
    if op.op == "is":
        return template_call(t, site, operator.is_, [a, b]) is not None
    from cujit.infer.extension_casts import FreshSite

    same = template_call(t, FreshSite(t, op.loc, "operator is"), operator.is_, [a, b])
    if same is None:
        return False
    cond = t.cast(same, boolean, op.loc)
    result = Value(op.result.id, boolean)
    t.emit(UnaryOp(loc=op.loc, result=result, op="not", operand=cond))
    return True


def extension_operator(t, op, a: Value, b: Value) -> bool:
    """``a + b``, ``a < b`` (the binary operators and comparisons) where an operand is
    a library's value: typed by the library's templates of ``operator.add`` (...) and
    built by its implementation, else its overload called as a device function; False
    where neither operand is one."""
    if not (_is_library_value(a) or _is_library_value(b)):
        return False
    from cujit.infer.calls import CallSite
    from cujit.infer.extension_calls import overload_device_function
    from cujit.infer.extension_templates import COMPARISONS, template_call
    from cujit.infer.function_calls import call_device_function

    name = BINARY_OPERATORS.get(op.op) or COMPARISONS.get(op.op)
    func = getattr(operator, name) if name else None
    site = CallSite(op, f"operator {op.op}", [a, b], {})
    if func is not None and template_call(t, site, func, [a, b]) is not None:
        return True
    devfn = overload_device_function(func, site, t) if func is not None else None
    if devfn is None:
        raise TypingError(
            f"unsupported operand types for {op.op}: {front_type(a.type)} and {front_type(b.type)}",
            op.loc,
            hint=f"a library defines it with overload(operator.{name or '...'})",
        )
    call_device_function(t, op, devfn, site)
    return True


def extension_unary(t, op, a: Value) -> bool:
    """``-a``, ``+a``, ``~a`` of a library's value, typed by its templates of
    ``operator.neg`` (...); False where ``a`` is not a library's value."""
    if not _is_library_value(a):
        return False
    from cujit.infer.calls import CallSite
    from cujit.infer.extension_templates import template_call, unary_function

    func = unary_function(op.op)
    site = CallSite(op, f"unary operator {op.op}", [a], {})
    if func is None or template_call(t, site, func, [a]) is None:
        shown = front_type(a.type)
        raise TypingError(f"unsupported operand type for unary {op.op}: {shown}", op.loc)
    return True
