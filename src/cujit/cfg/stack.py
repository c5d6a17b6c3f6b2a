"""Stack effect of each cujit bytecode instruction (see ``cujit.bytecode.instr``)."""

from __future__ import annotations

from cujit.bytecode import Instr

_FIXED = {
    "LOAD_CONST": 1,
    "LOAD_FAST": 1,
    "LOAD_GLOBAL": 1,
    "LOAD_DEREF": 1,
    "LOAD_ASSERTION_ERROR": 1,
    "STORE_FAST": -1,
    "LOAD_ATTR": 0,
    "POP_TOP": -1,
    "COPY": 1,
    "SWAP": 0,
    "UNARY_OP": 0,
    "BINARY_OP": -1,
    "COMPARE_OP": -1,
    "BINARY_SUBSCR": -1,
    "STORE_SUBSCR": -3,
    "STORE_ATTR": -2,
    "GET_ITER": 0,
    "JUMP": 0,
    "POP_JUMP_IF_TRUE": -1,
    "POP_JUMP_IF_FALSE": -1,
    "POP_JUMP_IF_NONE": -1,
    "POP_JUMP_IF_NOT_NONE": -1,
    "RETURN": -1,
    "CALL_STAR": -1,
    "DECORATE": -1,
    "MAKE_FUNCTION": 0,
    "SET_FUNCTION_ATTRIBUTE": -1,
    "TUPLE_APPEND": -1,
    "TUPLE_EXTEND": -1,
}


def stack_effect(ins: Instr, jump: bool) -> int:
    """Net change of the stack depth across ``ins``; ``jump`` picks the taken edge."""
    op = ins.op
    if op in _FIXED:
        return _FIXED[op]
    if op == "FOR_ITER":  # exhausted: the iterator is popped; else the value is pushed
        return -1 if jump else 1
    if op in ("BUILD_TUPLE", "BUILD_SLICE", "BUILD_LIST"):
        return 1 - ins.arg
    if op == "UNPACK_SEQUENCE":
        return ins.arg - 1
    if op == "CALL":
        return -ins.arg
    if op == "RAISE":
        return -ins.arg
    raise KeyError(f"no stack effect for {op}")
