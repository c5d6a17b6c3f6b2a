"""A generator of random small kernels, as Python source, for differential fuzzing.

    from kernelgen import generate_kernel
    src, columns = generate_kernel(random.Random(seed), programs=6)

The source defines ``kernel(ai, bi, af, bf, oi, of, og)``: each thread ``i`` reads its
row of the inputs (``ai`` int64, ``bi`` int32, ``af`` float64, ``bf`` float32, each
``(threads, 4)``) and writes its results into its row of the outputs (``oi`` int64,
``of`` float64, ``og`` float32).  The kernel is ``programs`` independent random
programs one after another (batching keeps the compile count down); each declares
typed variables, runs random statements over them and stores them.

Grammar: assignments, augmented assignments, ``if``/``elif``/``else``, ``while``
loops with a bounded counter, ``for`` over ``range`` with 1-3 arguments (negative
steps too), ``break``/``continue``, ``and``/``or``/``not``, conditional
expressions, chained comparisons, tuple packing/unpacking and indexing, ``abs``/
``min``/``max``/``int``/``float`` and cujit's type casts, ``math`` functions on safe
domains, ``//`` and ``%`` with non-zero divisors, shifts, ``**`` with small
exponents, over int64, int32, float64 and float32.

Every program means the same in plain Python (run by ``pysim``, where array elements
are NumPy scalars) and in cujit (numba's typing); the generator types each
expression to keep it so (see pysim's docstring for where the two differ):

- int types: ``i64`` (an ``np.int64`` in Python: wraps exactly as cujit's int64),
  ``i32`` (``np.int32``) and ``w`` (a Python int: literals, loop variables,
  ``int()`` results).  ``i32`` and ``w`` carry a bound on their magnitude; an
  operation whose result could pass 2**31 (i32) or 2**40 (w) casts an operand to
  ``int64`` first, so NumPy's int32 and Python's unbounded ints never see a value
  cujit's int64 arithmetic would wrap.  Int variables always hold int64.
- float types: ``f64`` (``np.float64``), ``wf`` (a Python float: literals,
  ``float()``, ``math`` results) and ``f32``.  A float32 value is never combined
  with a Python int or float (NumPy would keep float32 where cujit gives float64):
  the other side is cast with ``int64()``/``float64()`` first.  Float32 math is
  limited to the correctly rounded ``sqrt``, ``fabs`` and ``copysign``.
- Python raises where cujit cannot, so: divisors are ``(e | 1)``, a non-zero literal,
  or ``(abs(e) + 1.0)``; float -> int conversions and ``math.floor``/``ceil`` apply
  to a range-checked variable; ``exp``/``sinh``/``cosh``/``pow``/``tan``... get
  clamped arguments; ``<<`` counts are small and checked against the bound.  A shift's
  type is its operand's and its count's promotion (a Python int shifted by an int32
  count is an int32 in NumPy, an int64 in cujit: bounded as an i32).
- A NaN made by arithmetic has no defined sign (IEEE 754 leaves it to the machine: x86
  makes -nan, PTX +nan, NumPy's ``%`` either), and ``copysign`` is the one operation
  here that shows it; so its sign source is ``(1.0 if math.isnan(y) else y)``.  NaNs of
  either sign compare equal.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

W_LIMIT = 2**40
I32_LIMIT = 2**31 - 1
NCOLS = 4  # input columns per array


def _sign_source(code: str, one: str) -> str:
    """``code`` as copysign's sign source: a NaN, whose sign no machine defines, is ``one``."""
    return f"({one} if math.isnan({code}) else {code})"


@dataclass(frozen=True)
class E:
    code: str
    t: str  # i64 i32 w | f64 wf f32 | b
    bound: int = 0  # |value| bound for i32 and w

    @property
    def is_int(self):
        return self.t in ("i64", "i32", "w")

    @property
    def is_f64(self):
        return self.t in ("f64", "wf")


def _shift_type(a: str, count: str) -> str:
    """The int type of ``a << count`` / ``a >> count`` in NumPy: i64 if either is, else
    i32 if either is, else a Python int (``w``)."""
    if "i64" in (a, count):
        return "i64"
    return "i32" if "i32" in (a, count) else "w"


