"""A printed compile result or specialisation stays short: it names the kernel, the
stage times and the launch record, and leaves out the stage outputs (the bytecode's
globals, the IR and the cubin)."""

import numpy as np

from cujit import cuda
from cujit.types import typeof


def test_specialization_repr_leaves_out_stage_outputs():
    @cuda.jit
    def double(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = a[i] * 2

    spec = double.compile((typeof(np.zeros(8, np.float32)),))
    text = repr(spec)
    assert "CompileResult(name=" in text and "double" in text
    assert "record=LaunchRecord(symbol=" in text
    # The outputs are still there, read by name; only the repr leaves them out.
    assert "typed" in spec.result.outputs
    assert "mappingproxy" not in text and "Instr(" not in text
    assert len(text) < 4000, len(text)
