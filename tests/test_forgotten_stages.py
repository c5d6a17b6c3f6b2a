"""A kernel's specialisation lets go of stages 1-3's outputs once compiled
(``dispatcher.FORGOTTEN_STAGES``); what reads a compiled kernel still works, and
``pipeline.compile_kernel`` still returns every stage."""

from __future__ import annotations

import io

import numpy as np

from cujit import cuda, pipeline
from cujit.dispatcher import FORGOTTEN_STAGES
from cujit.options import Options
from cujit.types import float32


def scale(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = 2 * x[i]


SIG = (float32[::1], float32[::1])


def test_the_specialisation_keeps_stages_four_on():
    kernel = cuda.jit(scale)
    kernel._options = lambda: Options(arch=(9, 0))
    spec = kernel.compile(SIG)
    assert FORGOTTEN_STAGES == ("bytecode", "cfg", "ir")
    assert not set(FORGOTTEN_STAGES) & set(spec.result.outputs)
    assert {"typed", "passes", "llvm", "ptx", "cubin"} <= set(spec.result.outputs)
    assert set(FORGOTTEN_STAGES) <= set(spec.result.times)  # their times stay
    text = io.StringIO()
    kernel.inspect_types(file=text)
    assert "scale" in text.getvalue() and "float32" in text.getvalue()
    assert ".entry" in kernel.inspect_asm(SIG)


def test_compile_kernel_returns_every_stage():
    result = pipeline.compile_kernel(scale, SIG, Options(arch=(9, 0)))
    assert set(FORGOTTEN_STAGES) <= set(result.outputs)


def test_a_cpu_kernel_runs_after_letting_go():
    kernel = cuda.jit(scale, target="cpu")
    x = np.arange(8, dtype=np.float32)
    out = np.zeros_like(x)
    kernel[1, 8](x, out)
    np.testing.assert_array_equal(out, 2 * x)
    (spec,) = kernel.overloads.values()
    assert not set(FORGOTTEN_STAGES) & set(spec.result.outputs)


def test_a_launch_selected_variant_lets_go_too():
    kernel = cuda.jit(scale, target="cpu")
    x = np.arange(1024, dtype=np.float32)
    out = np.zeros_like(x)
    for _ in range(3):  # the CPU target compiles the variant at the second launch
        kernel[4, 256](x, out)
    np.testing.assert_array_equal(out, 2 * x)
    (spec,) = kernel.overloads.values()
    assert spec.coarse is not None and spec.coarse.wide is not None
    wide = spec.coarse.wide.result
    assert {"typed", "passes", "llvm"} <= set(wide.outputs)
    assert not set(FORGOTTEN_STAGES) & set(wide.outputs)
