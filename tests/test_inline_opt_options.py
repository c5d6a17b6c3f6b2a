"""numba's ``jit(inline=...)``, ``jit(forceinline=...)`` and ``jit(opt=False)``: what they
change in the LLVM IR and PTX cujit generates (no GPU: ``target="cuda"`` compiles
through libNVVM), and that the kernels still compute the same on the CPU target."""

from __future__ import annotations

import re

import numpy as np
import pytest

from cujit import cuda, float64, int32

SIG = (int32[::1],)
CALL = re.compile(r"call [a-zA-Z0-9]* @")


def _pair(target: str, **options):
    """A kernel calling a @cuda.jit function (compiled as a device function) made with
    ``options``; returns the kernel."""

    @cuda.jit(target=target, **options)
    def store_seven(a):
        a[0] = 7

    @cuda.jit(SIG, target=target)
    def call_store_seven(a):
        store_seven(a)
        a[1] = a[0] + 1

    return call_store_seven


def _llvm(**options) -> str:
    return _pair("cuda", **options).inspect_llvm(SIG)


@pytest.mark.parametrize(
    "inline, inlined",
    [
        ("always", True),
        (True, True),
        (lambda call, caller, callee: True, True),
        ("never", False),
        (False, False),
        (lambda call, caller, callee: False, False),
    ],
)
def test_inline_option_inlines_in_cujit_ir(inline, inlined):
    llvm = _llvm(inline=inline)
    assert (CALL.search(llvm) is None) is inlined, llvm
    assert "alwaysinline" not in llvm


def test_cost_model_sees_the_typed_callee():
    seen = []

    def model(call, caller, callee):
        seen.append(callee.name)
        return False

    _llvm(inline=model)
    assert seen and all(name.startswith("store_seven") for name in seen)


@pytest.mark.parametrize("force", [True, False])
def test_forceinline_marks_the_llvm_function(force):
    llvm = _llvm(forceinline=force)
    assert CALL.search(llvm) is not None  # still a call in cujit's IR
    callee = re.search(r"define.*[^_]store_seven.*", llvm)
    assert callee is not None
    assert ("alwaysinline" in callee.group()) is force
    kernel = re.search(r"define.*call_store_seven.*", llvm)
    assert "alwaysinline" not in kernel.group()


@pytest.mark.parametrize("options", [{"inline": "always"}, {"forceinline": True}, {}])
def test_inlined_kernels_compute_the_same_on_cpu(options):
    a = np.full(3, -1, np.int32)
    _pair("cpu", **options)[1, 1](a)
    assert list(a) == [7, 8, -1]


def test_inline_on_device_true_functions():
    @cuda.jit(device=True, inline=True)
    def twice(x):
        return 2 * x

    @cuda.jit((float64[::1],), target="cuda")
    def k(a):
        a[0] = twice(a[1])

    assert CALL.search(k.inspect_llvm((float64[::1],))) is None


def _store_one(x):
    x[0] = 1


def test_opt_false_keeps_parameters_in_local_memory():
    sig = (float64[::1],)
    noopt = cuda.jit(sig, opt=False, target="cuda")(_store_one)
    opt = cuda.jit(sig, target="cuda")(_store_one)
    assert "__local_depot0" in noopt.inspect_asm(sig)
    assert "__local_depot0" not in opt.inspect_asm(sig)


def test_opt_false_computes_the_same_on_cpu():
    x = np.zeros(2)
    cuda.jit(opt=False, target="cpu")(_store_one)[1, 1](x)
    assert list(x) == [1.0, 0.0]
