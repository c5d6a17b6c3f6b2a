"""``Masked``: a value and whether it is valid (a row of a nullable column).

In kernels a ``Masked`` is the extension type ``MaskedType(value_type)``, laid out as
the struct ``{value, valid}``.  Arithmetic between masked values (and a masked value
and a number) is valid where every operand is; the value of an invalid result is
unspecified (the engine writes it, the mask says to ignore it).
"""

from __future__ import annotations

import operator

from cujit import types
from cujit.cuda import cgutils
from cujit.extending import (
    lower_builtin,
    make_attribute_wrapper,
    models,
    overload,
    register_model,
    type_callable,
    typeof_impl,
)


class Masked:
    """A host-side masked value (what the kernels' values stand for)."""

    def __init__(self, value, valid: bool = True) -> None:
        self.value, self.valid = value, bool(valid)

    def __repr__(self) -> str:
        return f"Masked({self.value!r}, {self.valid})" if self.valid else "NA"


NA = Masked(0, False)


class MaskedType(types.Type):
    """The kernels' type of a masked ``value_type`` value."""

    def __init__(self, value_type: types.Type) -> None:
        self.value_type = value_type
        super().__init__(name=f"Masked({value_type})")


@typeof_impl.register(Masked)
def _typeof_masked(value: Masked, context) -> MaskedType:
    return MaskedType(types.typeof(value.value))


@register_model(MaskedType)
class _MaskedModel(models.StructModel):
    def __init__(self, dmm, fe_type: MaskedType) -> None:
        super().__init__(dmm, fe_type, [("value", fe_type.value_type), ("valid", types.boolean)])


make_attribute_wrapper(MaskedType, "value", "value")
make_attribute_wrapper(MaskedType, "valid", "valid")


@type_callable(Masked)
def _type_masked(context):
    def typer(value, valid):
        if isinstance(value, types.Number) and valid == types.boolean:
            return MaskedType(value)
        return None

    return typer


@lower_builtin(Masked, types.Number, types.Boolean)
def _lower_masked(context, builder, sig, args):
    masked = cgutils.create_struct_proxy(sig.return_type)(context, builder)
    masked.value, masked.valid = args
    return masked._getvalue()


def _arithmetic(fn):
    """The overload of ``fn`` (operator.add...) for masked operands."""

    def typing(a, b):
        a_masked, b_masked = isinstance(a, MaskedType), isinstance(b, MaskedType)
        if a_masked and b_masked:
            return lambda a, b: Masked(fn(a.value, b.value), a.valid & b.valid)
        if a_masked and isinstance(b, types.Number):
            return lambda a, b: Masked(fn(a.value, b), a.valid)
        if b_masked and isinstance(a, types.Number):
            return lambda a, b: Masked(fn(a, b.value), b.valid)
        return None

    overload(fn)(typing)


for _fn in (operator.add, operator.sub, operator.mul, operator.truediv):
    _arithmetic(_fn)
