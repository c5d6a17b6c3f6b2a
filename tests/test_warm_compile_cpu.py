"""bench/warm_compile_cpu.py without a GPU: a round compiles a new kernel through the
dispatcher to a cubin and times the toolchain floor on that round's LLVM IR."""

import pytest


@pytest.fixture
def bench(repo_script):
    return repo_script("bench", "warm_compile_cpu")


def test_a_round_reports_the_compile_and_its_floor(bench):
    from kernels import CASES

    case = next(c for c in CASES if c.name == "saxpy")
    (run,) = bench.rounds_of(case, 1)
    assert set(run) == {"compile", "outside_toolchain", "stages_1_6", "floor"}
    assert all(value > 0 for value in run.values()), run
    # the front end's stages run outside the toolchain, and are not all of it
    assert run["stages_1_6"] < run["outside_toolchain"] < run["compile"], run


def test_every_warm_kernel_is_a_test_case(bench):
    from kernels import CASES

    assert set(bench.WARM_KERNELS) <= {c.name for c in CASES}
