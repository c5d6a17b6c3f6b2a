"""Stage 3: build_ir() produces verified, untyped SSA IR whose ops point at the
user's source, and which computes what the Python function computes.

The semantic check runs the IR in a small reference interpreter (Python
semantics per op, ranges as (next, stop, step) iterators) and compares with
calling the function: wrong block arguments or stack handling show up there.
"""

from __future__ import annotations

import copy
import inspect
import itertools
import operator
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "golden", "frontend"))

import cases  # noqa: E402
import render  # noqa: E402

from cujit import device_api, ir  # noqa: E402
from cujit.bytecode import decode  # noqa: E402
from cujit.cfg import build_cfg  # noqa: E402
from cujit.diagnostics import CompileError, TypingError  # noqa: E402
from cujit.irgen import build_ir  # noqa: E402


def compile_ir(fn) -> ir.Function:
    out = build_ir(build_cfg(decode(fn)))
    ir.verify(out)
    return out


# -- goldens --------------------------------------------------------------------


@pytest.mark.parametrize("fn", render.all_cases(), ids=lambda f: f.__name__)
def test_golden_ir(fn):
    path = render.golden_path(fn.__name__, "ir")
    assert render.render(fn)["ir"] == path.read_text(), (
        f"{path} is stale: run tools/update_golden_frontend.py and review the diff"
    )


def test_shared_ir_cases_have_no_per_version_golden():
    for name in render.SHARED_IR:
        for version in ("3.11", "3.12", "3.13"):
            assert not (render.ROOT / version / f"{name}.ir").exists()


# -- structure ------------------------------------------------------------------


@pytest.mark.parametrize("fn", render.all_cases(), ids=lambda f: f.__name__)
def test_entry_and_locations(fn):
    f = compile_ir(fn)
    assert f.blocks[0].id == 0
    assert f.arg_names == tuple(inspect.signature(fn).parameters)
    assert len(f.blocks[0].params) == len(f.arg_names)
    assert all(target != 0 for b in f.blocks for target, _ in b.term.successors())
    lines, first = inspect.getsourcelines(fn)
    for op in f.all_ops():
        assert op.loc.file == cases.__file__
        assert first <= op.loc.line < first + len(lines), (op, first)


def test_op_locations_point_at_the_expression():
    f = compile_ir(cases.straight_line)
    first = inspect.getsourcelines(cases.straight_line)[1]
    mul = next(op for op in f.all_ops() if isinstance(op, ir.BinOp) and op.op == "*")
    assert (mul.loc.line, mul.loc.col) == (first + 1, 8)
    f = compile_ir(cases.tuple_index)
    setitem = next(op for op in f.all_ops() if isinstance(op, ir.SetItem))
    assert (setitem.loc.line, setitem.loc.col) == (first_line(cases.tuple_index) + 1, 4)


def first_line(fn) -> int:
    return inspect.getsourcelines(fn)[1]


def test_loop_at_entry_gets_its_own_entry_block():
    def spin(n):
        while True:
            n += 1

    f = compile_ir(spin)
    assert f.blocks[0].params == f.args and len(f.args) == 1
    assert isinstance(f.blocks[0].term, ir.Jump)


def test_frozen_globals_and_closure():
    consts = [
        op.value
        for op in compile_ir(cases.globals_and_closure).all_ops()
        if isinstance(op, ir.Const)
    ]
    assert consts == [3, 100, abs]
    consts = [
        op.value for op in compile_ir(cases.closure_const).all_ops() if isinstance(op, ir.Const)
    ]
    assert consts == [7]


def test_return_none_has_no_constant():
    f = compile_ir(cases.return_none)
    rets = [b.term for b in f.blocks if isinstance(b.term, ir.Return)]
    assert rets and all(r.value is None for r in rets)
    assert [op.value for op in f.all_ops() if isinstance(op, ir.Const)] == [None, 0]


def test_undefined_local_is_undef():
    f = compile_ir(cases.maybe_undefined)
    (undef,) = [op for op in f.all_ops() if isinstance(op, ir.Undef)]
    assert undef.name == "x"


