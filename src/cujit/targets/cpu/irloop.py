"""LLVM IR building blocks shared by the CPU schedulers: counted loops, declarations of
LLVM's coroutine intrinsics, a block's index from its linear number."""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir as ll

from cujit.codegen.lltypes import I32, I64


def loop(
    b: ll.IRBuilder, start: ll.Value, stop: ll.Value, name: str, body: Callable[[ll.Value], None]
) -> None:
    """``for i in range(start, stop): body(i)`` (unsigned), leaving ``b`` after the loop."""
    fn = b.function
    pre = b.block
    head = fn.append_basic_block(f"{name}.head")
    inner = fn.append_basic_block(f"{name}.body")
    done = fn.append_basic_block(f"{name}.end")
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(start.type, name=name)
    i.add_incoming(start, pre)
    b.cbranch(b.icmp_unsigned("<", i, stop), inner, done)
    b.position_at_end(inner)
    body(i)
    i.add_incoming(b.add(i, ll.Constant(start.type, 1), flags=("nuw",)), b.block)
    b.branch(head)
    b.position_at_end(done)


def declare(module: ll.Module, name: str, ret: ll.Type, args: list[ll.Type]) -> ll.Function:
    f = module.globals.get(name)
    if f is None:
        f = ll.Function(module, ll.FunctionType(ret, args), name)
        f.attributes.add("nounwind")
    return f


def block_index(b: ll.IRBuilder, linear: ll.Value, grid: list[ll.Value]) -> list[ll.Value]:
    """blockIdx from the linear block number, x fastest (as CUDA numbers blocks)."""
    gx, gy = (b.zext(g, I64) for g in grid[:2])
    rest = b.udiv(linear, gx)
    ctaid = [b.urem(linear, gx), b.urem(rest, gy), b.udiv(rest, gy)]
    return [b.trunc(c, I32, name=f"blockIdx.{a}") for c, a in zip(ctaid, "xyz", strict=True)]


def thread_nest(b: ll.IRBuilder, block: list[ll.Value], name: str, body) -> None:
    """``body(x, y, z)`` for every thread of a block, x fastest."""
    zero = ll.Constant(I32, 0)
    loop(
        b,
        zero,
        block[2],
        f"{name}.z",
        lambda z: loop(
            b,
            zero,
            block[1],
            f"{name}.y",
            lambda y: loop(b, zero, block[0], f"{name}.x", lambda x: body(x, y, z)),
        ),
    )
