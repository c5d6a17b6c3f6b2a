"""The IR's deterministic text form, used by golden tests and ``cujit explain``.

func saxpy(%0: float32 a, %1: array(float32, 1d, C) x)
block0:
  %2: pyobject(module cujit.cuda) = const pyobject
  %3 = getattr %2 .grid
  ...
  branch %7, block1(), block2()
"""

from __future__ import annotations

import dataclasses

from cujit.ir.core import Block, Function, Op, Value
from cujit.types import Type, describe_object


def _val(v: Value | None) -> str:
    return "none" if v is None else str(v)


def _typed(v: Value) -> str:
    return f"{v}: {v.type}" if v.type is not None else str(v)


def format_const(value: object) -> str:
    if value is None or isinstance(value, (bool, int, float, str, complex)):
        return repr(value)
    if isinstance(value, tuple):
        inner = ", ".join(format_const(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, Type):
        return f"type {value}"
    return f"<{describe_object(value)}>"


def _field(value: object) -> str:
    if isinstance(value, Value):
        return str(value)
    if isinstance(value, tuple):
        if value and all(
            isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], str) for x in value
        ):
            return "{" + ", ".join(f"{k}={_field(v)}" for k, v in value) + "}"
        return "(" + ", ".join(_field(x) for x in value) + ")"
    if isinstance(value, Value) or value is None:
        return _val(value)
    return format_const(value)


def _edge(target: int, args) -> str:
    return f"block{target}(" + ", ".join(map(str, args)) + ")"


def format_op(op: Op) -> str:
    name = op.__class__.__name__.lower()
    if name == "jump":
        return f"jump {_edge(op.target, op.args)}"
    if name == "branch":
        return (
            f"branch {op.cond}, {_edge(op.then_target, op.then_args)}, "
            f"{_edge(op.else_target, op.else_args)}"
        )
    parts = []
    for f in dataclasses.fields(op):
        if f.name in ("result", "loc"):
            continue
        val = getattr(op, f.name)
        if isinstance(val, str) and f.name in ("op", "name"):
            parts.append(val)
        else:
            parts.append(_field(val))
    text = f"{name} " + " ".join(parts) if parts else name
    if op.result is not None:
        return f"{_typed(op.result)} = {text}"
    return text


def format_block(block: Block) -> str:
    head = f"block{block.id}"
    if block.params:
        head += "(" + ", ".join(_typed(p) for p in block.params) + ")"
    lines = [head + ":"]
    lines.extend("  " + format_op(op) for op in block.ops)
    lines.append("  " + format_op(block.term))
    return "\n".join(lines)


def format_function(fn: Function) -> str:
    args = ", ".join(f"{_typed(v)} {n}" for v, n in zip(fn.args, fn.arg_names, strict=True))
    ret = f" -> {fn.return_type}" if fn.return_type is not None else ""
    head = f"func {fn.name}({args}){ret}"
    return head + "\n" + "\n".join(format_block(b) for b in fn.blocks) + "\n"
