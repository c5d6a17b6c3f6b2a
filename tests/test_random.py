"""``cuda.random``: the xoroshiro128+ generators give numba's streams for the same seed.

The reference comes from numba-cuda itself, run in its simulator (no GPU needed) in a
subprocess: the states it makes, and a kernel drawing uniforms, raw uint64s, jumps and
normals from them.  Uniforms, raw values and states compare exactly.  Normals compare
to a tolerance: the simulator evaluates ``math.log`` of a float32 in float64 (Python's
math), where compiled numba and cujit use the float32 function.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from cujit import cuda
from cujit.random import xoroshiro128p_dtype

SEED, SUBSEQ, N, DRAWS = 1234, 3, 6, 4

_REFERENCE = textwrap.dedent(f"""
    import sys, warnings
    import numpy as np
    warnings.simplefilter("ignore")
    from numba import cuda
    from numba.cuda.random import (
        create_xoroshiro128p_states, xoroshiro128p_jump, xoroshiro128p_next,
        xoroshiro128p_normal_float32, xoroshiro128p_normal_float64,
        xoroshiro128p_uniform_float32, xoroshiro128p_uniform_float64)

    @cuda.jit
    def draw(states, u32, u64, raw, n32, n64):
        i = cuda.grid(1)
        if i < u32.shape[0]:
            for j in range(u32.shape[1]):
                u32[i, j] = xoroshiro128p_uniform_float32(states, i)
                u64[i, j] = xoroshiro128p_uniform_float64(states, i)
                raw[i, j] = xoroshiro128p_next(states, i)
                xoroshiro128p_jump(states, i)
                n32[i, j] = xoroshiro128p_normal_float32(states, i)
                n64[i, j] = xoroshiro128p_normal_float64(states, i)

    states = create_xoroshiro128p_states({N}, {SEED}, subsequence_start={SUBSEQ})
    host = states.copy_to_host()
    out = dict(u32=np.zeros(({N}, {DRAWS}), np.float32), u64=np.zeros(({N}, {DRAWS})),
               raw=np.zeros(({N}, {DRAWS}), np.uint64), n32=np.zeros(({N}, {DRAWS}), np.float32),
               n64=np.zeros(({N}, {DRAWS})))
    draw[1, {N}](states, out["u32"], out["u64"], out["raw"], out["n32"], out["n64"])
    first = create_xoroshiro128p_states(3, {SEED}).copy_to_host()
    np.savez(sys.argv[1], s0=host["s0"], s1=host["s1"], f0=first["s0"], f1=first["s1"], **out)
