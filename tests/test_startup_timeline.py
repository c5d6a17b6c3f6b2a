"""tools/startup_timeline.py without a GPU: the floor's script it times is
bench/launch_bench.py's, with a mark after each step, and stays a valid program."""

import os

import pytest


@pytest.fixture
def timeline(repo_script):
    return repo_script("tools", "startup_timeline")


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
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(__file__), "..", "src"))
    from_child = timeline.floor_script_from_child(str(tmp_path), env)
    here = timeline.floor_script(str(tmp_path))
    assert from_child == here
    assert "ok(drv.cuInit(0))" in from_child
    compile(timeline._timed_floor(from_child), "<floor>", "exec")


def test_the_marked_script_marks_the_warm_up_thread_and_the_first_compile(timeline, monkeypatch):
    code = timeline.cujit_marked()
    compile(code, "<marked>", "exec")
    assert code.index('mark("import cujit")') < code.index("_marked(_pipeline")
    assert code.rstrip().endswith("print(repr((marks, wmarks + mmarks)))")

    import threading
    import time

    import cujit.pipeline
    import cujit.ptx.libs

    calls = []
    for mod, attr in ((cujit.pipeline, "import_stages"), (cujit.pipeline, "compile_kernel")):
        monkeypatch.setattr(mod, attr, lambda *a, _n=attr, **k: calls.append(_n))
    for attr in ("nvvm_module", "nvjitlink_module"):
        monkeypatch.setattr(cujit.ptx.libs, attr, lambda *a, _n=attr, **k: calls.append(_n))
    ns = {"time": time, "t0": time.perf_counter()}
    exec(timeline.WARMUP_MARKS, ns)  # wraps the four (monkeypatch restores them)

    cujit.pipeline.import_stages()  # the main thread: not marked
    cujit.pipeline.compile_kernel()  # the main thread's first compile: marked apart
    cujit.pipeline.compile_kernel()  # its second: not marked

    def warm_up():
        for _ in range(2):
            cujit.pipeline.import_stages()
            cujit.ptx.libs.nvvm_module()

    thread = threading.Thread(target=warm_up, name="cujit-warmup")
    thread.start()
    thread.join()
    main_calls = ["import_stages", "compile_kernel", "compile_kernel"]
    assert calls == main_calls + ["import_stages", "nvvm_module"] * 2
    names = [name for name, _ in ns["wmarks"]]  # each step once: its first call
    assert names == [
        "import the stages",
        "import the stages: done",
        "load libNVVM",
        "load libNVVM: done",
    ]
    main = [name for name, _ in ns["mmarks"]]
    assert main == ["main thread: compile saxpy", "main thread: compile saxpy: done"]


def test_the_jit_floor_script_gets_its_compile_and_load_marked_apart(timeline, tmp_path):
    script = timeline._timed_floor(
        timeline.jit_floor_script(str(tmp_path)), timeline.JIT_FLOOR_MARKS
    )
    compile(script, "<jit floor>", "exec")
    steps = ["import numpy", "import cuda.bindings", "cuInit", "primary context"]
    steps += ["alloc + copy in", "wait for the warm-up thread"]
    steps += ["compile (libNVVM + nvJitLink)", "load cubin", "synchronize"]
    at = [script.index(f"mark({s!r})") for s in steps]
    assert at == sorted(at)
    assert script.index("cubin = cubin_of(ir)") < at[6] < script.index("cuModuleLoadData(cubin)")
    assert script.rstrip().endswith("print(repr(marks))")


def test_a_marked_run_is_summarised_with_the_thread_beside_it(timeline):
    samples = [
        (([("a", 0.10), ("b", 0.20)], [("x", 0.15), ("x: done", 0.18), ("late", 0.3)]), 0.5),
        (([("a", 0.12), ("b", 0.22)], [("x", 0.17), ("x: done", 0.20)]), 0.6),
    ]
    row = timeline.summarise(samples)
    assert row["steps"]["b"]["at_ms"] == pytest.approx(210.0)
    # median per step; a step one process did not reach is left out
    assert row["warmup_thread_at_ms"] == pytest.approx({"x": 160.0, "x: done": 190.0})
