"""Typing of the tensor-core functions: ``cuda.mma``, ``cuda.ldmatrix``, ``cuda.stmatrix``,
``cuda.cp_async*`` and the register packing helpers.

Fragments are tuples of 32-bit registers, as PTX holds them (``cujit.ir.fragments``
says which lane holds which element):

- ``mma(shape, kind, a, b, c)``: constant strings naming the form; ``a`` and ``b``
  tuples of uint32 (tf32: float32), ``c`` of float32, uint32 (f16x2) or int32; D has
  ``c``'s type;
- ``ldmatrix(array, i, num=4, trans=False)``: ``&array[i]`` in shared memory, one row's
  address per lane; ``num`` uint32;
- ``stmatrix(array, i, regs, trans=False)``: the same address, 1, 2 or 4 uint32;
- ``cp_async(dst, i, src, j, size=16, cache="ca")``: ``&dst[i]`` in shared memory,
  ``&src[j]`` in global memory; ``cp_async_commit_group()``,
  ``cp_async_wait_group(n)`` (a constant ``n``), ``cp_async_wait_all()``;
- ``pack_bf16x2(lo, hi)``, ``pack_f16x2(lo, hi)``: two numbers rounded to nearest
  even, in one uint32; ``unpack_bf16x2(r)``, ``unpack_f16x2(r)``: (float32, float32);
- ``to_tf32(x)``: float32 rounded to tf32 (to nearest, ties away).

    %9 = call %8(%1, %2, %5, %6, %7)    # cuda.mma("m16n8k16", "bf16", a, b, c)
  becomes
    %9: UniTuple(float32 x 4) = intrinsic tc.mma (%5, %6, %7) {form=("m16n8k16", "bf16", "f32")}
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cujit.diagnostics import TypingError
from cujit.infer.access import array_index
from cujit.infer.context import Typer
from cujit.infer.numeric import describe
from cujit.ir import Intrinsic, Value
from cujit.ir.fragments import FORMS, valid_forms
from cujit.types import Array, Scalar, Tuple, bfloat16, float16, float32, int32, none, uint32

if TYPE_CHECKING:
    from cujit.infer.calls import CallSite


def _const(t: Typer, site: CallSite, v: Value, what: str, kinds: tuple[type, ...]):
    value = t.const_value(v)
    if not isinstance(value, kinds) or (bool not in kinds and isinstance(value, bool)):
        names = " or ".join(k.__name__ for k in kinds)
        raise TypingError(f"{site.name}'s {what} must be a constant {names}", site.loc)
    return value


def _tuple(t: Typer, site: CallSite, v: Value, what: str, n: int, item) -> Value:
    """``v`` as a tuple of ``n`` ``item``s: registers (uint32) take integers by their low
    bits; float32 items take any number, converted."""
    items = v.type.items if isinstance(v.type, Tuple) else None
    if items is None or len(items) != n:
        raise TypingError(
            f"{site.name}'s {what} must be a tuple of {n} {item}, not {describe(v.type)}",
            site.loc,
        )
    for it in items:
        ok = isinstance(it, Scalar) and it.kind in ("iu" if item != float32 else "fiu")
        if not ok:
            raise TypingError(
                f"{site.name}'s {what} must be a tuple of {n} {item}, not {describe(v.type)}",
                site.loc,
            )
    return t.cast(v, Tuple((item,) * n), site.loc)


def _accumulator(kind: str, items: tuple) -> str | None:
    """The accumulator kind C's items ask for: int32 for the int8 kinds; for f16, f16x2
    registers (uint32) or floats; float32 otherwise (a float64 constant is cast)."""
    if not items or not all(isinstance(it, Scalar) for it in items):
        return None
    if kind in ("s8", "u8"):
        return "s32" if all(it.kind in "iu" for it in items) else None
    if kind == "f16" and all(it == uint32 for it in items):
        return "f16"
    return "f32" if all(it.kind in "fiu" for it in items) else None


_ACC_ITEM = {"f32": float32, "f16": uint32, "s32": int32}


def call_mma(t: Typer, site: CallSite) -> Value:
    """``cuda.mma(shape, kind, a, b, c)``: one warp's ``D = A @ B + C`` (``mma.sync``)."""
    site.expect(5, 5, keywords=("shape", "kind", "a", "b", "c"))
    shape = _const(t, site, site.arg(0, "shape"), "shape", (str,))
    kind = _const(t, site, site.arg(1, "kind"), "kind", (str,))
    c = site.arg(4, "c")
    acc = _accumulator(kind, c.type.items if isinstance(c.type, Tuple) else ())
    form = FORMS.get((shape, kind, acc))
    if form is None:
        got = f"{shape} {kind} with C {describe(c.type)}"
        raise TypingError(
            f"cuda.mma has no form {got}; the forms are (shape kind -> accumulator):\n"
            f"{valid_forms()}",
            site.loc,
        )
    item = float32 if kind == "tf32" else uint32
    a = _tuple(t, site, site.arg(2, "a"), "a", form.a_regs, item)
    b = _tuple(t, site, site.arg(3, "b"), "b", form.b_regs, item)
    c = _tuple(t, site, c, "c", form.c_regs, _ACC_ITEM[acc])
    return t.emit(
        Intrinsic(
            loc=site.loc,
            result=site.result(c.type),
            name="tc.mma",
            args=(a, b, c),
            attrs=(("form", (shape, kind, acc)),),
        )
    )


