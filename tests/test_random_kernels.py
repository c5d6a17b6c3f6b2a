"""Random kernels (issue 5, "Robustness"): ``kernelgen`` writes random small kernels as
Python source; each runs through the whole pipeline on the CPU target and as plain
Python over the grid (``pysim``) on the same inputs, and every output must agree:
ints exactly, floats bit for bit (nan equal to nan, -0.0 distinct from 0.0).

CI runs a fixed seed: ``KERNELS`` kernels of ``PROGRAMS`` random programs each (the
programs are batched so the ~0.1 s compile cost per kernel is paid once per batch):
550 programs, about 60 s on a 2-core machine.
A longer campaign for developers:

    CUJIT_FUZZ_KERNELS=2000 PYTHONPATH=src python3 -m pytest -q tests/test_random_kernels.py

runs 2000 programs from a fresh random seed (printed; ``CUJIT_FUZZ_SEED=S`` replays
one).  A failure prints the kernel's source, the thread and the program whose output
differs; the programs are independent, so the failing one can be cut out alone.
A mismatch is a bug in cujit (or in the generator's typing rules): fix it, never
filter it.
"""

from __future__ import annotations

import math
import os
import random

import numpy as np
import pytest
from kernelgen import generate_kernel, program_sources
from pysim import run_kernel

from cujit import cuda, float32, float64, int32, int64

CI_SEED = 20240611
PROGRAMS = 5  # random programs per kernel
KERNELS = 110  # kernels per CI run: 550 programs
THREADS = 8  # grid 2 x block 4
NS = {
    "cuda": cuda,
    "math": math,
    "int32": int32,
    "int64": int64,
    "float32": float32,
    "float64": float64,
}


def make_inputs(rng: np.random.Generator):
    """Each thread's row: ints small, large and extreme; floats normal, huge, tiny,
    subnormal, +-0, +-inf and nan."""
    ai = rng.integers(-20, 20, (THREADS, 4))
    big = rng.random((THREADS, 4)) < 0.25
    ai[big] = rng.integers(-(2**63), 2**63 - 1, big.sum(), dtype=np.int64)
    ai[rng.random((THREADS, 4)) < 0.05] = np.iinfo(np.int64).min
    bi = rng.integers(-(2**15), 2**15, (THREADS, 4)).astype(np.int32)
    bi[rng.random((THREADS, 4)) < 0.4] //= 1000

    def floats(dt):
        x = rng.standard_normal((THREADS, 4)) * rng.choice([1, 10, 1e6], (THREADS, 4))
        special = np.array(
            [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310, -2.5e-320, 1e300, 1e-40, 3e38, 0.5, -1.0],
            dtype=np.float64,
        )
        pick = rng.random((THREADS, 4)) < 0.2
        x[pick] = rng.choice(special, pick.sum())
        with np.errstate(over="ignore"):
            return x.astype(dt)

    return [ai.astype(np.int64), bi, floats(np.float64), floats(np.float32)]


def outputs(cols):
    return [
        np.full((THREADS, max(cols["i"], 1)), -77, np.int64),
        np.full((THREADS, max(cols["f"], 1)), np.nan, np.float64),
        np.full((THREADS, max(cols["g"], 1)), np.nan, np.float32),
    ]


def compile_source(src: str, name: str):
    ns = dict(NS)
    exec(compile(src, f"<random kernel {name}>", "exec"), ns)
    return ns["kernel"]


def _mismatch(sim, got):
    if sim.dtype.kind == "f":
        same = ((sim == got) & (np.signbit(sim) == np.signbit(got))) | (
            np.isnan(sim) & np.isnan(got)
        )
    else:
        same = sim == got
    return np.argwhere(~same)


def check_kernel(seed: int, programs: int = PROGRAMS) -> None:
    """Generate kernel number ``seed``, run it both ways, raise on any difference."""
    src, cols = generate_kernel(random.Random(seed), programs)
    fn = compile_source(src, str(seed))
    inputs = make_inputs(np.random.default_rng(seed))
    sim_out, cpu_out = outputs(cols), outputs(cols)
    try:
        run_kernel(fn, 2, 4, [a.copy() for a in inputs] + sim_out)
    except Exception as exc:  # the generator wrote a program Python rejects
        raise AssertionError(
            f"plain Python raised {exc!r} on kernel {seed}; the generator "
            f"must not write such programs:\n{src}"
        ) from exc
    kernel = cuda.jit(fn, target="cpu")
    args = [a.copy() for a in inputs] + cpu_out
    kernel[2, 4](*args)
    for a, b in zip(args[:4], inputs, strict=True):
        np.testing.assert_array_equal(a, b, err_msg=f"kernel {seed} wrote an input")
    progs = program_sources(src)
    for name, sim, got in zip("ifg", sim_out, cpu_out, strict=True):
        bad = _mismatch(sim, got)
        if bad.size:
            t, c = bad[0]
            which = _program_of(progs, {"i": "oi", "f": "of", "g": "og"}[name], c)
            raise AssertionError(
                f"kernel {seed}: thread {t}, output {name}[{t}, {c}]: plain Python "
                f"{sim[t, c]!r}, CPU target {got[t, c]!r} ({len(bad)} differ)\n"
                f"program:\n{which}\ninputs of thread {t}: "
                f"{[a[t].tolist() for a in inputs]}\nwhole kernel:\n{src}"
            )


def _program_of(progs, arr, col):
    for p in progs:
        if f"{arr}[i, {col}] =" in p:
            return p
    return "?"


def campaign():
    n = os.environ.get("CUJIT_FUZZ_KERNELS")
    if n is None:
        return CI_SEED, KERNELS
    seed = int(os.environ.get("CUJIT_FUZZ_SEED", random.SystemRandom().randrange(2**32)))
    print(f"random kernels: seed {seed}")
    return seed, max(1, -(-int(n) // PROGRAMS))


_SEED, _COUNT = campaign()


@pytest.mark.parametrize("block", range(10))
def test_random_kernels_agree_with_plain_python(block):
    """Kernels ``block``, ``block + 10``... of the campaign (ten test items, so a
    failure does not hide the other blocks' results)."""
    for k in range(block, _COUNT, 10):
        check_kernel(_SEED * 100_003 + k)


def test_generator_is_deterministic_and_varied():
    """The same seed gives the same kernel; the CI kernels use every construct."""
    a, _ = generate_kernel(random.Random(5), PROGRAMS)
    b, _ = generate_kernel(random.Random(5), PROGRAMS)
    assert a == b
    text = "\n".join(
        generate_kernel(random.Random(CI_SEED * 100_003 + k), PROGRAMS)[0] for k in range(KERNELS)
    )
    for construct in [
        "while ",
        "for ",
        "range(",
        ", -",
        "break",
        "continue",
        "elif ",
        "else:",
        " and ",
        " or ",
        "not ",
        " if ",
        "//",
        "%",
        "<<",
        ">>",
        "**",
        "abs(",
        "min(",
        "max(",
        "int(",
        "float(",
        "int32(",
        "float32(",
        "math.sqrt",
        "math.exp",
        "math.floor",
        "math.isnan",
        "+=",
        "//=",
        ")[",
        "bi[i",
        "bf[i",
    ]:
        assert construct in text, construct
    assert text.count("# program") == KERNELS * PROGRAMS >= 500
