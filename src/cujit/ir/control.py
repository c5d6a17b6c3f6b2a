"""Iteration and block terminators.

A ``for`` loop over a range is pure SSA: the iterator is a value (next, stop,
step) carried around the loop as a block parameter; ``IterNext`` yields the
advanced iterator rather than mutating the old one.
"""

from __future__ import annotations

from cujit.frozen import frozen
from cujit.ir.core import Op, Terminator, Value


@frozen(kw_only=True, repr=False)
class GetIter(Op):
    """``iter(obj)``: the start state of a loop over ``obj`` (a range)."""

    result: Value
    obj: Value


@frozen(kw_only=True, repr=False)
class IterValid(Op):
    """True while ``iter`` still has a value to yield."""

    result: Value
    iter: Value


@frozen(kw_only=True, repr=False)
class IterValue(Op):
    """The value ``iter`` yields now."""

    result: Value
    iter: Value


@frozen(kw_only=True, repr=False)
class IterNext(Op):
    """The iterator advanced by one step."""

    result: Value
    iter: Value


@frozen(kw_only=True, repr=False)
class Jump(Terminator):
    """Go to ``target`` passing ``args`` to its parameters."""

    target: int
    args: tuple[Value, ...] = ()

    def successors(self):
        return ((self.target, self.args),)


@frozen(kw_only=True, repr=False)
class Branch(Terminator):
    """Go to ``then_target`` if ``cond`` (a bool) is true, else to ``else_target``."""

    cond: Value
    then_target: int
    else_target: int
    then_args: tuple[Value, ...] = ()
    else_args: tuple[Value, ...] = ()

    def successors(self):
        return ((self.then_target, self.then_args), (self.else_target, self.else_args))


@frozen(kw_only=True, repr=False)
class Return(Terminator):
    """Leave the function, returning ``value`` (None for a bare ``return``)."""

    value: Value | None = None


@frozen(kw_only=True, repr=False)
class Raise(Terminator):
    """``raise exc`` / a failed ``assert``; ``exc`` is the exception value if known."""

    exc: Value | None = None
    message: str | None = None
