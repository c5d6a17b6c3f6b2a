"""Element offsets of contiguous arrays, written so that neighbouring accesses share one
address and differ by a constant.

A C-contiguous ``a[z, y + 1, x]`` is at element ``z*s0 + (y + 1)*s1 + x`` with
``s1 = n2``, ``s0 = n1*n2``.  Multiplying out the constant part of each index,
``(z*s0 + y*s1 + x) + 1*s1``, gives every access of a stencil the same variable part
(computed once, after LLVM's common-subexpression elimination) plus a constant number
of strides: one address and small offsets, as a hand-written ``u[i + nx]`` has.  The
nested form ``((z*n1 + y + 1)*n2 + x)`` would need two multiplies per access.  In
two's-complement arithmetic ``(y + c)*s == y*s + c*s`` always, so the split changes no
address.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit.codegen.lltypes import i64

_SPLIT_DEPTH = 4  # (i + 1) - 2 ... : a few constant terms deep is what source text writes


def split_constant(v: ll.Value) -> tuple[ll.Value, int]:
    """``(base, c)`` with ``v == base + c``, peeling ``+ const`` and ``- const`` from the
    instruction that computes ``v`` (``c`` is 0 when nothing peels)."""
    c = 0
    for _ in range(_SPLIT_DEPTH):
        if not isinstance(v, ll.Instruction) or v.opname not in ("add", "sub"):
            break
        lhs, rhs = v.operands
        if isinstance(rhs, ll.Constant) and isinstance(rhs.constant, int):
            c += rhs.constant if v.opname == "add" else -rhs.constant
            v = lhs
        elif v.opname == "add" and isinstance(lhs, ll.Constant) and isinstance(lhs.constant, int):
            c += lhs.constant
            v = rhs
        else:
            break
    return v, c


def element_strides(b: ll.IRBuilder, layout: str, shape: list) -> list:
    """Per axis, the distance in elements between neighbours along it (``None``: 1)."""
    n = len(shape)
    order = list(range(n - 1, -1, -1)) if layout == "C" else list(range(n))
    strides: list = [None] * n
    step = None
    for pos, k in enumerate(order):
        if pos:
            prev = shape[order[pos - 1]]
            step = prev if step is None else b.mul(step, prev)
        strides[k] = step
    return strides


def contiguous_pointer(b: ll.IRBuilder, data: ll.Value, layout: str, idx: list, shape: list):
    """The address of element ``idx`` of a C- or F-contiguous array at ``data``."""
    strides = element_strides(b, layout, shape)
    variable = None
    constant = None
    for k in range(len(idx)):
        base, c = split_constant(idx[k])
        term = base if strides[k] is None else b.mul(base, strides[k])
        variable = term if variable is None else b.add(variable, term)
        if c:
            shift = i64(c) if strides[k] is None else b.mul(strides[k], i64(c))
            constant = shift if constant is None else b.add(constant, shift)
    ptr = b.gep(data, [variable])
    return ptr if constant is None else b.gep(ptr, [constant])
