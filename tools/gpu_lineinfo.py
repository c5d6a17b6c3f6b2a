"""Kernels for tools/gpu-lineinfo.sh: Python lines in compute-sanitizer and cuda-gdb.

    python3 tools/gpu_lineinfo.py line oob|break   the file:line each tool should name
    python3 tools/gpu_lineinfo.py oob              a lineinfo kernel writes out of bounds
    python3 tools/gpu_lineinfo.py debug            a debug kernel for cuda-gdb to stop in

The lines are found by their marker comments, so editing this file keeps them right.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from cujit import cuda


@cuda.jit(lineinfo=True)
def oob_write(out, n):
    i = cuda.grid(1)
    if i == 0:
        out[n + 7] = 1.0  # MARK:oob
    elif i < n:
        out[i] = 2.0


@cuda.jit(debug=True, opt=False)
def accumulate(x, out):
    acc = 0.0
    for k in range(x.size):
        acc += x[k] * 2.0  # MARK:break
    out[0] = acc


def marked_line(tag: str) -> str:
    path = os.path.abspath(__file__)
    with open(path, encoding="utf-8") as f:
        for n, text in enumerate(f, start=1):
            if text.rstrip().endswith(f"# MARK:{tag}"):
                return f"{path}:{n}"
    raise SystemExit(f"no MARK:{tag} line")


def run_oob() -> None:
    out = cuda.to_device(np.zeros(256, np.float32))
    oob_write[1, 256](out, 256)
    cuda.synchronize()
    print("oob kernel ran; the write was at", marked_line("oob"))


def run_debug() -> None:
    x = np.array([1.5, 2.5, 4.0, 8.0])
    out = cuda.to_device(np.full(1, np.nan))
    accumulate[1, 1](cuda.to_device(x), out)
    got = out.copy_to_host()[0]
    print(f"debug kernel: acc = {got} (expected {2.0 * x.sum()})")


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    if what == "line":
        print(marked_line(sys.argv[2]))
    elif what == "oob":
        run_oob()
    elif what == "debug":
        run_debug()
    else:
        raise SystemExit(__doc__)
