"""Deep programs compile on a bounded Python stack: a chain of 1,000 device functions, each
calling the one before, and kernels of 10,000 statements nested as deep as Python allows
(ifs, loops, an ``elif`` chain, a sum of 10,000 terms, a condition of 10,000 ``and``s),
to PTX on the CUDA target and run on the CPU target against plain Python.

The chain of 1,000 runs in a child process (with a time limit), beside the other tests: a
compiler that still recursed per device function would end that process, not the test
session.  Device
functions deeper than ``function_calls.NESTING`` are compiled from the bottom of the
chain; the tests with a small ``NESTING`` check that this changes no answer and no error.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings

import pytest
from deep_programs import SHAPES, arguments, chain_source, expected, load

from cujit import cuda
from cujit.codegen import functions as lowering
from cujit.diagnostics import CompileError, InternalCompilerError
from cujit.infer import function_calls

HERE = os.path.dirname(os.path.abspath(__file__))
SIG = "void(int64[:], int64[:])"
ARCH = (9, 0)

_CHILD = """
import sys
sys.path[:0] = [{tests!r}, {src!r}]
from deep_programs import arguments, chain_source, expected, load
from cujit import cuda

module = load(chain_source({n}), "chain")
ptx, _ = cuda.compile_ptx(module.kern, "void(int64[:], int64[:])", cc=(9, 0))
assert ".entry" in ptx and "kern" in ptx, ptx[:500]
module = load(chain_source({n}), "chain")  # new device functions for the other target
out, x = arguments("chain")
cuda.jit(target="cpu")(module.kern)[1, 1](out, x)
assert out[0] == expected(module, "chain"), (out, expected(module, "chain"))
print("deep chain ok", out[0])
"""


@pytest.fixture(scope="module")
def chain_child():
    """The child compiling and running the chain of 1,000, started once and left to run
    beside the tests of this module that ask for it."""
    code = _CHILD.format(tests=HERE, src=os.path.join(HERE, "..", "src"), n=1000)
    env = {k: v for k, v in os.environ.items() if k != "CUJIT_TARGET"}
    child = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    yield child
    if child.poll() is None:
        child.kill()
        child.communicate()


@pytest.mark.usefixtures("chain_child")
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_10000_nested_statements_compile_to_ptx(shape):
    module = load(SHAPES[shape](10_000), shape)
    ptx, _ = cuda.compile_ptx(module.kern, SIG, cc=ARCH)
    assert ".entry" in ptx


@pytest.mark.usefixtures("chain_child")
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_10000_nested_statements_run_on_the_cpu_target(shape):
    module = load(SHAPES[shape](10_000), shape)
    out, x = arguments(shape)
    cuda.jit(target="cpu")(module.kern)[1, 1](out, x)
    assert out[0] == expected(module, shape)


@pytest.fixture
def shallow(monkeypatch):
    """Defer callees (and their lowering) after 3 levels: small chains take the path of
    deep ones."""
    monkeypatch.setattr(function_calls, "NESTING", 3)
    monkeypatch.setattr(lowering, "NESTING", 3)


def _chain_ending_in(body: str, n: int = 12, call_last: str = "f0(v)") -> str:
    """``f0`` with ``body``; ``f1 .. f{n-1}`` each return ``f{k-1}(v) + 1``."""
    lines = ["import numpy as np", "from cujit import cuda", "", "", "@cuda.jit(device=True)"]
    lines += [f"def f0({'v, n' if 'n)' in body else 'v'}):"]
    lines += ["    " + line for line in textwrap.dedent(body).strip().splitlines()]
    lines.append("")
    for k in range(1, n):
        call = call_last if k == 1 else f"f{k - 1}(v)"
        lines += ["", "@cuda.jit(device=True)", f"def f{k}(v):", f"    return {call} + 1", ""]
    lines += ["", "def kern(out, x):", f"    out[0] = f{n - 1}(x[0])", ""]
    return "\n".join(lines)


CHAIN_ENDS = {
    "type error": ("return v + 'a'", "f0(v)"),
    "mutual recursion": ("return f6(v)", "f0(v)"),
    "self recursion": ("if v <= 0:\n    return 0\nreturn f0(v - 1) + 2", "f0(v)"),
    "constant argument": ("a = cuda.local.array(n, np.int64)\na[0] = v\nreturn a[0]", "f0(v, 3)"),
    "no return path": ("return f0(v) + 1", "f0(v)"),
}


def _compile_chain(body: str, call_last: str) -> tuple[str, list[str]]:
    """What compiling the chain gives: its PTX's length or its error (the file's name
    taken out), and the warnings."""
    module = load(_chain_ending_in(body, call_last=call_last), "ends")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            ptx, _ = cuda.compile_ptx(module.kern, SIG, cc=ARCH)
            answer = f"ptx of {len(ptx)} characters"
        except CompileError as exc:
            assert not isinstance(exc, InternalCompilerError), exc
            answer = f"{type(exc).__name__}: {exc}"
    messages = [str(w.message).replace(module.__file__, "<file>") for w in seen]
    return answer.replace(module.__file__, "<file>"), messages


@pytest.mark.parametrize("case", sorted(CHAIN_ENDS))
def test_deferred_callees_answer_as_nested_ones(case, monkeypatch):
    body, call_last = CHAIN_ENDS[case]
    nested = _compile_chain(body, call_last)
    monkeypatch.setattr(function_calls, "NESTING", 3)
    monkeypatch.setattr(lowering, "NESTING", 3)
    deferred = _compile_chain(body, call_last)
    assert deferred == nested


def test_errors_deep_in_a_chain_point_at_the_user_line(shallow):
    module = load(_chain_ending_in("return v + 'a'", n=30), "error")
    with pytest.raises(CompileError) as info:
        cuda.compile_ptx(module.kern, SIG, cc=ARCH)
    assert not isinstance(info.value, InternalCompilerError)
    assert info.value.loc.line == 7  # f0's return, in the generated file
    assert len(info.value.call_chain) == 30  # f1 .. f29 and the kernel, innermost first
    assert "'f0'" in info.value.call_chain[0] and "'f29'" in info.value.call_chain[-1]


def test_mutual_recursion_across_deferred_callees_is_named(shallow):
    module = load(_chain_ending_in("return f9(v)", n=12), "mutual")
    with pytest.raises(CompileError, match=r"mutually recursive device functions") as info:
        cuda.compile_ptx(module.kern, SIG, cc=ARCH)
    assert "(f9 -> f8 -> f7 -> f6 -> f5 -> f4 -> f3 -> f2 -> f1 -> f0 -> f9)" in str(info.value)


def test_shallow_nesting_runs_on_the_cpu_target(shallow):
    module = load(chain_source(40), "cpu")
    out, x = arguments("chain")
    cuda.jit(target="cpu")(module.kern)[1, 1](out, x)
    assert out[0] == expected(module, "chain")


def test_a_device_function_reached_twice_is_lowered_once(shallow):
    src = _chain_ending_in("return v * 2", n=8, call_last="f0(v) + f0(v + 1)")
    module = load(src, "twice")
    out, x = arguments("chain")
    cuda.jit(target="cpu")(module.kern)[1, 1](out, x)
    v = int(x[0])
    assert out[0] == v * 2 + (v + 1) * 2 + 1 + 6
    ptx, _ = cuda.compile_ptx(module.kern, SIG, cc=ARCH, opt=0)  # every function kept
    assert ptx.count(".func") >= 8


def test_a_failing_callee_is_compiled_once_per_callers(monkeypatch):
    # Typing retries a failed call in its final sweep: without the record of failed
    # compiles, a chain of 40 over a callee with no return path would compile it 2**40 times.
    compiles = []
    compile_callee = function_calls.Callees._compile

    def counted(self, request):
        compiles.append(request.devfn.__name__)
        return compile_callee(self, request)

    monkeypatch.setattr(function_calls.Callees, "_compile", counted)
    module = load(_chain_ending_in("return f0(v) + 1", n=40), "runaway")
    with pytest.raises(CompileError, match="runaway recursion") as info:
        cuda.compile_ptx(module.kern, SIG, cc=ARCH)
    assert not isinstance(info.value, InternalCompilerError)
    assert len(compiles) <= 2 * 40


def test_chain_of_1000_device_functions_compiles_and_runs(chain_child):
    try:
        out, err = chain_child.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        chain_child.kill()
        out, err = chain_child.communicate()
        pytest.fail(f"the chain of 1,000 did not compile in 300 s: {err[-2000:]}")
    assert chain_child.returncode == 0, err[-4000:]
    assert "deep chain ok" in out


def test_a_cached_kernel_too_deep_to_fingerprint_compiles_without_the_cache(tmp_path, monkeypatch):
    """The disk cache's key walks what a kernel calls level by level; past Python's
    stack it says so and compiles without the cache, rather than failing."""
    monkeypatch.setenv("CUJIT_CACHE_DIR", str(tmp_path))
    module = load(chain_source(500), "chaincache")
    kernel = cuda.jit(module.kern, target="cpu", cache=True)
    out, x = arguments("chain")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kernel[1, 1](out, x)
    assert out[0] == expected(module, "chain")
    assert any("nested too deep to fingerprint" in str(w.message) for w in caught)
