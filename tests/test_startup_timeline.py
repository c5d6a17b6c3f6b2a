"""tools/startup_timeline.py without a GPU: the floor's script it times is
bench/launch_bench.py's, with a mark after each step, and stays a valid program."""

import os
import sys

import pytest

TOOLS = os.path.join(os.path.dirname(__file__), "..", "tools")


@pytest.fixture
def timeline():
    sys.path.insert(0, TOOLS)
    try:
        import startup_timeline

        yield startup_timeline
    finally:
        sys.path.remove(TOOLS)


def test_the_floor_script_gets_a_mark_after_each_step(timeline, tmp_path):
    script = timeline._timed_floor(timeline.floor_script(str(tmp_path)))
    compile(script, "<floor>", "exec")  # a program still
    steps = ["import numpy", "import cuda.bindings", "cuInit", "primary context"]
    steps += ["alloc + copy in", "load cubin", "synchronize"]
    at = [script.index(f"mark({s!r})") for s in steps]
    assert at == sorted(at)  # in the order the steps run
    assert script.rstrip().endswith("print(repr(marks))")
    # each mark follows its step's own line
    assert script.index("ok(drv.cuInit(0))") < script.index("mark('cuInit')")
    assert script.index("cuModuleGetFunction") < script.index("mark('load cubin')")


def test_the_cujit_script_marks_the_same_phases(timeline):
    text = timeline.CUJIT
    compile(text, "<cujit>", "exec")
    for step in ("import cujit", "to_device (driver start)", "first launch (compile)"):
        assert f'mark("{step}")' in text


def test_the_floor_script_is_made_in_a_child_process(timeline, tmp_path):
    # This process must not start CUDA itself: the child compiles the cubin and writes
    # the script, which is the one this process would have made.
    env = dict(os.environ, PYTHONPATH=os.path.join(TOOLS, "..", "src"))
    from_child = timeline.floor_script_from_child(str(tmp_path), env)
    here = timeline.floor_script(str(tmp_path))
    assert from_child == here
    assert "ok(drv.cuInit(0))" in from_child
    compile(timeline._timed_floor(from_child), "<floor>", "exec")
