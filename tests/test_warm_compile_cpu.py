"""bench/warm_compile_cpu.py without a GPU: a round compiles a new kernel through the
dispatcher to a cubin and times the toolchain floor on that round's LLVM IR."""

import os
import sys

import pytest

BENCH = os.path.join(os.path.dirname(__file__), "..", "bench")


@pytest.fixture
def bench():
    sys.path.insert(0, BENCH)
    try:
        import warm_compile_cpu

        yield warm_compile_cpu
    finally:
        sys.path.remove(BENCH)


def test_a_round_reports_the_compile_and_its_floor(bench):
    from kernels import CASES

    case = next(c for c in CASES if c.name == "saxpy")
    (run,) = bench.rounds_of(case, 1)
    assert set(run) == {"compile", "outside_toolchain", "floor"}
    assert all(value > 0 for value in run.values()), run


def test_every_warm_kernel_is_a_test_case(bench):
    from kernels import CASES

    assert set(bench.WARM_KERNELS) <= {c.name for c in CASES}
