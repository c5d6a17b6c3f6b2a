"""numba's names in ``cuda.types`` for the types cujit has.

- the C and NumPy spellings of the scalars (``ulonglong``, ``intc``, ``np_float32``...),
  each the cujit scalar of its width and signedness (numba's: ``long_`` is int64):
  ``ALIASES``, defined in ``core`` so that ``cujit.types`` has them without this module;
- the domains (``integer_domain``, ``real_domain``...) as frozensets of scalars;
- ``UniTuple(dtype, count)`` and ``Tuple(items)`` (a list works too);
- the kinds ``Integer``, ``Float``, ``Complex``, ``Boolean``, ``Number``: classes that
  ``isinstance`` matches against scalars of that kind;
- ``IntegerLiteral(value)`` (a ``Literal``) and ``Omitted(value)``: numba's literal and
  omitted-argument types, which stand for int64 and for an argument left out;
- ``CPointer(dtype)``: a pointer to ``dtype`` values (a kernel's or foreign function's
  argument: ``p[i]`` reads and writes an element; it travels as its address);
- ``Any``: a class every type is an instance of (a lowering's or cast's argument spec);
  ``Function(template)`` and ``Module(module)``: the types numba's typing registries
  take for a global function typed by a template and for a module (``cudadecl``).
"""

from __future__ import annotations

from cujit.frozen import frozen
from cujit.types.core import ALIASES, SCALAR_BY_NAME, Scalar, Tuple, Type


def _names(*names: str) -> frozenset[Scalar]:
    return frozenset(SCALAR_BY_NAME[n] for n in names)


signed_domain = _names("int8", "int16", "int32", "int64")
unsigned_domain = _names("uint8", "uint16", "uint32", "uint64")
integer_domain = signed_domain | unsigned_domain
real_domain = _names("float32", "float64")
complex_domain = _names("complex64", "complex128")
number_domain = integer_domain | real_domain | complex_domain


class _UniTupleMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tuple) and all(t == obj.items[0] for t in obj.items)


class UniTuple(metaclass=_UniTupleMeta):
    """numba's homogeneous tuple type: ``UniTuple(dtype, count)`` is the Tuple of
    ``count`` items of ``dtype``, and ``isinstance(t, UniTuple)`` holds for such tuples."""

    def __new__(cls, dtype: Type, count: int) -> Tuple:
        if not isinstance(count, int) or count < 0:
            raise TypeError(f"UniTuple's count must be a non-negative int, not {count!r}")
        return Tuple((dtype,) * count)


class _KindMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        if isinstance(obj, IntegerLiteral):  # numba's literal is an Integer too
            return "i" in cls.kinds
        return isinstance(obj, Scalar) and obj.kind in cls.kinds


class Number(metaclass=_KindMeta):
    """numba's abstract scalar kinds: ``isinstance(t, types.Integer)`` and so on."""

    kinds = "iufc"


class Integer(Number):
    kinds = "iu"


class Float(Number):
    kinds = "f"


class Complex(Number):
    kinds = "c"


class Boolean(metaclass=_KindMeta):
    kinds = "b"


class _AnyMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Type)


class Any(metaclass=_AnyMeta):
    """numba's ``types.Any`` as an argument spec: it matches every type."""


class Function(Type):
    """numba's ``types.Function(template)``: a global function typed by templates."""

    def __init__(self, template: type) -> None:
        self.templates = (template,)
        self.typing_key = getattr(template, "key", None)
        super().__init__(name=f"Function({getattr(template, '__name__', template)})")

    @property
    def key(self) -> object:
        return self.templates


class Module(Type):
    """numba's ``types.Module(module)``: a module a kernel reads attributes of."""

    def __init__(self, pymod) -> None:
        self.pymod = pymod
        super().__init__(name=f"Module({getattr(pymod, '__name__', pymod)})")

    @property
    def key(self) -> object:
        return self.pymod


@frozen(repr=False)
class CPointer(Type):
    """numba's pointer type ``CPointer(dtype)``: kernels hold it as the address (a
    64-bit integer, ``abi.param_kinds``); ``p[i]`` is the element ``i`` places on."""

    dtype: Type
    addrspace: int | None = None

    __hash__ = Type._cached_hash

    def __call__(self, *args: Type):
        from cujit.types.core import Signature

        return Signature(self, tuple(args))

    def __str__(self) -> str:
        return f"pointer({self.dtype})"


class Literal(Type):
    """numba's base of the types of constants (``isinstance(t, types.Literal)``)."""


@frozen(repr=False)
class IntegerLiteral(Literal):
    """numba's type of an integer constant; stands for int64 (``literal_type``)."""

    literal_value: int

    __hash__ = Type._cached_hash

    @property
    def literal_type(self) -> Scalar:
        return SCALAR_BY_NAME["int64"]

    def __str__(self) -> str:
        return f"Literal[int]({self.literal_value})"


@frozen(repr=False)
class Omitted(Type):
    """numba's type of an argument left out of a call: its default ``value`` is used."""

    value: object

    __hash__ = Type._cached_hash

    def __str__(self) -> str:
        return f"omitted(default={self.value!r})"


__all__ = [
    "ALIASES",
    "Any",
    "Boolean",
    "CPointer",
    "Complex",
    "Float",
    "Function",
    "Integer",
    "IntegerLiteral",
    "Literal",
    "Module",
    "Number",
    "Omitted",
    "UniTuple",
    "complex_domain",
    "integer_domain",
    "number_domain",
    "real_domain",
    "signed_domain",
    "unsigned_domain",
]
