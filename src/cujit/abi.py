"""The kernel parameter layout: how each argument type becomes kernel parameters.

This is the one contract shared by code generation and the runtime's launch path.

- A scalar is one parameter of its own type; ``bool`` travels as one byte (0 or 1).
- An array of ``ndim`` n is ``1 + 2n`` parameters: the data pointer, then the n
  extents (int64), then the n strides in bytes (int64).
- A tuple is its items' parameters, in order.
"""

from __future__ import annotations

from cujit.types.core import Array, Scalar, Tuple, Type

# Parameter kinds: a NumPy dtype character per scalar, 'ptr' for a device pointer.
POINTER = "ptr"


def param_kinds(t: Type) -> list[str]:
    """The flat list of parameter kinds one argument of type ``t`` occupies."""
    if isinstance(t, Scalar):
        return ["uint8" if t.kind == "b" else t.name]
    if isinstance(t, Array):
        return [POINTER] + ["int64"] * (2 * t.ndim)
    if isinstance(t, Tuple):
        out: list[str] = []
        for item in t.items:
            out.extend(param_kinds(item))
        return out
    raise TypeError(f"values of type {t} cannot be kernel parameters")
