"""Stage 1: decode() normalises CPython 3.11-3.13 bytecode into cujit's own
instruction set, with source locations, and rejects unsupported constructs."""

from __future__ import annotations

import inspect
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "golden", "frontend"))

import cases  # noqa: E402
import render  # noqa: E402
from internal_paths import internal_paths  # noqa: E402

from cujit.bytecode import decode  # noqa: E402
from cujit.diagnostics import UnsupportedError  # noqa: E402

OUR_OPS = {
    "LOAD_CONST",
    "LOAD_FAST",
    "STORE_FAST",
    "LOAD_GLOBAL",
    "LOAD_DEREF",
    "LOAD_ATTR",
    "LOAD_ASSERTION_ERROR",
    "POP_TOP",
    "COPY",
    "SWAP",
    "UNARY_OP",
    "BINARY_OP",
    "COMPARE_OP",
    "BINARY_SUBSCR",
    "STORE_SUBSCR",
    "BUILD_TUPLE",
    "UNPACK_SEQUENCE",
    "CALL",
    "GET_ITER",
    "FOR_ITER",
    "JUMP",
    "POP_JUMP_IF_TRUE",
    "POP_JUMP_IF_FALSE",
    "POP_JUMP_IF_NONE",
    "POP_JUMP_IF_NOT_NONE",
    "RETURN",
    "RAISE",
}


def ops(fn):
    return [(i.op, i.arg) for i in decode(fn).instrs]


@pytest.mark.parametrize("fn", render.all_cases(), ids=lambda f: f.__name__)
def test_golden_listing(fn):
    path = render.golden_path(fn.__name__, "bytecode")
    assert render.same_listing(render.render(fn)["bytecode"], path.read_text()), (
        f"{path} is stale: run tools/update_golden_frontend.py and review the diff"
    )


@pytest.mark.parametrize("fn", render.all_cases(), ids=lambda f: f.__name__)
def test_only_our_instruction_set(fn):
    bc = decode(fn)
    for ins in bc.instrs:
        assert ins.op in OUR_OPS
        if ins.is_jump:
            assert 0 <= ins.arg < len(bc.instrs)
        assert ins.loc.file == cases.__file__ and ins.loc.line > 0


# The expectations below are the same on every Python version: that is what
# stage 1 is for.


def test_straight_line_and_return_const():
    def f(a, b):
        return a + b

    def g(a):
        a = a
        return None

    assert ops(f) == [("LOAD_FAST", "a"), ("LOAD_FAST", "b"), ("BINARY_OP", "+"), ("RETURN", None)]
    assert ops(g) == [
        ("LOAD_FAST", "a"),
        ("STORE_FAST", "a"),
        ("LOAD_CONST", None),
        ("RETURN", None),
    ]


def test_superinstructions_are_split():
    def swap(a, b):
        a, b = b, a
        return a

    assert ops(swap) == [
        ("LOAD_FAST", "b"),
        ("LOAD_FAST", "a"),
        ("STORE_FAST", "b"),
        ("STORE_FAST", "a"),
        ("LOAD_FAST", "a"),
        ("RETURN", None),
    ]


def test_operators_resolved():
    def f(x, y):
        x += y
        x <<= 2
        return -x < +y, x is not y, ~x, not y, x // y

    bc = decode(f)
    bins = [(i.arg, i.inplace) for i in bc.instrs if i.op == "BINARY_OP"]
    assert bins == [("+", True), ("<<", True), ("//", False)]
    assert [i.arg for i in bc.instrs if i.op == "COMPARE_OP"] == ["<", "is not"]
    assert [i.arg for i in bc.instrs if i.op == "UNARY_OP"] == ["-", "+", "~", "not"]


def test_calls_drop_nulls_and_carry_kwnames():
    def f(a, x):
        a.method(1, key=x)
        return len(a)

    calls = [(i.arg, i.kwnames) for i in decode(f).instrs if i.op == "CALL"]
    assert calls == [(2, ("key",)), (1, ())]
    # the method is looked up as a plain attribute: no NULL or self slot
    assert ops(f)[:2] == [("LOAD_FAST", "a"), ("LOAD_ATTR", "method")]