""")


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    try:
        import numba.cuda  # noqa: F401
    except ImportError as e:  # pragma: no cover - the test extra installs numba-cuda
        pytest.skip(f"numba-cuda is not importable, so there is no reference stream: {e}")
    path = tmp_path_factory.mktemp("numba_ref") / "ref.npz"
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    env.pop("PYTHONPATH", None)
    proc = subprocess.run(
        [sys.executable, "-c", _REFERENCE, str(path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return dict(np.load(path))


@cuda.jit(device=True)
def _draw_row(states, i, u32, u64, raw, n32, n64):
    for j in range(u32.shape[1]):
        u32[i, j] = cuda.random.xoroshiro128p_uniform_float32(states, i)
        u64[i, j] = cuda.random.xoroshiro128p_uniform_float64(states, i)
        raw[i, j] = cuda.random.xoroshiro128p_next(states, i)
        cuda.random.xoroshiro128p_jump(states, i)
        n32[i, j] = cuda.random.xoroshiro128p_normal_float32(states, i)
        n64[i, j] = cuda.random.xoroshiro128p_normal_float64(states, i)


def _draw(states, u32, u64, raw, n32, n64):
    i = cuda.grid(1)
    if i < u32.shape[0]:
        _draw_row(states, i, u32, u64, raw, n32, n64)


def _run(target: str) -> tuple[np.ndarray, dict]:
    from cujit.random import _host_states

    states = _host_states(N, SEED, SUBSEQ)
    out = {
        "u32": np.zeros((N, DRAWS), np.float32),
        "u64": np.zeros((N, DRAWS)),
        "raw": np.zeros((N, DRAWS), np.uint64),
        "n32": np.zeros((N, DRAWS), np.float32),
        "n64": np.zeros((N, DRAWS)),
    }
    d_states = cuda.to_device(states) if target == "cuda" else states.copy()
    cuda.jit(_draw, target=target)[1, N](
        d_states, out["u32"], out["u64"], out["raw"], out["n32"], out["n64"]
    )
    return states, out


def _compare(got: dict, ref: dict) -> None:
    for name in ("u32", "u64", "raw"):
        assert got[name].dtype == ref[name].dtype
        np.testing.assert_array_equal(got[name], ref[name], err_msg=name)
    np.testing.assert_allclose(got["n32"], ref["n32"], rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(got["n64"], ref["n64"], rtol=2e-6, atol=1e-7)


def test_states_equal_numbas(reference):
    from cujit.random import _host_states

    states = _host_states(N, SEED, SUBSEQ)
    assert states.dtype == xoroshiro128p_dtype and states.shape == (N,)
    np.testing.assert_array_equal(states["s0"], reference["s0"])
    np.testing.assert_array_equal(states["s1"], reference["s1"])
    first = _host_states(3, SEED, 0)
    np.testing.assert_array_equal(first["s0"], reference["f0"])
    np.testing.assert_array_equal(first["s1"], reference["f1"])


def test_streams_equal_numbas_on_the_cpu_target(reference):
    _, got = _run("cpu")
    _compare(got, reference)


@pytest.mark.gpu
def test_streams_equal_numbas_on_the_gpu(reference):
    _, got = _run("cuda")
    _compare(got, reference)


def test_states_are_consecutive_jumps():
    """Generator i + 1 is generator i jumped once; subsequence_start jumps the first."""
    from cujit.random import _host_states, _jump_int

    states = _host_states(9, 7, 0)
    for i in range(8):
        nxt = (int(states[i + 1]["s0"]), int(states[i + 1]["s1"]))
        assert _jump_int(int(states[i]["s0"]), int(states[i]["s1"])) == nxt
    np.testing.assert_array_equal(_host_states(4, 7, 5), states[5:9])
    assert _host_states(0, 7, 0).shape == (0,)


def test_create_and_init_follow_the_target(monkeypatch):
    monkeypatch.setenv("CUJIT_TARGET", "cpu")
    from cujit.random import _host_states, create_xoroshiro128p_states, init_xoroshiro128p_states
    from cujit.targets.cpu.memory import HostDeviceArray

    states = create_xoroshiro128p_states(5, 99, subsequence_start=2)
    assert isinstance(states, HostDeviceArray)
    np.testing.assert_array_equal(states.copy_to_host(), _host_states(5, 99, 2))
    init_xoroshiro128p_states(states, 100)
    np.testing.assert_array_equal(states.copy_to_host(), _host_states(5, 100, 0))
    with pytest.raises(ValueError, match="1-d device array of xoroshiro128p_dtype"):
        init_xoroshiro128p_states(np.zeros((5, 2), np.uint64), 1)


def test_cuda_random_is_the_module():
    import cujit.random

    assert cuda.random.xoroshiro128p_normal_float64 is cujit.random.xoroshiro128p_normal_float64
    from cujit.cuda import random

    assert random.create_xoroshiro128p_states is cujit.random.create_xoroshiro128p_states


def _monte_carlo_pi(states, hits, per_thread):
    i = cuda.grid(1)
    if i < hits.shape[0]:
        inside = 0
        for _ in range(per_thread):
            x = cuda.random.xoroshiro128p_uniform_float32(states, i)
            y = cuda.random.xoroshiro128p_uniform_float64(states, i)
            if x * x + y * y <= 1.0:
                inside += 1
        hits[i] = inside


@pytest.mark.parametrize("target", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_monte_carlo_pi(target, monkeypatch):
    monkeypatch.setenv("CUJIT_TARGET", target)
    from cujit.random import create_xoroshiro128p_states

    threads, per_thread = 4096, 256
    states = create_xoroshiro128p_states(threads, seed=2024)
    hits = np.zeros(threads, np.int64)  # copied back after the launch
    cuda.jit(_monte_carlo_pi, target=target)[threads // 128, 128](states, hits, per_thread)
    estimate = 4.0 * hits.sum() / (threads * per_thread)
    assert abs(estimate - math.pi) < 1e-2


def test_normals_have_unit_variance():
    def kern(states, out):
        i = cuda.grid(1)
        if i < out.shape[0]:
            for j in range(out.shape[1]):
                out[i, j] = cuda.random.xoroshiro128p_normal_float64(states, i)

    from cujit.random import _host_states

    out = np.zeros((256, 64))
    cuda.jit(kern, target="cpu")[2, 128](_host_states(256, 5, 0), out)
    assert abs(out.mean()) < 0.02 and abs(out.std() - 1.0) < 0.02


def test_numba_import_forms_work():
    import cujit.random
    from cujit import cuda
    from cujit.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32

    assert cuda.random.create_xoroshiro128p_states is create_xoroshiro128p_states
    assert xoroshiro128p_uniform_float32 is cujit.random.xoroshiro128p_uniform_float32
