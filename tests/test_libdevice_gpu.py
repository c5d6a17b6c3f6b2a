"""cuda.libdevice on the GPU: a sample per kind of signature against the CPU target and NumPy,
and every function compiled to PTX that reads its parameters and stores its result."""

from __future__ import annotations

import numpy as np
import pytest
from libdevice_harness import outputs, pyfunc, run

from cujit import cuda
from cujit.libdevice import FUNCTIONS
from cujit.types import SCALAR_BY_NAME as SCALARS

pytestmark = pytest.mark.gpu
RNG = np.random.default_rng(7)

SAMPLE = {
    "sin": (RNG.uniform(-3, 3, 256),),
    "expf": (RNG.uniform(-3, 3, 256),),
    "sincos": (RNG.uniform(-3, 3, 256),),
    "frexp": (RNG.uniform(1, 10, 256),),
    "remquof": (RNG.uniform(-9, 9, 256), RNG.uniform(0.5, 2, 256)),
    "sad": (RNG.integers(0, 200, 256), RNG.integers(0, 200, 256), RNG.integers(0, 9, 256)),
    "umul64hi": (RNG.integers(-(2**63), 2**63, 256), RNG.integers(-(2**63), 2**63, 256)),
    "byte_perm": (
        RNG.integers(0, 2**31, 256),
        RNG.integers(0, 2**31, 256),
        RNG.integers(0, 2**15, 256),
    ),
    "dadd_rd": (RNG.uniform(-1e3, 1e3, 256), RNG.uniform(-1e3, 1e3, 256)),
    "fmaf_ru": tuple(RNG.uniform(-9, 9, 256) for _ in range(3)),
    "ull2float_rz": (RNG.integers(-(2**63), 2**63, 256),),
    "erfinv": (RNG.uniform(-0.99, 0.99, 256),),
    "normcdfinvf": (RNG.uniform(0.01, 0.99, 256),),
}


@pytest.mark.parametrize("name", sorted(SAMPLE))
def test_gpu_matches_cpu_target(name):
    gpu = run(name, *SAMPLE[name], target="cuda")
    cpu = run(name, *SAMPLE[name], target="cpu")
    for k, (g, c) in enumerate(zip(gpu, cpu, strict=True)):
        if g.dtype.kind == "f":
            np.testing.assert_allclose(g, c, rtol=2e-6 if g.dtype == np.float32 else 1e-13)
        elif name.startswith("remquo") and k == 1:
            # The quotient: C (and CUDA) promise its sign and at least its 3 low bits;
            # libdevice gives exactly those, the host's C library more.
            assert np.array_equal(np.abs(g) & 7, np.abs(c) & 7)
            low = (np.abs(g) & 7) != 0
            assert np.array_equal(np.sign(g[low]), np.sign(c[low]))
        else:
            assert np.array_equal(g, c)


def test_every_function_compiles_to_ptx_calling_libdevice():
    for name, fn in FUNCTIONS.items():
        sig = tuple(SCALARS[t.name][::1] for t in (*outputs(name), *fn.args))
        ptx, _ = cuda.compile_ptx(pyfunc(name), sig)
        assert "ld.param" in ptx and "st.global" in ptx, name