def test_raise_carries_message():
    f = compile_ir(cases.assert_and_raise)
    raises = [b.term for b in f.blocks if isinstance(b.term, ir.Raise)]
    assert sorted(r.message for r in raises) == ["too big", "x must be positive"]


def test_unknown_global():
    def f(x):
        return x + not_defined_anywhere  # noqa: F821

    with pytest.raises(CompileError) as info:
        compile_ir(f)
    assert info.value.message == "NameError: name 'not_defined_anywhere' is not defined"
    assert isinstance(info.value, TypingError)  # numba's class for an unknown global
    assert info.value.loc.line == first_line(f) + 1


def test_empty_closure_cell():
    def outer():
        def f(x):
            return x + later  # noqa: F821 -- an empty closure cell is the test

        cell_holder = f
        later = 1  # noqa: F841
        del later
        return cell_holder

    with pytest.raises(CompileError) as info:
        compile_ir(outer())
    assert "'later'" in info.value.message


def _plain_jit(*args, **kwargs):
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda fn: fn


def test_end_to_end_kernel_set_builds(monkeypatch):
    """Every kernel of tests/kernels.py goes through stages 1-3 and verifies.  The
    module is loaded under another name with ``cuda.jit`` as a no-op, so this runs
    whether or not the later stages are there."""
    import importlib.util

    from cujit import cuda

    monkeypatch.setattr(cuda, "jit", _plain_jit)
    path = os.path.join(os.path.dirname(__file__), "kernels.py")
    spec = importlib.util.spec_from_file_location("kernels_frontend_view", path)
    kernels = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, kernels)  # dataclasses look it up
    spec.loader.exec_module(kernels)
    assert len(kernels.CASES) >= 10
    for case in kernels.CASES:
        compile_ir(case.kernel)


# -- reference interpreter ----------------------------------------------------------


class Unbound:
    def __init__(self, name):
        self.name = name


BINARY = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "**": operator.pow,
    "<<": operator.lshift,
    ">>": operator.rshift,
    "&": operator.and_,
    "|": operator.or_,
    "^": operator.xor,
}
COMPARE = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
    "is": operator.is_,
    "is not": operator.is_not,
}
UNARY = {"-": operator.neg, "+": operator.pos, "~": operator.invert, "not": operator.not_}


def host_atomic_add(a, i, v):
    old = a[i]
    a[i] = old + v
    return old


HOST = {device_api.atomic.add: host_atomic_add}


def evaluate(op, get):  # noqa: C901 -- a reference interpreter: one branch per IR op
    if isinstance(op, ir.Const):
        return op.value
    if isinstance(op, ir.Undef):
        return Unbound(op.name)
    if isinstance(op, ir.BinOp):
        return BINARY[op.op](get(op.lhs), get(op.rhs))
    if isinstance(op, ir.UnaryOp):
        return UNARY[op.op](get(op.operand))
    if isinstance(op, ir.Compare):
        return COMPARE[op.op](get(op.lhs), get(op.rhs))
    if isinstance(op, ir.GetItem):
        return get(op.obj)[get(op.index)]
    if isinstance(op, ir.SetItem):
        get(op.obj)[get(op.index)] = get(op.value)
        return None
    if isinstance(op, ir.GetAttr):
        return getattr(get(op.obj), op.name)
    if isinstance(op, ir.BuildTuple):
        return tuple(get(v) for v in op.items)
    if isinstance(op, ir.TupleGet):
        return get(op.tuple)[op.index]
    if isinstance(op, ir.Call):
        func = get(op.func)
        func = HOST.get(func, func) if isinstance(func, device_api.DeviceOnly) else func
        return func(*map(get, op.args), **{k: get(v) for k, v in op.kwargs})
    if isinstance(op, ir.GetIter):
        r = get(op.obj)
        assert isinstance(r, range)
        return (r.start, r.stop, r.step)
    if isinstance(op, ir.IterValid):
        nxt, stop, step = get(op.iter)
        return nxt < stop if step > 0 else nxt > stop
    if isinstance(op, ir.IterValue):
        return get(op.iter)[0]
    if isinstance(op, ir.IterNext):
        nxt, stop, step = get(op.iter)
        return (nxt + step, stop, step)
    raise NotImplementedError(type(op).__name__)


