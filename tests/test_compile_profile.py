"""tools/compile_profile.py without a GPU (``--no-launch``): a row per kernel with every
stage of the CUDA target, a whole that holds them, and the toolchain floor."""

import json
import os
import sys

TOOLS = os.path.join(os.path.dirname(__file__), "..", "tools")


def test_a_row_per_kernel_with_every_stage(tmp_path, capsys):
    sys.path.insert(0, TOOLS)
    try:
        import compile_profile
    finally:
        sys.path.remove(TOOLS)
    from cujit.pipeline import TARGET_STAGES

    out = tmp_path / "profile.json"
    compile_profile.main(["-n", "1", "--kernels", "saxpy", "--no-launch", "--json", str(out)])
    data = json.loads(out.read_text())
    assert data["launch"] is False and list(data["kernels"]) == ["saxpy"]
    row = data["kernels"]["saxpy"]
    assert list(row["stages_ms"]) == list(TARGET_STAGES["cuda"])
    assert all(v > 0 for v in row["stages_ms"].values())
    # the whole holds the stages; what is left is the dispatcher's
    assert row["outside_ms"] >= 0
    assert abs(row["total_ms"] - sum(row["stages_ms"].values()) - row["outside_ms"]) < 1e-9
    assert row["floor_ms"] > 0
    assert capsys.readouterr().out.startswith("saxpy")
