"""cujit's SSA IR: the op set, its text form and its verifier.

``OPS`` enumerates every op in one place.
"""

from cujit.ir.arith import (
    BINARY_OPS,
    COMPARE_OPS,
    UNARY_OPS,
    BinOp,
    Cast,
    Compare,
    Const,
    UnaryOp,
    Undef,
)
from cujit.ir.calls import (
    CALL_STAR,
    DECORATE,
    LIST_DISPLAY,
    MAKE_FUNCTION,
    SELF_CALL,
    SET_FUNCTION_ATTRIBUTE,
    TUPLE_CONCAT,
    Builtin,
    Call,
    CallFunction,
    Intrinsic,
)
from cujit.ir.control import Branch, GetIter, IterNext, IterValid, IterValue, Jump, Raise, Return
from cujit.ir.core import (
    Block,
    Function,
    Op,
    Terminator,
    Value,
    map_operands,
    map_values,
    operands,
    replace,
)
from cujit.ir.memory import BuildTuple, GetAttr, GetItem, SetAttr, SetItem, TupleGet
from cujit.ir.printer import format_function, format_op
from cujit.ir.verifier import VerificationError, verify

OPS = (
    Const,
    Undef,
    BinOp,
    UnaryOp,
    Compare,
    Cast,  # arith
    GetItem,
    SetItem,
    GetAttr,
    SetAttr,
    BuildTuple,
    TupleGet,  # memory
    Call,
    Intrinsic,
    CallFunction,  # calls
    GetIter,
    IterValid,
    IterValue,
    IterNext,  # iteration
    Jump,
    Branch,
    Return,
    Raise,  # terminators
)

__all__ = [
    "OPS",
    "Builtin",
    "CALL_STAR",
    "DECORATE",
    "MAKE_FUNCTION",
    "SELF_CALL",
    "SET_FUNCTION_ATTRIBUTE",
    "TUPLE_CONCAT",
    "LIST_DISPLAY",
    "BINARY_OPS",
    "COMPARE_OPS",
    "UNARY_OPS",
    "Block",
    "Function",
    "Op",
    "Terminator",
    "Value",
    "operands",
    "map_operands",
    "map_values",
    "replace",
    "format_function",
    "format_op",
    "verify",
    "VerificationError",
    *[c.__name__ for c in OPS],
]
