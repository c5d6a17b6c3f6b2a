"""numba's ``_type_annotation`` of a compiled kernel: ``typemap``, the type of each of
the Python function's local variables, read off the typed IR.

A variable that holds values of several types over its life (SSA values named by
``Function.var_names``) maps to the type of its first value.  Types are shown as the
user wrote them: an array of a library's struct-model type has that type as its dtype
(cujit holds it as a Record, ``types.extension.storage``).
"""

from __future__ import annotations

from dataclasses import field

from cujit import ir
from cujit.frozen import frozen
from cujit.types import Array, Record, Type


@frozen
class TypeAnnotation:
    """``typemap``: variable name -> type (numba's ``TypeAnnotation.typemap``)."""

    typemap: dict[str, Type] = field(default_factory=dict)


def _value_types(fn: ir.Function) -> dict[int, Type]:
    types: dict[int, Type] = {}
    for block in fn.blocks:
        for p in block.params:
            types[p.id] = p.type
        for op in block.ops:
            if op.result is not None:
                types[op.result.id] = op.result.type
    return types


def user_type(t: Type) -> Type:
    """``t`` as the user spells it: a Record standing for an extension type is that type."""
    if isinstance(t, Record) and t.origin is not None:
        return t.origin
    if isinstance(t, Array) and isinstance(t.dtype, Record) and t.dtype.origin is not None:
        return Array(t.dtype.origin, t.ndim, t.layout)
    return t


def annotate(fn: ir.Function | None) -> TypeAnnotation:
    """The annotation of typed function ``fn`` (empty where no typed IR was kept)."""
    if fn is None:
        return TypeAnnotation()
    types = _value_types(fn)
    typemap: dict[str, Type] = {}
    for name, arg in zip(fn.arg_names, fn.args, strict=False):
        typemap[name] = user_type(arg.type)
    for vid, name in fn.var_names:
        if name not in typemap and vid in types:
            typemap[name] = user_type(types[vid])
    return TypeAnnotation(typemap)
