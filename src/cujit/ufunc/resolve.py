"""NumPy's ufunc rules for cujit's GPU ufuncs: operand kinds, loop selection, broadcasting.

A ufunc holds loops (input dtypes -> output dtype) in the order they were declared.  A
call picks the first loop to which every input casts safely, as NumPy's default type
resolver does; Python scalars are weak (NEP 50): an ``int`` fits any integer or inexact
loop, a ``float`` any inexact one, a ``complex`` any complex one (when every operand
is a Python scalar, they take their default types).
"""

from __future__ import annotations

import numpy as np

from cujit.frozen import frozen
from cujit.types import Array, Scalar, Signature, from_dtype, parse_signature, to_type


class UFuncTypeError(TypeError):
    """No loop of a ufunc accepts the operands, or an output cannot hold the result."""


@frozen
class Loop:
    """One compiled-on-demand loop: the input types and the output type."""

    inputs: tuple[Scalar, ...]
    output: Scalar

    def __str__(self) -> str:
        return "".join(t.dtype.char for t in self.inputs) + "->" + self.output.dtype.char


def parse_loop(sig, nin: int | None = None) -> Loop:
    """A vectorize signature (``"float32(float32, float32)"`` or a Signature) as a Loop."""
    s: Signature = parse_signature(sig)
    types = (*s.args, s.return_type)
    for t in types:
        if isinstance(t, Array) or not isinstance(t, Scalar):
            raise TypeError(
                f"a vectorize signature takes and returns scalars, not {t} "
                f"(in {sig!r}); use guvectorize for array arguments"
            )
    if nin is not None and len(s.args) != nin:
        raise TypeError(f"signature {sig!r} has {len(s.args)} arguments; the function takes {nin}")
    return Loop(tuple(s.args), s.return_type)


def parse_inputs(sig, nin: int | None = None) -> tuple[Scalar, ...] | None:
    """The input types of a signature given as a tuple (or list) of argument types
    alone, as numba takes one; None for a signature of another form."""
    if not isinstance(sig, (tuple, list)):
        return None
    inputs = tuple(to_type(t) for t in sig)
    for t in inputs:
        if not isinstance(t, Scalar):
            raise TypeError(
                f"a vectorize signature takes scalars, not {t} (in {sig!r}); "
                "use guvectorize for array arguments"
            )
    if nin is not None and len(inputs) != nin:
        raise TypeError(f"signature {sig!r} has {len(inputs)} arguments; the function takes {nin}")
    return inputs


def operand_dtype(value) -> np.dtype:
    """The dtype a call operand brings: an array's, a NumPy scalar's, or Python's default."""
    dt = getattr(value, "dtype", None)
    if dt is not None:
        return np.dtype(dt)
    cai = getattr(value, "__cuda_array_interface__", None)  # another library's array
    if cai is not None:
        return np.dtype(cai["typestr"])
    if isinstance(value, bool):
        return np.dtype(np.bool_)
    if isinstance(value, int):
        return np.dtype(np.int64)
    if isinstance(value, float):
        return np.dtype(np.float64)
    if isinstance(value, complex):
        return np.dtype(np.complex128)
    raise TypeError(f"unsupported operand {value!r} of type {type(value).__name__}")


def is_weak(value) -> bool:
    """A Python scalar: its type yields to the array operands' (NEP 50)."""
    return isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic)


def _fits(value, target: np.dtype, weak: bool) -> bool:
    if not (weak and is_weak(value)):
        return np.can_cast(operand_dtype(value), target, "safe")
    if isinstance(value, bool):
        return True
    if isinstance(value, int):
        if target.kind in "fc":
            return True
        if target.kind in "iu":
            info = np.iinfo(target)
            return info.min <= value <= info.max
        return False
    if isinstance(value, float):
        return target.kind in "fc"
    return target.kind == "c"


def select_loop(name: str, loops: list[Loop], operands, fallback: str | None = None) -> Loop:
    """The first loop every operand casts to safely, else (with ``fallback``, numba's
    gufunc rule) the first one they cast to by that rule; a TypeError naming ``name``."""
    # Python scalars are weak only beside a typed operand; alone they are int64/float64.
    weak = not all(is_weak(v) for v in operands)
    for loop in loops:
        if all(_fits(v, t.dtype, weak) for v, t in zip(operands, loop.inputs, strict=True)):
            return loop
    for loop in loops if fallback else ():
        if all(
            np.can_cast(operand_dtype(v), t.dtype, fallback)
            for v, t in zip(operands, loop.inputs, strict=True)
        ):
            return loop
    given = "".join(operand_dtype(v).char for v in operands)
    have = ", ".join(str(lp) for lp in loops) or "none"
    raise UFuncTypeError(
        f"ufunc '{name}' not supported for the input types ({given}), and "
        f"the inputs could not be safely coerced to any supported types "
        f"according to the casting rule 'safe' (loops: {have})"
    )


def dynamic_types(operands) -> tuple[Scalar, ...]:
    """The argument types a new loop of a lazy ufunc is compiled for."""
    return tuple(from_dtype(operand_dtype(v)) for v in operands)


def broadcast_shape(name: str, shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    """NumPy's broadcast of ``shapes``; a ValueError naming ``name`` and the shapes."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        text = " ".join(str(tuple(s)) for s in shapes)
        raise ValueError(
            f"ufunc '{name}': operands could not be broadcast together with shapes {text}"
        ) from None


def broadcast_strides(
    shape: tuple[int, ...], strides: tuple[int, ...], out_shape: tuple[int, ...]
) -> tuple[int, ...]:
    """An operand's byte strides viewed at ``out_shape``: 0 where it is broadcast."""
    pad = len(out_shape) - len(shape)
    result = [0] * pad
    for n, s in zip(shape, strides, strict=True):
        result.append(0 if n == 1 else s)
    return tuple(result)


def check_output(name: str, out, loop: Loop, shape: tuple[int, ...]) -> None:
    """``out=`` must have the broadcast shape and a dtype the result casts to (same_kind)."""
    if tuple(out.shape) != tuple(shape):
        raise ValueError(
            f"ufunc '{name}': output operand has shape {tuple(out.shape)}, "
            f"but the broadcast shape of the inputs is {tuple(shape)}"
        )
    if not np.can_cast(loop.output.dtype, out.dtype, "same_kind"):
        raise UFuncTypeError(
            f"ufunc '{name}' output (typecode '{loop.output.dtype.char}') "
            f"could not be coerced to provided output parameter (typecode "
            f"'{np.dtype(out.dtype).char}') according to the casting rule "
            "'same_kind'"
        )
