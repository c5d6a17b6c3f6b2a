"""Without a GPU, every host function of ``cujit.cuda`` that needs a device raises one
short NoGPUError: its first line names the call, the next says how to run on the CPU
(CUJIT_TARGET=cpu), no internal cause is chained, and its traceback holds the user's
frames only.  The calls run in a child process without CUJIT_TARGET, as a user's
program would; skipped where a GPU is present."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

# call as the user writes it -> the statement that makes it
CALLS = {
    "cuda.to_device()": "cuda.to_device(a)",
    "cuda.device_array()": "cuda.device_array(4)",
    "cuda.device_array_like()": "cuda.device_array_like(a)",
    "cuda.pinned_array()": "cuda.pinned_array(4)",
    "cuda.pinned_array_like()": "cuda.pinned_array_like(a)",
    "cuda.pinned()": "cuda.pinned(a)",
    "cuda.mapped_array()": "cuda.mapped_array(4)",
    "cuda.mapped_array_like()": "cuda.mapped_array_like(a)",
    "cuda.managed_array()": "cuda.managed_array(4)",
    "cuda.get_current_device()": "cuda.get_current_device()",
    "cuda.select_device()": "cuda.select_device(0)",
    "cuda.gpus.current": "cuda.gpus.current",
    "cuda.stream()": "cuda.stream()",
    "cuda.event()": "cuda.event()",
    "cuda.synchronize()": "cuda.synchronize()",
    "cuda.current_context()": "cuda.current_context()",
    "cuda.defer_cleanup()": "cuda.defer_cleanup()",
    "cuda.profile_start()": "cuda.profile_start()",
    "cuda.profile_stop()": "cuda.profile_stop()",
    "cuda.profiling()": "cuda.profiling()",
    "cuda.graph()": "cuda.graph()",
    "cuda.is_bfloat16_supported()": "cuda.is_bfloat16_supported()",
    "cuda.is_fp8_supported()": "cuda.is_fp8_supported()",
    "cuda.cudadrv.devices.get_context()": "cuda.cudadrv.devices.get_context()",
}

PROGRAM = """
import json, sys, traceback
import numpy as np
from cujit import cuda

if cuda.is_available():
    print(json.dumps(None))
    sys.exit()
a = np.zeros(4)
calls = json.loads(sys.argv[1])
report = {}
for call, statement in calls.items():
    try:
        exec(statement)
    except BaseException as e:
        report[call] = {
            "type": type(e).__name__,
            "module": type(e).__module__,
            "message": str(e),
            "cause": e.__cause__ is not None,
            "context": e.__context__ is not None and not e.__suppress_context__,
            "files": [frame.filename for frame in traceback.extract_tb(e.__traceback__)],
        }
    else:
        report[call] = None
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    script = tmp_path_factory.mktemp("nogpu") / "user_program.py"
    script.write_text(textwrap.dedent(PROGRAM))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUJIT_")}
    proc = subprocess.run(
        [sys.executable, str(script), json.dumps(CALLS)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.splitlines()[-1])
    if result is None:
        pytest.skip("a GPU is present: nothing fails for want of one")
    return result, str(script)


@pytest.mark.parametrize("call", list(CALLS))
def test_host_call_without_a_gpu_raises_one_short_error(report, call):
    result, script = report
    error = result[call]
    assert error is not None, f"{call} did not raise without a GPU"
    assert (error["module"], error["type"]) == ("cujit.diagnostics", "NoGPUError")
    lines = error["message"].splitlines()
    assert len(lines) == 3, error["message"]
    assert lines[0].startswith(f"{call}: no CUDA GPU"), lines[0]
    assert "CUJIT_TARGET=cpu" in lines[1]
    assert lines[2] == "guide: docs/guide/cpu-target.md"
    assert not error["cause"] and not error["context"]
    # the user's frames only: the program's module line and the exec'd statement
    assert error["files"] and all(f in (script, "<string>") for f in error["files"]), error["files"]


def test_detect_says_how_to_run_without_a_gpu():
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUJIT_")}
    code = "from cujit import cuda\nprint(cuda.is_available(), cuda.detect())"
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    if proc.stdout.startswith("True"):
        pytest.skip("a GPU is present")
    assert "CUDA is not available: no CUDA GPU" in proc.stdout
    assert "CUJIT_TARGET=cpu" in proc.stdout
    assert proc.stdout.rstrip().endswith("False False")


def test_the_boundary_keeps_the_functions_names_for_pickle():
    import pickle

    from cujit.runtime import boundary, memory

    entry = boundary.wrap("cujit.runtime.memory", "to_device", memory.to_device)
    assert entry is not memory.to_device and entry.__wrapped__ is memory.to_device
    assert (entry.__module__, entry.__qualname__) == ("cujit.cuda", "to_device")
    assert boundary.wrap("cujit.runtime.memory", "DeviceNDArray", memory.DeviceNDArray) is (
        memory.DeviceNDArray
    )
    assert boundary.wrap("cujit.runtime.memory", "to_device", entry) is entry
    from cujit import cuda

    if cuda.to_device.__module__ == "cujit.cuda":  # the GPU runtime's (not CUJIT_TARGET=cpu)
        assert pickle.loads(pickle.dumps(cuda.to_device)) is cuda.to_device
