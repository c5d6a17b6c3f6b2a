"""``cuda.compile_for_current_device`` / ``compile_ptx_for_current_device`` on the CPU
target: they compile PTX for the compute capability the CPU target's device object
describes (no GPU needed), as ``cuda.get_current_device()`` reports it."""

from __future__ import annotations

from cujit import cuda, float32


def add(x, y):
    return x + y


def test_ptx_targets_the_cpu_devices_capability(monkeypatch):
    monkeypatch.setenv("CUJIT_TARGET", "cpu")
    major, minor = cuda.get_current_device().compute_capability
    for compile_fn in (cuda.compile_ptx_for_current_device, cuda.compile_for_current_device):
        ptx, rtype = compile_fn(add, (float32, float32), device=True)
        assert f".target sm_{major}{minor}" in ptx
        assert str(rtype) == "float32"
