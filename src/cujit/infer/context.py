"""The state of one typing sweep over a function, and the helpers every rule uses.

A sweep walks the blocks in reverse post-order and rewrites each op into typed
ops.  ``Typer`` holds what the rules share: the typed value each untyped value
id now stands for (``env``), the compile-time Python value of constants
(``consts``: shapes, ``ndim`` and tuple indices must be known at compile time),
the ops emitted so far in the current block, and fresh value ids for the casts
that rules insert.

A value whose type is not known yet (a loop-carried parameter before its back
edge has been seen) has type ``None`` in a non-final sweep; the driver skips
ops that read one.  In the final sweep every value is typed.
"""

from __future__ import annotations

import numpy as np

from cujit.diagnostics import Loc, TypingError, UnsupportedError
from cujit.infer.numeric import describe
from cujit.ir import BuildTuple, Cast, Const, Function, Op, TupleGet, Value
from cujit.types import (
    Array,
    NamedTuple,
    NoneType,
    PyObject,
    Scalar,
    Tuple,
    Type,
    boolean,
    complex128,
    float64,
    from_dtype,
    int64,
    is_namedtuple_class,
    none,
    uint64,
)
from cujit.types.enums import EnumMember
from cujit.types.extension import library_types
from cujit.types.extension_typing import library_constants
from cujit.types.foreign import from_numba_type, is_numba_type

STRING_ERROR = "strings are not supported in kernels"


def const_type(value: object) -> tuple[Type, object] | None:  # noqa: C901 -- one branch per Python constant kind, each with NumPy's typing rule for it
    """The type of a Python constant and its value as the IR stores it.

    Numbers keep a plain Python value already in range of the type (numpy
    scalars become Python numbers); tuples of numbers are Tuple consts (a
    namedtuple's: NamedTuple); other objects (modules, functions, dtypes,
    strings) are compile-time PyObjects.
    None means an int too large for any 64-bit type.
    """
    if value is None:
        return none, None
    if isinstance(value, (bool, np.bool_)):
        return boolean, bool(value)
    if isinstance(value, int):
        if -(2**63) <= value < 2**63:
            return int64, value
        if 0 <= value < 2**64:
            return uint64, value  # numba types such literals as uint64 too
        return None
    if isinstance(value, float):
        return float64, value
    if isinstance(value, complex):
        return complex128, value
    if isinstance(value, np.generic) and value.dtype.kind in "biufc":
        return from_dtype(value.dtype), value.item()
    if isinstance(value, np.generic) and value.dtype.name == "bfloat16":  # ml_dtypes'
        return from_dtype(value.dtype), float(value)
    if isinstance(value, tuple) and value:
        items = [const_type(v) for v in value]
        if all(it is not None and isinstance(it[0], (Scalar, Tuple)) for it in items):
            types = tuple(it[0] for it in items)
            t = NamedTuple(types, type(value)) if is_namedtuple_class(type(value)) else Tuple(types)
            return t, tuple(it[1] for it in items)
    if is_numba_type(value):  # numba.int32(x), cuda.local.array(n, numba.float32)
        value = from_numba_type(value)
    return PyObject(value), value