def _element(t: Typer, site: CallSite, apos: int, aname: str, ipos: int, iname: str):
    """An array argument and its element index (as ``array[i]`` takes it)."""
    ary = site.arg(apos, aname)
    if not isinstance(ary.type, Array):
        t.check_defined(ary, site.loc)
        raise TypingError(
            f"{site.name}'s {aname} must be an array, not {describe(ary.type)}", site.loc
        )
    idx = site.arg(ipos, iname)
    items = idx.type.items if isinstance(idx.type, Tuple) else (idx.type,)
    if not all(isinstance(it, Scalar) and it.kind in "iu" for it in items):
        raise TypingError(f"{describe(idx.type)} is not a valid index for {site.name}", site.loc)
    if len(items) != ary.type.ndim:
        raise TypingError(
            f"{site.name}: {ary.type.ndim} indices into {aname}, got {len(items)}", site.loc
        )
    return ary, array_index(t, ary.type, idx, site.loc)


def _num(t: Typer, site: CallSite, v: Value) -> int:
    num = _const(t, site, v, "num", (int,))
    if num not in (1, 2, 4):
        raise TypingError(f"{site.name}'s num must be 1, 2 or 4, not {num}", site.loc)
    return num


def call_ldmatrix(t: Typer, site: CallSite) -> Value:
    """``cuda.ldmatrix(array, i, num=4, trans=False)``: ``num`` 8x8 matrices of 16-bit
    elements; each lane gives the address of one row, ``&array[i]``."""
    site.expect(2, 4, keywords=("array", "i", "num", "trans"))
    ary, index = _element(t, site, 0, "array", 1, "i")
    num = _num(t, site, site.arg(2, "num", t.const(4, site.loc)))
    trans = _const(t, site, site.arg(3, "trans", t.const(False, site.loc)), "trans", (bool,))
    return t.emit(
        Intrinsic(
            loc=site.loc,
            result=site.result(Tuple((uint32,) * num)),
            name="tc.ldmatrix",
            args=(ary, index),
            attrs=(("num", num), ("trans", trans)),
        )
    )


def call_stmatrix(t: Typer, site: CallSite) -> Value:
    """``cuda.stmatrix(array, i, regs, trans=False)``: the inverse of ``ldmatrix``."""
    site.expect(3, 4, keywords=("array", "i", "regs", "trans"))
    ary, index = _element(t, site, 0, "array", 1, "i")
    t.check_writable(ary, site.loc, "cuda.stmatrix cannot store into")
    regs = site.arg(2, "regs")
    n = len(regs.type.items) if isinstance(regs.type, Tuple) else 0
    if n not in (1, 2, 4):
        raise TypingError(
            f"cuda.stmatrix's regs must be a tuple of 1, 2 or 4 uint32, not {describe(regs.type)}",
            site.loc,
        )
    regs = _tuple(t, site, regs, "regs", n, uint32)
    trans = _const(t, site, site.arg(3, "trans", t.const(False, site.loc)), "trans", (bool,))
    return t.emit(
        Intrinsic(
            loc=site.loc,
            result=site.result(none),
            name="tc.stmatrix",
            args=(ary, index, regs),
            attrs=(("num", n), ("trans", trans)),
        )
    )


def call_cp_async(t: Typer, site: CallSite) -> Value:
    """``cuda.cp_async(dst, i, src, j, size=16, cache="ca")``: copy ``size`` bytes from
    ``&src[j]`` (global memory) to ``&dst[i]`` (shared memory) without waiting."""
    site.expect(4, 6, keywords=("dst", "i", "src", "j", "size", "cache"))
    dst, di = _element(t, site, 0, "dst", 1, "i")
    t.check_writable(dst, site.loc, "cuda.cp_async cannot store into")
    src, si = _element(t, site, 2, "src", 3, "j")
    size = _const(t, site, site.arg(4, "size", t.const(16, site.loc)), "size", (int,))
    cache = _const(t, site, site.arg(5, "cache", t.const("ca", site.loc)), "cache", (str,))
    if size not in (4, 8, 16):
        raise TypingError(f"cuda.cp_async copies 4, 8 or 16 bytes, not {size}", site.loc)
    if cache not in ("ca", "cg") or (cache == "cg" and size != 16):
        raise TypingError(
            f"cuda.cp_async's cache is 'ca' (4, 8 or 16 bytes) or 'cg' (16 bytes), "
            f"not {cache!r} with {size}",
            site.loc,
        )
    return t.emit(
        Intrinsic(
            loc=site.loc,
            result=site.result(none),
            name="tc.cp_async",
            args=(dst, di, src, si),
            attrs=(("size", size), ("cache", cache)),
        )
    )


