"""Small functions whose bytecode listing, CFG and IR are kept as golden files
(see tools/update_golden_frontend.py) and which the IR reference interpreter
runs against plain Python (tests/test_irgen.py).

Edit a function and its goldens change: regenerate and review the diff.
"""

from cujit import cuda

SCALE = 3


def straight_line(a, b):
    c = a * b + 3
    d = c // 2 - a % 3
    e = (d << 2) ^ (c >> 1) | (5 & a)
    return -e + ~b - d**2 / 4


def if_elif_else(x):
    if x < 0:
        y = -1
    elif x == 0:
        y = 0
    else:
        y = 1
    return y * 10


def while_break_continue(n):
    i = 0
    total = 0
    while i < n:
        i += 1
        if i % 3 == 0:
            continue
        if total > 20:
            break
        total += i
    return total


def for_ranges(n, out):
    for i in range(n):
        out[i] = i
    for j in range(2, n):
        out[j] += j
    for k in range(n - 1, -1, -2):
        out[k] *= 3


def nested_loops(n, m, out):
    for i in range(n):
        for j in range(m):
            out[i * m + j] = i - j


def early_return(a, x):
    for i in range(len(a)):
        if a[i] == x:
            return i
    return -1


def and_or_not(a, b, c):
    return (a and b) or not c


def chained_compare(a, b, c):
    return a < b <= c


def cond_expr(x, y):
    return x if x > y else y


def tuples(a, b):
    t = (a, b)
    x, y = t
    x, y = y, x
    return (x - y, t)


def augmented(x):
    x += 1
    x *= 3
    x -= 2
    x //= 2
    x <<= 1
    x |= 1
    return x


def tuple_index(a, out, i, j):
    out[i, j] = a[i, j] * 2
    out[j, i] = a[(j, i)]


def atomic_call(a, i, v):
    cuda.atomic.add(a, i, v)


def globals_and_closure(x):
    return x * SCALE + OFFSET + abs(x)


def _make_closure():
    offset = 7

    def closure_const(x):
        return x + offset

    return closure_const


closure_const = _make_closure()
OFFSET = 100


def maybe_undefined(c):
    if c:
        x = 1
    return x


def return_none(x, out):
    if x is None:
        return
    out[0] = x


def assert_and_raise(x):
    assert x > 0, "x must be positive"
    if x > 100:
        raise ValueError("too big")
    return x


def assert_computed_message(x):
    assert x > 0, str(x) + " is not positive"
    return x


def while_true(n):
    i = 0
    while True:
        i += 2
        if i >= n:
            break
    return i


CASES = (
    straight_line,
    if_elif_else,
    while_break_continue,
    for_ranges,
    nested_loops,
    early_return,
    and_or_not,
    chained_compare,
    cond_expr,
    tuples,
    augmented,
    tuple_index,
    atomic_call,
    globals_and_closure,
    closure_const,
    maybe_undefined,
    return_none,
    assert_and_raise,
    assert_computed_message,
    while_true,
)