def run_ir(f: ir.Function, args):
    env = dict(zip((p.id for p in f.args), args, strict=True))

    def get(v):
        value = env[v.id]
        if isinstance(value, Unbound):
            raise UnboundLocalError(f"local variable '{value.name}' referenced before assignment")
        return value

    block = f.blocks[0]
    for _ in range(100_000):
        for op in block.ops:
            result = evaluate(op, get)
            if op.result is not None:
                env[op.result.id] = result
        term = block.term
        if isinstance(term, ir.Return):
            return None if term.value is None else get(term.value)
        if isinstance(term, ir.Raise):
            raise get(term.exc)
        if isinstance(term, ir.Branch):
            taken = bool(get(term.cond))
            target, args = (
                (term.then_target, term.then_args) if taken else (term.else_target, term.else_args)
            )
        else:
            target, args = term.target, term.args
        values = [env[a.id] for a in args]  # Unbound may flow through params
        block = f.block(target)
        env.update(zip((p.id for p in block.params), values, strict=True))
    raise AssertionError("the IR did not terminate")


def outcome(call):
    try:
        return ("ok", call())
    except Exception as exc:  # noqa: BLE001 - the exception is the outcome compared
        return ("raised", type(exc))


# -- extra SSA stress functions (semantic check only) --------------------------------


def fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def bubble(xs):
    n = len(xs)
    for i in range(n):
        for j in range(n - 1 - i):
            if xs[j] > xs[j + 1]:
                xs[j], xs[j + 1] = xs[j + 1], xs[j]