def call_commit_group(t: Typer, site: CallSite) -> Value:
    site.expect(0, 0)
    return t.emit(
        Intrinsic(loc=site.loc, result=site.result(none), name="tc.cp_async_commit", args=())
    )


def _wait(t: Typer, site: CallSite, n: int) -> Value:
    """``tc.cp_async_wait``: at most ``n`` committed groups left in flight (-1: none)."""
    return t.emit(
        Intrinsic(
            loc=site.loc,
            result=site.result(none),
            name="tc.cp_async_wait",
            args=(),
            attrs=(("n", n),),
        )
    )


def call_wait_group(t: Typer, site: CallSite) -> Value:
    site.expect(1, 1, keywords=("n",))
    n = _const(t, site, site.arg(0, "n"), "n", (int,))
    if not 0 <= n <= 7:
        raise TypingError(f"cuda.cp_async_wait_group's n is 0 to 7, not {n}", site.loc)
    return _wait(t, site, n)


def call_wait_all(t: Typer, site: CallSite) -> Value:
    site.expect(0, 0)
    return _wait(t, site, -1)


def _number(t: Typer, site: CallSite, v: Value, what: str, to) -> Value:
    vt = t.scalar(v, site.loc, f"{site.name}'s {what}")
    if vt.kind == "b":
        raise TypingError(f"{site.name}'s {what} must be a number, not {vt}", site.loc)
    if vt.kind in "iu":  # through float32, as a float32 argument would be
        v = t.cast(v, float32, site.loc)
    return t.cast(v, to, site.loc)


def pack(half):
    """``pack_bf16x2(lo, hi)``/``pack_f16x2(lo, hi)``: ``lo`` in bits 0-15."""

    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(2, 2, keywords=("lo", "hi"))
        lo = _number(t, site, site.arg(0, "lo"), "lo", half)
        hi = _number(t, site, site.arg(1, "hi"), "hi", half)
        return t.emit(
            Intrinsic(loc=site.loc, result=site.result(uint32), name="tc.pack2", args=(lo, hi))
        )

    return rule


def unpack(half):
    """``unpack_bf16x2(r)``/``unpack_f16x2(r)``: ``(lo, hi)`` as float32 (exact)."""

    def rule(t: Typer, site: CallSite) -> Value:
        site.expect(1, 1, keywords=("r",))
        r = site.arg(0, "r")
        rt = t.scalar(r, site.loc, f"{site.name}'s r")
        if rt.kind not in "iu":
            raise TypingError(f"{site.name}'s r must be an integer register, not {rt}", site.loc)
        r = t.cast(r, uint32, site.loc)
        pair = t.emit(
            Intrinsic(
                loc=site.loc,
                result=t.fresh(Tuple((half, half))),
                name="tc.unpack2",
                args=(r,),
            )
        )
        return t.cast(pair, Tuple((float32, float32)), site.loc)

    return rule


def call_to_tf32(t: Typer, site: CallSite) -> Value:
    site.expect(1, 1, keywords=("x",))
    x = _number(t, site, site.arg(0, "x"), "x", float32)
    return t.emit(Intrinsic(loc=site.loc, result=site.result(float32), name="tc.tf32", args=(x,)))


def mma_rules(api=None) -> dict:
    """The call table's entries for ``api`` (``device_api``, by default)'s placeholders."""
    if api is None:
        from cujit import device_api as api
    return {
        api.mma: call_mma,
        api.ldmatrix: call_ldmatrix,
        api.stmatrix: call_stmatrix,
        api.cp_async: call_cp_async,
        api.cp_async_commit_group: call_commit_group,
        api.cp_async_wait_group: call_wait_group,
        api.cp_async_wait_all: call_wait_all,
        api.pack_bf16x2: pack(bfloat16),
        api.pack_f16x2: pack(float16),
        api.unpack_bf16x2: unpack(bfloat16),
        api.unpack_f16x2: unpack(float16),
        api.to_tf32: call_to_tf32,
    }


__all__ = ["mma_rules"]
