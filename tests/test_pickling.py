"""How kernels travel between processes (cujit.pickling): by name or by value, and
a kernel sent by value many times is rebuilt, and so compiled, once per process."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from cujit import cuda, pickling
from cujit.diagnostics import InternalCompilerError, Loc

SRC = os.path.join(os.path.dirname(__file__), "..", "src")


def _closure_kernel():
    @cuda.jit(target="cpu")
    def add(x, a, out):
        i = cuda.grid(1)
        if i < out.shape[0]:
            out[i] = x[i] + a

    return add


def test_a_closure_kernel_sent_many_times_is_rebuilt_once():
    cloudpickle = pytest.importorskip("cloudpickle", reason="cloudpickle carries closures")
    kernel = _closure_kernel()
    data = cloudpickle.dumps(kernel)
    assert cloudpickle.dumps(kernel) == data  # one token per kernel, kept
    # In the sending process the round trip gives the kernel itself back.
    assert pickle.loads(data) is kernel
    # A fresh table stands for another process: the first copy builds a kernel, the
    # copies after it find that one, with what it compiled.
    saved = dict(pickling._BY_TOKEN)
    pickling._BY_TOKEN.clear()
    try:
        first = pickle.loads(data)
        assert first is not kernel
        x = np.arange(1.0, 9.0)
        out = np.full(8, np.nan)
        first[1, 8](x, 2.5, out)
        np.testing.assert_array_equal(out, x + 2.5)
        assert len(first.overloads) == 1
        again = [pickle.loads(data) for _ in range(5)]
        assert all(k is first for k in again)
        # cloudpickle drops the code's file name; the rebuilt kernel has it back.
        assert first.py_func.__code__.co_filename == __file__
    finally:
        pickling._BY_TOKEN.clear()
        pickling._BY_TOKEN.update(saved)


def test_the_table_is_bounded(monkeypatch):
    monkeypatch.setattr(pickling, "LIMIT", 3)
    monkeypatch.setattr(pickling, "_BY_TOKEN", {})
    kernels = [_closure_kernel() for _ in range(5)]
    tokens = [pickling.token_of(k) for k in kernels]
    assert len(set(tokens)) == 5
    assert list(pickling._BY_TOKEN) == tokens[2:]  # the oldest went first


MAIN_SCRIPT = """
import pickle, sys
import cloudpickle
from cujit import cuda

@cuda.jit(target="cpu")
def neg(x, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = -x[i]

sys.stdout.buffer.write(cloudpickle.dumps(neg))
"""

LOAD_SCRIPT = """
import pickle, sys
import numpy as np
k = pickle.loads(sys.stdin.buffer.read())
x = np.arange(1.0, 5.0); out = np.full(4, np.nan)
k[1, 4](x, out)
print(k.__name__, out.tolist())
"""


def test_a_kernel_in_main_travels_by_value(tmp_path):
    # A remote worker has no script to import: cloudpickle carries __main__ kernels.
    pytest.importorskip("cloudpickle", reason="cloudpickle carries __main__ kernels")
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(MAIN_SCRIPT))
    env = dict(os.environ, PYTHONPATH=os.path.abspath(SRC))
    sent = subprocess.run(
        [sys.executable, str(script)], capture_output=True, env=env, timeout=120, check=True
    ).stdout
    # The loader has no __main__.neg: by name this would fail to unpickle.
    got = subprocess.run(
        [sys.executable, "-c", LOAD_SCRIPT],
        check=False,
        input=sent,
        capture_output=True,
        env=env,
        timeout=120,
        cwd=tmp_path,
    )
    assert got.returncode == 0, got.stderr.decode()[-2000:]
    assert got.stdout.decode().split() == ["neg", "[-1.0,", "-2.0,", "-3.0,", "-4.0]"]


def test_internal_compiler_errors_pickle_whole():
    error = InternalCompilerError("typed", "k", Loc("user.py", 7, 2), ValueError("boom"))
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is InternalCompilerError
    assert str(back) == str(error) and "user.py:7:3" in str(back)
    assert (back.stage, back.kernel, back.loc) == ("typed", "k", Loc("user.py", 7, 2))
    assert repr(back.cause) == "ValueError('boom')"
