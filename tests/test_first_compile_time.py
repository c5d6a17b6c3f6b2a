"""tools/first_compile_time.py without a GPU: one fresh child in each mode reports every
phase, and with ``--warmup`` the compile after the warm-up goes through the dispatcher
and finds the compiler loaded. No check here compares times."""

import os

import pytest

SRC = os.path.join(os.path.dirname(__file__), "..", "src")


@pytest.fixture
def tool(repo_script):
    return repo_script("tools", "first_compile_time")


@pytest.mark.parametrize("warmup", [False, True])
def test_a_child_reports_each_phase(tool, warmup):
    run = tool.run_child(SRC, warmup)
    for key in tool._keys(warmup):
        assert run[key] > 0, key
    assert (run["warmup"] is not None) is warmup
    assert {"ptx", "cubin"} <= set(run["stages"])


def test_the_warmup_mode_leaves_the_first_compile_nothing_to_import(tool):
    # A cold first compile imports the stages and llvmlite; after the warm-up the saxpy's
    # compile (through the dispatcher, with its variant analysis) runs code already loaded.
    cold = tool.run_child(SRC, False)
    warm = tool.run_child(SRC, True)
    assert "llvmlite.ir" in cold["loaded_by_compile"]
    assert any(m.startswith("cujit.") for m in cold["loaded_by_compile"])
    assert warm["loaded_by_compile"] == []
