"""tools/first_compile_time.py without a GPU: one fresh child in each mode reports every
phase, and with ``--warmup`` the compile after the warm-up goes through the dispatcher."""

import os
import sys

import pytest

TOOLS = os.path.join(os.path.dirname(__file__), "..", "tools")
SRC = os.path.join(os.path.dirname(__file__), "..", "src")


@pytest.fixture
def tool():
    sys.path.insert(0, TOOLS)
    try:
        import first_compile_time

        yield first_compile_time
    finally:
        sys.path.remove(TOOLS)


@pytest.mark.parametrize("warmup", [False, True])
def test_a_child_reports_each_phase(tool, warmup):
    run = tool.run_child(SRC, warmup)
    for key in tool._keys(warmup):
        assert run[key] > 0, key
    # The compile's part outside the toolchain is positive and the smaller part of it.
    assert 0 < run["outside_toolchain"] < run["compile"] / 2
    # Every phase lies inside the process's own time.
    assert run["numpy"] + run["cujit"] + run["host_api"] + run["compile"] < run["total"]
    assert (run["warmup"] is not None) is warmup


def test_the_warmup_mode_leaves_the_first_compile_little_to_import(tool):
    # After the warm-up the saxpy's compile runs code that is loaded already: its part
    # outside the toolchain is a few milliseconds, where a cold first compile (which
    # imports the stages and llvmlite) spends tens of milliseconds there.
    cold = tool.run_child(SRC, False)
    warm = tool.run_child(SRC, True)
    assert warm["outside_toolchain"] < cold["outside_toolchain"] / 2