def collatz(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def find_pair(a, target):
    for i in range(len(a)):
        for j in range(i + 1, len(a)):
            if a[i] + a[j] == target:
                return (i, j)
    return None


def last_square(n):
    for i in range(n):
        last = i * i
    return last


def minmax(a):
    lo = hi = a[0]
    for k in range(1, len(a)):
        lo = min(lo, a[k])
        hi = max(hi, a[k])
    return hi - lo, lo


def keywords(x):
    return round(x, ndigits=1) + int("11", base=2)


def chained_in_loop(a, lo, hi):
    count = 0
    for i in range(len(a)):
        if lo <= a[i] < hi and not (a[i] == 5 or a[i] is None):
            count += 1
    return count


def kw_after_merge(x, c):
    return round(x, ndigits=1 if c else 2)


def method_calls(z):
    return z.conjugate().imag + abs(z)


def for_break(n):
    for i in range(n):
        if i * i > n:
            break
    return i


def int_list():
    return [5, -3, 8, 0, 5, 12, 7]


SAMPLES = [
    (cases.straight_line, [(3, 5), (-7, 2), (10, -3)]),
    (cases.if_elif_else, [(-5,), (0,), (5,)]),
    (cases.while_break_continue, [(0,), (5,), (30,)]),
    (cases.for_ranges, [(7, [0] * 7), (0, []), (1, [9])]),
    (cases.nested_loops, [(3, 4, [0] * 12), (0, 2, [])]),
    (cases.early_return, [([5, 3, 9], 9), ([5, 3, 9], 4), ([], 1)]),
    (cases.and_or_not, list(itertools.product([0, 2], [0, 3], [0, 1]))),
    (cases.chained_compare, [(1, 2, 3), (1, 2, 2), (2, 1, 3), (3, 2, 1), (1, 3, 2)]),
    (cases.cond_expr, [(1, 2), (5, 2)]),
    (cases.tuples, [(1, 5), (-2, 2)]),
    (cases.augmented, [(4,), (-3,)]),
    (cases.tuple_index, [(np.arange(9).reshape(3, 3), np.zeros((3, 3), int), 0, 2)]),
    (cases.globals_and_closure, [(-4,), (5,)]),
    (cases.closure_const, [(1,)]),
    (cases.maybe_undefined, [(True,), (False,)]),
    (cases.return_none, [(None, [0]), (5, [0])]),
    (cases.assert_and_raise, [(5,), (-1,), (500,)]),
    (cases.assert_computed_message, [(7,), (-1,)]),
    (cases.while_true, [(7,), (1,)]),
    (fib, [(0,), (1,), (10,)]),
    (bubble, [([3, 1, 2, 5, 4],), ([],)]),
    (collatz, [(1,), (6,), (27,)]),
    (find_pair, [(int_list(), 13), (int_list(), 100)]),
    (last_square, [(4,), (0,)]),
    (minmax, [(int_list(),)]),
    (keywords, [(2.345,)]),
    (chained_in_loop, [(int_list(), 0, 8)]),
    (kw_after_merge, [(2.345, True), (2.345, False)]),
    (method_calls, [(3 + 4j,)]),
    (for_break, [(0,), (3,), (20,)]),
]


@pytest.mark.parametrize("fn,inputs", SAMPLES, ids=[f.__name__ for f, _ in SAMPLES])
def test_ir_computes_what_python_computes(fn, inputs):
    f = compile_ir(fn)
    for args in inputs:
        py_args, ir_args = copy.deepcopy(args), copy.deepcopy(args)
        expected = outcome(lambda: fn(*py_args))  # noqa: B023 -- called within this iteration
        got = outcome(lambda: run_ir(f, ir_args))  # noqa: B023 -- called within this iteration
        assert got == expected, (fn.__name__, args)
        for a, b in zip(py_args, ir_args, strict=True):  # arguments written by the function
            np.testing.assert_array_equal(np.asarray(a, dtype=object), np.asarray(b, dtype=object))


def test_atomic_call_through_the_interpreter():
    a = [1, 2, 3]
    assert run_ir(compile_ir(cases.atomic_call), (a, 1, 5)) is None
    assert a == [1, 7, 3]


def test_interpreter_catches_a_wrong_block_argument():
    """The semantic check is sharp: swapping two loop arguments changes fib's result."""
    import dataclasses

    f = compile_ir(fib)
    blocks = list(f.blocks)
    for k, b in enumerate(blocks):
        if isinstance(b.term, ir.Jump) and len(b.term.args) >= 2 and b.term.target < b.id:
            args = list(b.term.args)
            args[0], args[1] = args[1], args[0]
            blocks[k] = dataclasses.replace(b, term=dataclasses.replace(b.term, args=tuple(args)))
            break
    else:
        pytest.fail("no back edge with two arguments in fib's IR")
    broken = dataclasses.replace(f, blocks=tuple(blocks))
    assert run_ir(f, (10,)) == 55
    assert run_ir(broken, (10,)) != 55


def test_for_body_with_two_predecessors_gets_an_edge_block():
    """CPython never jumps into a for body, but the IR must stay right if a
    bytecode did: IterNext/IterValue then live in a block on the loop edge."""
    from cujit.bytecode import Bytecode, Instr
    from cujit.diagnostics import Loc

    at = Loc(__file__, 1)
    prog = [
        ("LOAD_CONST", 0),
        ("STORE_FAST", "s"),
        ("LOAD_GLOBAL", "range"),
        ("LOAD_FAST", "n"),
        ("CALL", 1),
        ("GET_ITER", None),
        ("FOR_ITER", 19),  # 6
        ("STORE_FAST", "i"),  # 7: body
        ("LOAD_FAST", "s"),
        ("LOAD_FAST", "i"),
        ("BINARY_OP", "+"),
        ("STORE_FAST", "s"),
        ("LOAD_FAST", "i"),
        ("LOAD_CONST", 3),
        ("COMPARE_OP", "=="),
        ("POP_JUMP_IF_FALSE", 6),  # 15
        ("LOAD_CONST", 1000),
        ("JUMP", 7),  # re-enter the body with 1000 on top
        ("LOAD_CONST", None),  # 18: unreachable
        ("LOAD_FAST", "s"),
        ("RETURN", None),  # 19
    ]
    bc = Bytecode(
        name="edge",
        arg_names=("n",),
        local_names=("n", "s", "i"),
        instrs=tuple(Instr(op, arg, at) for op, arg in prog),
        loc=at,
        globals={"range": range},
    )
    f = build_ir(build_cfg(bc))
    ir.verify(f)
    assert run_ir(f, (5,)) == 0 + 1 + 2 + 3 + 1000 + 4
    assert run_ir(f, (2,)) == 1