class Typer:
    """Typing state for one sweep over ``fn``."""

    def __init__(
        self,
        fn: Function,
        param_types: dict[int, Type],
        undef_types: dict[int, Type],
        final: bool,
        callees=None,
    ):
        self.fn = fn
        self.final = final
        # Device functions: the compilation's ``function_calls.Callees`` (None where
        # calls to them cannot be compiled), and the ones this sweep's calls use.
        self.callees = callees
        self.callee_fns: dict[str, Function] = {}  # symbol -> typed callee
        self.callee_symbols: dict[int, str] = {}  # id of a cached callee -> its symbol
        self.param_types = param_types
        self.undef_types = undef_types
        self.var_types: dict[str, Type] = {}  # variable -> its assignments' type (uninit.py)
        self.unassigned_reads: set[str] = set()  # variables read where none is assigned
        self.env: dict[int, Value] = {}
        self.consts: dict[int, object] = {}
        self.undef_names: dict[int, str] = {}
        self.exc_messages: dict[int, str] = {}  # exception value id -> its message
        self.def_locs: dict[int, Loc] = {}  # where each value was computed, for messages
        self.tuple_items: dict[int, tuple[Value, ...]] = {}  # BuildTuple results -> items
        self.const_arrays: set[int] = set()  # arrays frozen into constant memory: read-only
        self.range_bounds: dict[int, tuple[Value, ...]] = {}  # range() results -> bounds
        self.next_id = fn.max_value_id() + 1  # reset every sweep: ids stay deterministic
        self.ops: list[Op] = []
        self._casts: dict[tuple[int, Type], Value] = {}

    def check_writable(self, ary: Value, loc: Loc, what: str) -> None:
        """A store into an array frozen into the kernel (``cuda.const.array_like``, a
        global or closure NumPy array) is a TypingError at the store's line."""
        if ary.id in self.const_arrays:
            raise TypingError(
                f"{what} a constant array: cuda.const.array_like and global or closure NumPy "
                "arrays are frozen into the kernel's constant memory when it is compiled",
                loc,
                hint="pass the array as a kernel argument to write into it",
            )

    def start_block(self) -> None:
        """Begin emitting a new block (casts made in another block are not reused)."""
        self.ops = []
        self._casts = {}

    # -- values -------------------------------------------------------------

    def value(self, v: Value) -> Value:
        """The typed value standing for untyped ``v``."""
        return self.env[v.id]

    def fresh(self, t: Type) -> Value:
        v = Value(self.next_id, t)
        self.next_id += 1
        return v

    def emit(self, op: Op) -> Value | None:
        """Append ``op`` to the current block; its result now names itself."""
        self.ops.append(op)
        if op.result is not None:
            self.env[op.result.id] = op.result
            self.def_locs.setdefault(op.result.id, op.loc)
        return op.result

    def alias(self, old: Value, new: Value) -> None:
        """Uses of untyped ``old`` read ``new`` from now on (no op needed)."""
        self.env[old.id] = new
        if new.id in self.consts:
            self.consts[old.id] = self.consts[new.id]

    def const(self, value: object, loc: Loc, result: Value | None = None) -> Value:
        """Emit a Const for a Python value (into ``result``'s id when given)."""
        typed = const_type(value)
        if typed is None:
            raise TypingError(f"integer constant {value} does not fit in 64 bits", loc)
        t, stored = typed
        if isinstance(t, PyObject) and library_constants():  # a library's object
            from cujit.infer.extension_casts import library_constant

            made = library_constant(self, value, loc, result)
            if made is not None:
                return made
        out = Value(result.id, t) if result is not None else self.fresh(t)
        self.emit(Const(loc=loc, result=out, value=stored))
        if not isinstance(t, PyObject):
            self.consts[out.id] = stored
        return out

    def const_value(self, v: Value, default=None):
        """The compile-time value of typed ``v`` (a number, tuple or object), if known."""
        if isinstance(v.type, PyObject):
            return v.type.value
        if isinstance(v.type, NoneType):
            return None
        return self.consts.get(v.id, default)

    # -- conversions --------------------------------------------------------

    def cast(self, v: Value, t: Type, loc: Loc) -> Value:
        """``v`` converted to ``t``: a Cast for scalars and for an array seen as layout
        'A', item-wise for tuples."""
        if v.type == t:
            return v
        if (
            "OptionalType" in (type(v.type).__name__, type(t).__name__)
            or EnumMember in (type(v.type), type(t))
            or library_types(v.type, t)
        ):
            return self._wrapped_cast(v, t, loc)
        if accepts_array(t, v.type):
            return self.emit(Cast(loc=loc, result=self.fresh(t), operand=v))
        if isinstance(v.type, Scalar) and isinstance(t, Scalar):
            if v.type.is_complex and not t.is_complex and t != boolean:
                raise TypingError(
                    f"cannot convert {v.type} to {t}: take .real, .imag or "
                    "abs() of a complex number",
                    loc,
                )
            if (v.type.kind in "Mm" or t.kind in "Mm") and v.type.kind != t.kind:
                raise TypingError(
                    f"cannot convert {v.type} to {t}: datetimes and "
                    "timedeltas convert only to their own kind",
                    loc,
                )
            key = (v.id, t)  # one cast per value and type per block (i < n, x[i], y[i])
            if key not in self._casts:
                self._casts[key] = self.emit(Cast(loc=loc, result=self.fresh(t), operand=v))
            return self._casts[key]
        if isinstance(v.type, Tuple) and isinstance(t, Tuple) and len(v.type.items) == len(t.items):
            items = []
            for i, (src, dst) in enumerate(zip(v.type.items, t.items, strict=True)):
                item = self.emit(TupleGet(loc=loc, result=self.fresh(src), tuple=v, index=i))
                items.append(self.cast(item, dst, loc))
            return self.emit(BuildTuple(loc=loc, result=self.fresh(t), items=tuple(items)))
        raise TypingError(f"cannot convert {describe(v.type)} to {describe(t)}", loc)

    def _wrapped_cast(self, v: Value, t: Type, loc: Loc) -> Value:
        """Casts into or out of an optional or a run-time enum member: an IntEnum member
        as a number, a member constant as a run-time member of its class
        (``infer/enums.py``); a library's type through its casts (``lower_cast``)."""
        from cujit.infer import enums

        if library_types(v.type, t):
            from cujit.infer.extension_casts import library_cast

            return library_cast(self, v, t, loc)

        if "OptionalType" in (type(v.type).__name__, type(t).__name__):
            return self._optional_cast(v, t, loc)
        if isinstance(v.type, EnumMember) and v.type.is_int and isinstance(t, Scalar):
            return self.cast(enums.to_value(self, v, loc), t, loc)
        member = enums.member_constant(self, v)
        if isinstance(t, EnumMember) and member is not None:
            return enums.from_constant(self, member, t, loc)
        raise TypingError(f"cannot convert {describe(v.type)} to {describe(t)}", loc)

    def _optional_cast(self, v: Value, t: Type, loc: Loc) -> Value:
        """An optional (``infer/optional.py``) as the number it holds, or a number or
        None as an optional."""
        from cujit.infer import optional

        if isinstance(v.type, optional.OptionalType) and isinstance(t, Scalar):
            return self.cast(optional.unwrap(self, v, loc), t, loc)
        if isinstance(t, optional.OptionalType) and isinstance(v.type, (Scalar, NoneType)):
            return optional.to_optional(self, v, t, loc)
        raise TypingError(f"cannot convert {describe(v.type)} to {describe(t)}", loc)

    def to_bool(self, v: Value, loc: Loc) -> Value:
        """Python truthiness of ``v`` as a bool value (numbers: ``!= 0``)."""
        t = v.type
        if isinstance(t, Scalar):
            return self.cast(v, boolean, loc)
        if isinstance(t, NoneType):
            self.check_defined(v, loc)
            return self.const(False, loc)
        if isinstance(t, PyObject):
            self.check_not_string(v, loc)
            return self.const(bool(t.value), loc)
        if isinstance(t, Tuple):
            return self.const(bool(t.items), loc)
        if library_types(t, t):  # a library's value: its templates of operator.truth
            from cujit.infer.extension_templates import library_truth

            return library_truth(self, v, loc)
        raise TypingError(f"cannot use a value of type {describe(t)} as a condition", loc)

    # -- checks -------------------------------------------------------------

    def check_not_string(self, v: Value, loc: Loc) -> None:
        if isinstance(v.type, PyObject) and isinstance(v.type.value, str):
            # Point at the string itself: that is the line to change.
            raise UnsupportedError(STRING_ERROR, self.def_locs.get(v.id, loc))
        self.check_not_list(v, loc)

    def check_not_list(self, v: Value, loc: Loc) -> None:
        from cujit.infer.list_display import LIST_MESSAGE, is_constant_list

        if is_constant_list(v):  # a list display used as a value: at the display
            raise UnsupportedError(LIST_MESSAGE, self.def_locs.get(v.id, loc))

    def check_defined(self, v: Value, loc: Loc) -> None:
        name = self.undef_names.get(v.id)
        if name is not None and isinstance(v.type, NoneType):
            raise TypingError(f"local variable '{name}' may be used before it is assigned", loc)

    def scalar(self, v: Value, loc: Loc, what: str) -> Scalar:
        """The Scalar type of ``v``, or an error saying ``what`` needed a number."""
        if isinstance(v.type, Scalar):
            return v.type
        if isinstance(v.type, EnumMember) and v.type.is_int:  # converts where cast
            return v.type.dtype
        self.check_not_string(v, loc)
        self.check_defined(v, loc)
        raise TypingError(f"{what} needs a number, not {describe(v.type)}", loc)

    def integer(self, v: Value, loc: Loc, what: str) -> Value:
        """``v`` as an int64, or an error when it is not an integer (or bool)."""
        t = self.scalar(v, loc, what)
        if t.is_float:
            raise TypingError(f"{what} must be an integer, not {t}", loc)
        return self.cast(v, int64, loc)

    def as_float(self, v: Value, loc: Loc, what: str) -> Value:
        """``v`` as a float (ints and bools go to float64, as numba does)."""
        t = self.scalar(v, loc, what)
        return v if t.is_float else self.cast(v, float64, loc)


def accepts_array(declared: Type, given: Type) -> bool:
    """Whether an array of type ``given`` passes where ``declared`` is asked for: the same
    dtype and ndim, and ``declared`` of layout 'A' (any strides), as numba converts."""
    return (
        isinstance(declared, Array)
        and isinstance(given, Array)
        and declared.layout == "A"
        and declared.dtype == given.dtype
        and declared.ndim == given.ndim
    )