def _pow2_above(n: int) -> int:
    return 1 << (int(n) + 1).bit_length()


class ProgramGen:
    """One random program (a segment of a kernel), over variables prefixed ``p``."""

    def __init__(self, rng: random.Random, prefix: str):
        self.r = rng
        self.p = prefix
        self.ivars = [f"{prefix}i{k}" for k in range(rng.randint(1, 3))]
        self.fvars = [f"{prefix}f{k}" for k in range(rng.randint(1, 2))]
        self.gvars = [f"{prefix}g{k}" for k in range(rng.randint(0, 2))]
        self.loopvars: list[tuple[str, int]] = []  # (name, bound) in scope
        self.counter = 0
        self.in_loop = 0
        self.lines: list[str] = []

    # -- leaves -------------------------------------------------------------
    def lit_int(self) -> E:
        v = self.r.choice(
            [0, 1, 2, 3, -1, -2, 5, 7, -7, 10, 100, -1000, 12345, self.r.randint(-50, 50)]
        )
        return E(f"({v})" if v < 0 else str(v), "w", abs(v))

    def lit_float(self) -> str:
        return repr(
            self.r.choice(
                [
                    0.0,
                    0.5,
                    -0.5,
                    1.0,
                    -2.25,
                    3.0,
                    1e-3,
                    1e10,
                    -1e-300,
                    0.1,
                    2.5,
                    -7.75,
                    1e300,
                    round(self.r.uniform(-9, 9), 3),
                ]
            )
        )

    def col(self) -> int:
        return self.r.randrange(NCOLS)

    def int_leaf(self) -> E:
        k = self.r.random()
        if k < 0.25:
            return self.lit_int()
        if k < 0.5:
            return E(self.r.choice(self.ivars), "i64")
        if k < 0.6 and self.loopvars:
            name, b = self.r.choice(self.loopvars)
            return E(name, "w", b)
        if k < 0.78:
            return E(f"ai[i, {self.col()}]", "i64")
        if k < 0.95:
            return E(f"bi[i, {self.col()}]", "i32", 2**15)
        return E(self.r.choice(["ai.shape[1]", "len(bi)", "af.shape[1]"]), "w", 64)

    def float_var(self, want: str) -> str:
        """A variable or array element of float type ``want`` (f64 or f32)."""
        if want == "f32":
            if self.gvars and self.r.random() < 0.6:
                return self.r.choice(self.gvars)
            return f"bf[i, {self.col()}]"
        if self.r.random() < 0.6:
            return self.r.choice(self.fvars)
        return f"af[i, {self.col()}]"

    # -- ints -----------------------------------------------------------------
    def as_i64(self, e: E) -> E:
        return e if e.t == "i64" else E(f"int64({e.code})", "i64")

    def int_binop(self, a: E, b: E, op: str) -> E:
        if "i64" in (a.t, b.t):
            return E(f"({a.code} {op} {b.code})", "i64")
        ba, bb = a.bound, b.bound
        if op in "+-":
            bound = ba + bb
        elif op == "*":
            bound = ba * bb
        elif op == "//":
            bound = ba + 1
        elif op == "%":
            bound = bb
        else:  # & | ^
            bound = 2 * _pow2_above(max(ba, bb))
        t = "w" if a.t == b.t == "w" else "i32"
        limit = W_LIMIT if t == "w" else I32_LIMIT
        if bound > limit or max(ba, bb) > limit:
            return E(f"({self.as_i64(a).code} {op} {b.code})", "i64")
        return E(f"({a.code} {op} {b.code})", t, bound)

    def divisor(self, d: int) -> E:
        if self.r.random() < 0.4:
            v = self.r.choice([1, 2, 3, 7, -1, -2, -5, 10, 64])
            return E(f"({v})" if v < 0 else str(v), "w", abs(v))
        e = self.gen_int(d)
        return E(f"({e.code} | 1)", e.t, e.bound + 1)

    def same_int_type(self, a: E, b: E) -> tuple[E, E]:
        if a.t == b.t:
            return a, b
        return self.as_i64(a), self.as_i64(b)

    def gen_int(self, d: int) -> E:  # noqa: C901 -- a random generator: one branch per expression form, chosen by one draw
        r = self.r
        if d <= 0 or r.random() < 0.25:
            return self.int_leaf()
        k = r.random()
        if k < 0.35:
            op = r.choice(["+", "-", "*", "+", "-", "&", "|", "^"])
            return self.int_binop(self.gen_int(d - 1), self.gen_int(d - 1), op)
        if k < 0.47:
            op = r.choice(["//", "%"])
            return self.int_binop(self.gen_int(d - 1), self.divisor(d - 1), op)
        if k < 0.55:
            # A shift's type is its operands' promotion, the count's too: in NumPy a
            # Python int shifted by an int32 count is an int32 (cujit: int64).
            a = self.gen_int(d - 1)
            if r.random() < 0.5:  # right shift: any count means the same everywhere
                lit, count = r.randint(0, 70), self.gen_int(d - 1)  # (both drawn, as before)
                c = r.choice([E(str(lit), "w", 70), E(f"({count.code} & 31)", count.t, 31)])
                return E(f"({a.code} >> {c.code})", _shift_type(a.t, c.t), a.bound)
            n = r.randint(0, 12)
            if r.random() < 0.5:
                c = E(str(n), "w", n)
            else:  # a computed count in [0, n]
                n = (1 << n.bit_length()) - 1
                count = self.gen_int(d - 1)
                c = E(f"({count.code} & {n})", count.t, n)
            t = _shift_type(a.t, c.t)
            if t != "i64" and a.bound << n > (W_LIMIT if t == "w" else I32_LIMIT):
                a, t = self.as_i64(a), "i64"
            return E(f"({a.code} << {c.code})", t, a.bound << n)
        if k < 0.62:
            a = self.gen_int(d - 1)
            op = r.choice(["-", "~", "abs"])
            code = f"abs({a.code})" if op == "abs" else f"({op}{a.code})"
            return E(code, a.t, a.bound + 1)
        if k < 0.69:
            a, b = self.same_int_type(self.gen_int(d - 1), self.gen_int(d - 1))
            f = r.choice(["min", "max"])
            return E(f"{f}({a.code}, {b.code})", a.t, max(a.bound, b.bound))
        if k < 0.76:
            a, b = self.same_int_type(self.gen_int(d - 1), self.gen_int(d - 1))
            c = self.gen_bool(d - 1)
            return E(f"({a.code} if {c} else {b.code})", a.t, max(a.bound, b.bound))
        if k < 0.84:
            return self.float_to_int()
        if k < 0.87:
            return E(f"int({self.gen_bool(d - 1)})", "w", 1)
        if k < 0.91:
            a, b = self.gen_int(d - 1), self.gen_int(d - 1)
            j = r.randrange(2)
            picked = (a, b)[j]
            return E(f"({a.code}, {b.code})[{r.choice([j, j - 2])}]", picked.t, picked.bound)
        if k < 0.95:
            a, b = self.same_int_type(self.gen_int(d - 1), self.gen_int(d - 1))
            return E(f"({a.code} {r.choice(['and', 'or'])} {b.code})", a.t, max(a.bound, b.bound))
        a = self.gen_int(d - 1)
        n = r.choice([0, 1, 2, 3])
        if a.t != "i64" and a.bound**n > (W_LIMIT if a.t == "w" else I32_LIMIT):
            a = self.as_i64(a)
        return E(f"({a.code} ** {n})", a.t, a.bound**n)

    def float_to_int(self) -> E:
        """A float -> int conversion of a range-checked float variable."""
        r = self.r
        want = "f32" if r.random() < 0.4 else "f64"
        v = self.float_var(want)
        lo, hi = ("float32(-1e9)", "float32(1e9)") if want == "f32" else ("-1e9", "1e9")
        conv, t = r.choice(
            [
                ("int({})", "w"),
                ("math.floor({})", "w"),
                ("math.ceil({})", "w"),
                ("int64({})", "i64"),
                ("int32({})", "i32"),
            ]
        )
        alt = self.lit_int()
        alt_code = alt.code if t == "w" else f"{t[0:1] + 'nt' + t[1:]}({alt.code})"
        return E(
            f"({conv.format(v)} if {lo} < {v} < {hi} else {alt_code})", t, 10**9 + 1 + alt.bound
        )

    # -- floats ---------------------------------------------------------------
    def as_f64(self, e: E) -> E:
        return e if e.t == "f64" else E(f"float64({e.code})", "f64")

    def as_f32(self, e: E) -> E:
        return e if e.t == "f32" else E(f"float32({e.code})", "f32")

    def nonzero_float(self, d: int, want: str) -> E:
        e = self.gen_float(d, want)
        one = "float32(1.0)" if e.t == "f32" else "1.0"
        return E(f"(abs({e.code}) + {one})", e.t)

    def float_leaf(self, want: str) -> E:
        r = self.r
        if want == "f32":
            if r.random() < 0.8:
                return E(self.float_var("f32"), "f32")
            return E(f"float32({self.lit_float()})", "f32")
        k = r.random()
        if k < 0.55:
            return E(self.float_var("f64"), "f64")
        if k < 0.8:
            return E(self.lit_float(), "wf")
        if k < 0.9:
            return E(f"float({self.gen_int(0).code})", "wf")
        return E(f"float64({self.float_var('f32')})", "f64")

    def float_binop(self, a: E, b: E, op: str) -> E:
        """``a op b`` with the operand casts that keep NumPy and numba in step."""
        if a.t == "f32" or b.t == "f32":
            if a.t == b.t:
                return E(f"({a.code} {op} {b.code})", "f32")
            other = b if a.t == "f32" else a
            if other.t == "w":
                other = self.as_i64(other)
            elif other.t == "wf":
                other = self.as_f64(other)
            a, b = (a, other) if a.t == "f32" else (other, b)
            return E(f"({a.code} {op} {b.code})", "f64")
        weak = all(x.t in ("wf", "w") for x in (a, b))
        return E(f"({a.code} {op} {b.code})", "wf" if weak else "f64")

    def math64(self, d: int) -> E:
        r = self.r
        x = (
            self.as_f64(self.gen_float(d - 1, "f64")).code
            if r.random() < 0.3
            else self.gen_float(d - 1, "f64").code
        )
        f = r.choice(
            [
                "sqrt",
                "exp",
                "log",
                "log2",
                "log10",
                "sin",
                "cos",
                "tan",
                "asin",
                "acos",
                "atan",
                "sinh",
                "cosh",
                "tanh",
                "erf",
                "erfc",
                "fabs",
                "atan2",
                "hypot",
                "copysign",
                "pow",
                "pow2",
            ]
        )
        if f == "sqrt":
            arg = f"abs({x})"
        elif f in ("exp", "sinh", "cosh"):
            arg = f"max(min({x}, 50.0), -50.0)"
        elif f in ("log", "log2", "log10"):
            arg = f"abs({x}) + 1.0"
        elif f in ("sin", "cos", "tan"):
            arg = f"max(min({x}, 1e6), -1e6)"
        elif f in ("asin", "acos"):
            arg = f"max(min({x}, 1.0), -1.0)"
        elif f in ("atan2", "copysign"):
            y = self.gen_float(d - 1, "f64").code
            arg = f"{x}, {_sign_source(y, '1.0') if f == 'copysign' else y}"
        elif f == "hypot":
            arg = f"min(abs({x}), 1e300), min(abs({self.gen_float(d - 1, 'f64').code}), 1e300)"
        elif f == "pow":
            arg = f"min(abs({x}), 1000.0), {r.choice(['0.5', '2.0', '3.0', '1.5', '0.0'])}"
        elif f == "pow2":
            return E(f"(min(abs({x}), 1e100) ** {r.choice([2, 3, 0.5, 2.0])})", "wf")
        else:
            arg = x
        return E(f"math.{f}({arg})", "wf")

    def gen_float(self, d: int, want: str) -> E:  # noqa: C901 -- a random generator: one branch per expression form, chosen by one draw
        """A float expression: f32 when ``want`` is f32, else f64 or wf."""
        r = self.r
        if d <= 0 or r.random() < 0.25:
            return self.float_leaf(want)
        k = r.random()
        if k < 0.35:
            op = r.choice(["+", "-", "*"])
            a = self.gen_float(d - 1, want)
            if want == "f32":
                b = self.gen_float(d - 1, "f32")
            else:
                b = r.choice(
                    [
                        lambda: self.gen_float(d - 1, "f64"),
                        lambda: self.gen_int(d - 1),
                        lambda: self.gen_float(d - 1, "f32"),
                    ]
                )()
                if b.t == "f32" and r.random() < 0.5:
                    a, b = b, a
                res = self.float_binop(a, b, op)
                return res if res.t != "f32" else self.as_f64(res)
            return self.float_binop(a, b, op)
        if k < 0.47:
            op = r.choice(["/", "//", "%"])
            a = self.gen_float(d - 1, want)
            if want == "f64" and op == "/" and r.random() < 0.3:  # int / int is float64
                return E(f"({self.gen_int(d - 1).code} / {self.divisor(d - 1).code})", "wf")
            b = self.nonzero_float(d - 1, want)
            return self.float_binop(a, b, op)
        if k < 0.55:
            a = self.gen_float(d - 1, want)
            return E(f"abs({a.code})" if r.random() < 0.5 else f"(-{a.code})", a.t)
        if k < 0.63:
            a, b = self.gen_float(d - 1, want), self.gen_float(d - 1, want)
            # Python's min/max return one of their arguments as it is: if either
            # may be a Python float, so may the result.
            return E(
                f"{r.choice(['min', 'max'])}({a.code}, {b.code})",
                "f32" if want == "f32" else ("wf" if "wf" in (a.t, b.t) else "f64"),
            )
        if k < 0.7:
            a, b = self.gen_float(d - 1, want), self.gen_float(d - 1, want)
            c = self.gen_bool(d - 1)
            if want == "f64" and a.t != b.t:
                a, b = self.as_f64(a), self.as_f64(b)
            return E(f"({a.code} if {c} else {b.code})", a.t)
        if k < 0.78:
            if want == "f32":
                a = self.gen_float(d - 1, "f32")
                f = r.choice(["sqrt", "fabs", "copysign"])
                if f == "copysign":
                    return E(
                        f"float32(math.copysign({a.code}, "
                        f"{_sign_source(self.gen_float(d - 1, 'f32').code, 'float32(1.0)')}))",
                        "f32",
                    )
                arg = f"abs({a.code})" if f == "sqrt" else a.code
                return E(f"float32(math.{f}({arg}))", "f32")
            return self.math64(d)
        if k < 0.86:  # conversions between the float types and from ints
            if want == "f32":
                src = r.choice(
                    [lambda: self.gen_float(d - 1, "f64"), lambda: self.gen_int(d - 1)]
                )()
                return self.as_f32(src) if src.t != "f32" else src
            return self.as_f64(self.gen_float(d - 1, "f32"))
        if k < 0.92:
            a, b = self.gen_float(d - 1, want), self.gen_float(d - 1, want)
            j = r.randrange(2)
            return E(f"({a.code}, {b.code})[{j}]", (a, b)[j].t)
        a = self.gen_float(d - 1, want)
        if want == "f32":
            return E(f"(-{a.code} if {self.gen_bool(d - 1)} else {a.code})", "f32")
        return E(f"float({a.code})", "wf")  # a Python float, whatever went in

    # -- bools ----------------------------------------------------------------
    def comparable_pair(self, d: int) -> tuple[E, E]:
        r = self.r
        k = r.random()
        if k < 0.4:
            return self.gen_int(d), self.gen_int(d)
        if k < 0.65:
            return self.gen_float(d, "f64"), self.gen_float(d, "f64")
        if k < 0.85:
            return self.gen_float(d, "f32"), self.gen_float(d, "f32")
        a, b = self.gen_int(d), self.gen_float(d, r.choice(["f64", "f32"]))
        a = self.as_i64(a) if b.t == "f32" else E(f"float({a.code})", "wf")
        if b.t == "wf" and a.t == "i64":
            b = self.as_f64(b)
        return (a, b) if r.random() < 0.5 else (b, a)

    def gen_bool(self, d: int) -> str:
        r = self.r
        k = r.random()
        if d <= 0 or k < 0.45:
            ops = ["<", "<=", ">", ">=", "==", "!="]
            if r.random() < 0.2:  # a chained comparison over one type group
                a, b = self.comparable_pair(max(d - 1, 0))
                c = b if r.random() < 0.5 else a
                return f"({a.code} {r.choice(ops)} {b.code} {r.choice(ops)} {c.code})"
            a, b = self.comparable_pair(max(d - 1, 0))
            return f"({a.code} {r.choice(ops)} {b.code})"
        if k < 0.7:
            return f"({self.gen_bool(d - 1)} {r.choice(['and', 'or'])} {self.gen_bool(d - 1)})"
        if k < 0.8:
            return f"(not {self.gen_bool(d - 1)})"
        if k < 0.9:
            f = r.choice(["isnan", "isinf", "isfinite"])
            return f"math.{f}({self.gen_float(d - 1, r.choice(['f64', 'f32'])).code})"
        return r.choice(["True", "False", f"bool({self.gen_int(d - 1).code})"])

    # -- statements -------------------------------------------------------------
    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def value_for(self, var: str, d: int) -> str:
        kind = var[len(self.p)]
        if kind == "i":
            return self.as_i64(self.gen_int(d)).code
        if kind == "f":
            return self.as_f64(self.gen_float(d, "f64")).code
        return self.as_f32(self.gen_float(d, "f32")).code

    def assign(self, indent: int) -> None:
        r = self.r
        var = r.choice(self.ivars + self.fvars + self.gvars)
        kind = var[len(self.p)]
        d = r.randint(1, 3)
        k = r.random()
        if k < 0.45:
            self.emit(indent, f"{var} = {self.value_for(var, d)}")
        elif k < 0.85 and kind == "i":
            op = r.choice(["+=", "-=", "*=", "&=", "|=", "^=", "//=", "%=", "<<=", ">>="])
            if op in ("//=", "%="):
                rhs = self.divisor(d).code
            elif op in ("<<=", ">>="):
                rhs = str(r.randint(0, 63))
            else:
                rhs = self.gen_int(d).code
            self.emit(indent, f"{var} {op} {rhs}")
        elif k < 0.85:
            op = r.choice(["+=", "-=", "*=", "/=", "//=", "%="])
            want = "f32" if kind == "g" else "f64"
            if op in ("/=", "//=", "%="):
                rhs = self.nonzero_float(d, want)
            elif kind == "f" and r.random() < 0.3:
                rhs = self.gen_int(d)
            else:
                rhs = self.gen_float(d, want)
            if kind == "g":
                rhs = self.as_f32(rhs)
            self.emit(indent, f"{var} {op} {rhs.code}")
        else:  # tuple packing and unpacking
            a, b = (
                r.sample(self.ivars + self.fvars + self.gvars, 2)
                if len(self.ivars + self.fvars + self.gvars) > 1
                else (var, var)
            )
            if a[len(self.p)] == b[len(self.p)] and r.random() < 0.5:
                self.emit(indent, f"{a}, {b} = {b}, {a}")
            else:
                self.emit(
                    indent, f"{a}, {b} = {self.value_for(a, d - 1)}, {self.value_for(b, d - 1)}"
                )

    def block(self, indent: int, depth: int, n: int) -> None:
        for _ in range(n):
            self.statement(indent, depth)

    def statement(self, indent: int, depth: int) -> None:
        r = self.r
        k = r.random()
        if depth >= 3 or k < 0.5:
            if self.in_loop and r.random() < 0.12:
                self.emit(indent, f"if {self.gen_bool(1)}:")
                self.emit(indent + 1, r.choice(["break", "continue"]))
                return
            self.assign(indent)
        elif k < 0.7:
            self.emit(
                indent,
                f"if {self.gen_bool(2)}:" if r.random() < 0.85 else f"if {self.gen_int(1).code}:",
            )
            self.block(indent + 1, depth + 1, r.randint(1, 3))
            for _ in range(r.choice([0, 0, 1, 2])):
                self.emit(indent, f"elif {self.gen_bool(2)}:")
                self.block(indent + 1, depth + 1, r.randint(1, 2))
            if r.random() < 0.5:
                self.emit(indent, "else:")
                self.block(indent + 1, depth + 1, r.randint(1, 2))
        elif k < 0.85 and self.in_loop < 2:
            self.counter += 1
            name = f"{self.p}k{self.counter}"
            small = lambda: self.r.choice(  # noqa: E731
                [str(r.randint(-3, 7)), f"({self.gen_int(1).code} % {r.randint(2, 7)})"]
            )
            nargs = r.randint(1, 3)
            if nargs == 1:
                args, bound = small(), 8
            elif nargs == 2:
                args, bound = f"{small()}, {small()}", 8
            else:
                step = r.choice([-3, -2, -1, 1, 2])
                args, bound = f"{small()}, {small()}, {step}", 8
            self.emit(indent, f"for {name} in range({args}):")
            self.loopvars.append((name, bound))
            self.in_loop += 1
            self.block(indent + 1, depth + 1, r.randint(1, 3))
            self.in_loop -= 1
            self.loopvars.pop()
        elif self.in_loop < 2:
            self.counter += 1
            name = f"{self.p}w{self.counter}"
            self.emit(indent, f"{name} = 0")
            cond = self.gen_bool(1)
            self.emit(indent, f"while {name} < {r.randint(1, 6)} and {cond}:")
            self.emit(indent + 1, f"{name} += 1")
            self.in_loop += 1
            self.block(indent + 1, depth + 1, r.randint(1, 3))
            self.in_loop -= 1
        else:
            self.assign(indent)

    def program(self, indent: int, cols: dict) -> None:
        r = self.r
        for v in self.ivars:
            choices = [
                f"ai[i, {self.col()}]",
                f"int64({self.lit_int().code})",
                f"int64(bi[i, {self.col()}])",
            ]
            self.emit(indent, f"{v} = " + r.choice(choices))
        for v in self.fvars:
            self.emit(
                indent,
                f"{v} = " + r.choice([f"af[i, {self.col()}]", f"float64({self.lit_float()})"]),
            )
        for v in self.gvars:
            self.emit(
                indent,
                f"{v} = " + r.choice([f"bf[i, {self.col()}]", f"float32({self.lit_float()})"]),
            )
        self.block(indent, 0, r.randint(2, 6))
        for v, (arr, key) in zip(
            self.ivars + self.fvars + self.gvars,
            [("oi", "i")] * len(self.ivars)
            + [("of", "f")] * len(self.fvars)
            + [("og", "g")] * len(self.gvars),
            strict=True,
        ):
            self.emit(indent, f"{arr}[i, {cols[key]}] = {v}")
            cols[key] += 1


def generate_kernel(rng: random.Random, programs: int = 4) -> tuple[str, dict]:
    """(source of ``kernel``, output columns used per output array)."""
    lines = [
        "def kernel(ai, bi, af, bf, oi, of, og):",
        "    i = cuda.grid(1)",
        "    if i >= oi.shape[0]:",
        "        return",
    ]
    cols = {"i": 0, "f": 0, "g": 0}
    for n in range(programs):
        g = ProgramGen(rng, f"p{n}")
        lines.append(f"    # program {n}")
        g.program(1, cols)
        lines.extend(g.lines)
    return "\n".join(lines) + "\n", cols


def program_sources(src: str) -> list[str]:
    """The kernel's programs, each with its header comment (for failure reports)."""
    parts = src.split("    # program ")
    return ["    # program " + p for p in parts[1:]]