def test_assert_message_is_an_argument():
    f = cases.assert_and_raise  # pytest rewrites asserts in test modules: not here
    seq = [i.op for i in decode(f).instrs]
    i = seq.index("LOAD_ASSERTION_ERROR")
    assert seq[i : i + 4] == ["LOAD_ASSERTION_ERROR", "LOAD_CONST", "CALL", "RAISE"]
    assert decode(f).instrs[i + 2].arg == 1


def test_for_iter_exit_target_is_after_the_loop():
    def f(n):
        s = 0
        for i in range(n):
            s = i
        return s

    bc = decode(f)
    (k,) = [i for i, ins in enumerate(bc.instrs) if ins.op == "FOR_ITER"]
    exit_ins = bc.instrs[bc.instrs[k].arg]
    assert (exit_ins.op, exit_ins.arg) == ("LOAD_FAST", "s")
    assert bc.instrs[k + 1].op == "STORE_FAST"
    assert bc.instrs[bc.instrs[k].arg - 1].op == "JUMP"


def test_and_or_keep_the_value_on_the_stack():
    def f(a, b):
        return a and b

    assert [i.op for i in decode(f).instrs] == [
        "LOAD_FAST",
        "COPY",
        "POP_JUMP_IF_FALSE",
        "POP_TOP",
        "LOAD_FAST",
        "RETURN",
    ]


def test_locations():
    bc = decode(cases.straight_line)
    first = inspect.getsourcelines(cases.straight_line)[1]
    mul = next(i for i in bc.instrs if i.op == "BINARY_OP")
    # `    c = a * b + 3`: the product spans columns 8..13
    assert (mul.arg, mul.loc.line, mul.loc.col, mul.loc.end_col) == ("*", first + 1, 8, 13)
    assert bc.loc.line == first
    assert bc.arg_names == ("a", "b")


def test_globals_and_closure_are_captured():
    bc = decode(cases.closure_const)
    assert dict(bc.closure) == {"offset": 7}
    assert bc.globals["SCALE"] == 3


# -- unsupported constructs: the line marked `# <-` is where the error points


def _try(x):
    try:  # <-
        x = 1
    except Exception:
        pass
    return x


def _with(x):
    with x:  # <-
        pass


def _gen(n):
    yield n  # <-


async def _async(x):  # <-
    return x


def _import(x):
    import math  # <-

    return math.sqrt(x)


def _list(x):
    return [*x]  # <-  (a plain display [x, x] is refused in typing: test_list_displays.py)


def _dict(x):
    return {"a": x}  # <-


def _set(x):
    return {x}  # <-


def _listcomp(n):
    return [i for i in range(n)]  # <-


def _fstring(x):
    return f"{x}"  # <-


def _del(x):
    del x  # <-


def _global(x):
    global SOME_GLOBAL
    SOME_GLOBAL = x  # <-


def _nonlocal_outer():
    v = 0

    def _nonlocal(x):
        nonlocal v
        v = x  # <-

    return _nonlocal


def _kwcall(f, d):
    return f(**d)  # <-


def _star_unpack(t):
    a, *b = t  # <-
    return a


def _matmul(a, b):
    return a @ b  # <-


UNSUPPORTED = [
    (_try, "'try'"),
    (_with, "'with'"),
    (_gen, "generators"),
    (_async, "async"),
    (_import, "'import'"),
    (_list, "list displays"),
    (_dict, "dict displays"),
    (_set, "set displays"),
    (_listcomp, "comprehensions"),
    (_fstring, "f-strings"),
    (_del, "'del'"),
    (_global, "'global'"),
    (_nonlocal_outer(), "'nonlocal'"),
    (_kwcall, "**kwargs"),
    (_star_unpack, "star-unpacking"),
    (_matmul, "'@'"),
]


def marked_line(fn) -> int:
    lines, first = inspect.getsourcelines(fn)
    (k,) = [k for k, text in enumerate(lines) if "# <-" in text]
    return first + k


@pytest.mark.parametrize("fn,words", UNSUPPORTED, ids=[f.__name__ for f, _ in UNSUPPORTED])
def test_unsupported_construct(fn, words):
    with pytest.raises(UnsupportedError) as info:
        decode(fn)
    err = info.value
    assert words in err.message
    assert "not supported in kernels" in err.message
    assert err.loc.line == marked_line(fn), str(err)
    assert err.loc.file == __file__
    assert not internal_paths(str(err))  # no internal file names (the word may be in a path)
