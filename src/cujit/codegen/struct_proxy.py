"""Struct proxies: an extension's lowering code reads and writes the members of a
struct-model value by name, over an llvmlite builder (numba's ``create_struct_proxy``).

The value is an LLVM literal struct of the members' in-memory types (a bool is a byte),
which is also the bytes of the type's Record (``types.extension.record_of``: members at
their natural alignment).  The proxy owns a stack slot in the function's entry block;
``proxy.x = v`` stores a member, ``proxy.x`` loads it, ``proxy._getvalue()`` loads the
whole struct and ``proxy._getpointer()`` gives the slot.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit.codegen.lltypes import I1, I8, memory_type
from cujit.types.core import Scalar, Type
from cujit.types.extension import StructModel, model_of


def struct_type(fe_type: Type) -> tuple[ll.LiteralStructType, StructModel]:
    """The LLVM struct of a struct-model type's members, and the model."""
    model = model_of(fe_type)
    if not isinstance(model, StructModel):
        raise TypeError(f"{fe_type} has no struct data model")
    members = []
    for name, t in model.members:
        if not isinstance(t, Scalar):
            raise TypeError(f"member {name!r} of {fe_type} is {t}: members are scalars")
        members.append(memory_type(t))
    return ll.LiteralStructType(members), model


class _StructProxy:
    """See the module docstring; made by ``create_struct_proxy(fe_type)``."""

    _fe_type: Type

    def __init__(self, context, builder: ll.IRBuilder, value=None, ref=None) -> None:
        ty, model = struct_type(self._fe_type)
        object.__setattr__(self, "_context", context)
        object.__setattr__(self, "_builder", builder)
        object.__setattr__(self, "_model", model)
        if ref is None:
            with builder.goto_entry_block():
                ref = builder.alloca(ty)
            builder.store(value if value is not None else ll.Constant(ty, None), ref)
        object.__setattr__(self, "_ref", ref)

    def _member(self, name: str) -> tuple[ll.Value, Scalar]:
        try:
            pos = self._model.get_field_position(name)
        except ValueError:
            raise AttributeError(f"{self._fe_type} has no member {name!r}") from None
        ptr = self._builder.gep(
            self._ref, [ll.Constant(ll.IntType(32), 0), ll.Constant(ll.IntType(32), pos)]
        )
        return ptr, self._model.members[pos][1]

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        ptr, t = self._member(name)
        value = self._builder.load(ptr)
        return self._builder.trunc(value, I1) if t.kind == "b" else value

    def __setattr__(self, name: str, value) -> None:
        ptr, t = self._member(name)
        if t.kind == "b" and value.type == I1:
            value = self._builder.zext(value, I8)
        if value.type != ptr.type.pointee:
            raise TypeError(f"member {name!r} of {self._fe_type} is {t}, not {value.type}")
        self._builder.store(value, ptr)

    def _getvalue(self) -> ll.Value:
        return self._builder.load(self._ref)

    def _getpointer(self) -> ll.Value:
        return self._ref


def create_struct_proxy(fe_type: Type) -> type:
    """A proxy class for values of ``fe_type``: ``cls(context, builder, value=None,
    ref=None)``."""
    return type(f"StructProxy_{fe_type}", (_StructProxy,), {"_fe_type": fe_type})
