"""The numba drop-in: an unchanged numba.cuda program under ``python -m cujit run``
(with numba importable and without it), ``CUJIT_NUMBA=1``,
``cujit.install_numba_drop_in()`` and ``NUMBA_ENABLE_CUDASIM=1``.

Each drop-in runs in a child process: installing it changes what ``numba.cuda`` is for
the whole process.  The program's outputs are checked here against NumPy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")

# A numba.cuda program as numba's users write it: nothing in it names cujit.
PROGRAM = textwrap.dedent("""
    import json
    import sys

    import numpy as np
    import numba
    from numba import cuda, float32, int32, void


    @cuda.jit(void(float32[::1], float32[::1], float32))
    def scale(x, out, a):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = a * x[i]


    @cuda.jit(numba.types.int32(numba.types.int32), device=True)
    def cube(v):
        return v * v * v


    @cuda.jit
    def cubes(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = cube(int32(i)) - 5


    @cuda.jit
    def block_sums(x, out):
        tmp = cuda.shared.array(32, float32)
        t = cuda.threadIdx.x
        tmp[t] = x[cuda.grid(1)]
        cuda.syncthreads()
        if t == 0:
            s = float32(0)
            for k in range(32):
                s += tmp[k]
            out[cuda.blockIdx.x] = s


    factor = float(sys.argv[1])
    x = (np.arange(64, dtype=np.float32) + 1) / 7
    out = np.full(64, np.nan, np.float32)
    scale[2, 32](x, out, np.float32(factor))
    c = np.full(40, -1, np.int32)
    cubes[2, 32](c)
    d_x = cuda.to_device(x)
    sums = cuda.device_array(2, np.float32)
    block_sums[2, 32](d_x, sums)
    print(json.dumps({"cuda": cuda.__name__, "numba_file": getattr(numba, "__file__", None),
                      "scale": out.tolist(), "cubes": c.tolist(),
                      "sums": sums.copy_to_host().tolist(), "target": scale.target}))
""")

# Run the drop-in with numba and numba-cuda made unimportable, as where they are not
# installed: a finder first on sys.meta_path refuses them.
NO_NUMBA = textwrap.dedent("""
    import importlib.abc, sys
    class NoNumba(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("numba", "numba_cuda"):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    sys.meta_path.insert(0, NoNumba())
    from cujit.cli import main
    sys.exit(main(sys.argv[1:]))
""")


def child_env(**extra) -> dict:
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for name in ("CUJIT_TARGET", "CUJIT_NUMBA", "NUMBA_ENABLE_CUDASIM"):
        env.pop(name, None)
    env.update(extra)
    return env


def run(args, **extra) -> dict:
    proc = subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        env=child_env(**extra),
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "numba_program.py"
    path.write_text(PROGRAM)
    return str(path)


def check_outputs(got: dict, factor: float) -> None:
    x = (np.arange(64, dtype=np.float32) + 1) / 7
    assert got["cuda"] == "cujit.cuda"
    np.testing.assert_allclose(got["scale"], factor * x, rtol=1e-6)
    assert got["cubes"] == [i**3 - 5 for i in range(40)]
    ref = x.astype(np.float64).reshape(2, 32).sum(axis=1)
    np.testing.assert_allclose(got["sums"], ref, rtol=1e-5)


def test_run_with_numba_installed(program):
    pytest.importorskip("numba")
    got = run(["-m", "cujit", "run", program, "2.5"], NUMBA_ENABLE_CUDASIM="1")
    check_outputs(got, 2.5)
    assert got["numba_file"] and "numba" in got["numba_file"]  # numba itself stays numba
    assert got["target"] == "cpu"


def test_run_without_numba(program):
    got = run(["-c", NO_NUMBA, "run", program, "-3"], NUMBA_ENABLE_CUDASIM="1")
    check_outputs(got, -3.0)
    assert got["numba_file"] is None  # cujit's stand-in numba package


@pytest.mark.gpu
def test_run_on_the_gpu(program):
    got = run(["-m", "cujit", "run", program, "1.5"])
    check_outputs(got, 1.5)
    assert got["target"] == "cuda"


PROBE = (
    "import json, sys, {first}; import numba.cuda as c; from numba import cuda as d; "
    "k = c.jit(lambda a: None); print(json.dumps({{'c': c.__name__, 'd': d.__name__, "
    "'target': k.target, 'numba': 'numba.core' in sys.modules}}))"
)


def test_environment_variable_installs_it():
    got = run(["-c", PROBE.format(first="cujit")], CUJIT_NUMBA="1", CUJIT_TARGET="cpu")
    assert got["c"] == got["d"] == "cujit.cuda"


def test_without_the_variable_numba_cuda_is_numba_cudas():
    pytest.importorskip("numba_cuda")
    got = run(
        [
            "-c",
            PROBE.format(first="cujit")
            .replace("k = c.jit(lambda a: None); ", "")
            .replace(", 'target': k.target", ""),
        ],
        NUMBA_ENABLE_CUDASIM="1",
    )
    assert got["c"] == got["d"] == "numba.cuda"


def test_function_installs_it_even_after_numba_cuda_was_imported():
    pytest.importorskip("numba_cuda")
    code = "import numba.cuda, cujit; cujit.install_numba_drop_in(); " + PROBE.format(first="os")
    got = run(["-c", code], NUMBA_ENABLE_CUDASIM="1")
    assert got["c"] == got["d"] == "cujit.cuda"


def test_numba_cudasim_selects_the_cpu_target_and_cujit_target_wins():
    code = "import cujit; cujit.install_numba_drop_in(); " + PROBE.format(first="os")
    assert run(["-c", code], NUMBA_ENABLE_CUDASIM="1")["target"] == "cpu"
    assert run(["-c", code], NUMBA_ENABLE_CUDASIM="1", CUJIT_TARGET="cuda")["target"] == "cuda"
    assert run(["-c", code], NUMBA_ENABLE_CUDASIM="0")["target"] == "cuda"


def test_a_numba_cuda_module_cujit_lacks_is_an_import_error_naming_it():
    code = (
        "import cujit; cujit.install_numba_drop_in()\n"
        "try:\n    import numba.cuda.cudadrv.nvvm\nexcept ImportError as e:\n"
        "    import json; print(json.dumps({'msg': str(e)}))\n"
    )
    got = run(["-c", code])
    assert "numba.cuda.cudadrv.nvvm" in got["msg"] and "cujit" in got["msg"]
