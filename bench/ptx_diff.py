"""The PTX of one bench kernel from cujit, numba-cuda and its CUDA C twin (NVRTC), side by
side, without a GPU:

    PYTHONPATH=src python bench/ptx_diff.py spmv [--out DIR] [--nvdisasm PATH]

Writes DIR/NAME.{cujit,cujit_plain,cujit_i32,numba,c}.ptx (``cujit``: the coarsened
variant, ``cujit_i32``: the 32-bit index variant, where the kernel has one) (DIR defaults
to /tmp/ptx_diff) and
prints, per implementation, the counts of the instructions that decide a memory-bound
kernel's speed: global loads (plain and ``.nc``), their widths, 64-bit integer multiplies
and adds, divisions and branches.  The argument types come from the kernel's own input
maker, run at small sizes.  With ``--nvdisasm`` (the CUDA toolkit's, or the
``nvidia-cuda-nvdisasm`` wheel's), each PTX is also assembled for sm_90 and its SASS
instructions counted.  ``--print [LABEL ...]`` prints each kernel's instruction lines
(``--print cujit_i32 c``: the 32-bit variant's beside the C twin's).
"""

from __future__ import annotations

import argparse
import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import kernel_bench as kb  # noqa: E402 -- beside this file
import kernel_bench_more as more  # noqa: E402

SMALL = {
    "elementwise": 4096,
    "complex": 4096,
    "nbody": 256,
    "spmv_rows": 1024,
    "stencil": 16,
    "hist": 4096,
    "softmax_rows": 64,
    "softmax_cols": 64,
    "conv": 4096,
}

PATTERNS = {
    "ld.global": r"\bld\.global\.(?!nc)",
    "ld.global.nc": r"\bld\.global\.nc\.",
    "ld.v": r"\bld\.global(\.nc)?\.v[24]\.",
    "st.global": r"\bst\.global\.",
    "mul.wide/lo.s64": r"\bmul\.(wide\.[su]32|lo\.s64)\b",
    "add.s64": r"\badd\.s64\b",
    "mad.s64": r"\bmad\.lo\.s64\b",
    "cvt 32->64": r"\bcvt\.[su]64\.[su]32\b",
    "div/rem": r"\b(div|rem)\.[su]\d+\b",
    "setp": r"\bsetp\.",
    "bra": r"\bbra(\.uni)?\b",
}


def signature(args) -> str:
    """A numba-style signature string for the Python-level arguments."""
    parts = []
    for a in args:
        if isinstance(a, np.ndarray):
            dims = ",".join([":"] * (a.ndim - 1) + ["::1"])
            parts.append(f"{a.dtype.name}[{dims}]")
        else:
            parts.append(np.asarray(a).dtype.name)
    return f"void({', '.join(parts)})"


def body(ptx: str) -> str:
    """The instruction lines (no directives, comments or labels)."""
    keep = []
    for line in ptx.splitlines():
        s = line.strip()
        if s and not s.startswith(("//", ".", "$", "{", "}")) and not s.endswith(":"):
            keep.append(s)
    return "\n".join(keep)


def counts(ptx: str) -> dict:
    text = body(ptx)
    return {k: len(re.findall(p, text)) for k, p in PATTERNS.items()}


def ptx_all(name: str) -> dict:
    more.SIZES.update(SMALL)
    kernel = kb.KERNELS[name]
    args = kernel.make(np.random.default_rng(0), 1)[0]
    sig = signature(args)
    out = {}
    from cujit import cuda as cj
    from cujit.coarsen import verdict_of
    from cujit.options import Options
    from cujit.pipeline import compile_kernel

    k = cj.jit(sig, coarsen=False)(kb.python_kernel(kernel, cj))
    spec = next(iter(k.overloads.values()))
    out["cujit_plain"] = spec.result.ptx
    if spec.result.outputs.get("index32"):  # the variant a launch with small arrays takes
        out["cujit_i32"] = compile_kernel(k.py_func, spec.arg_types, Options(index32=True)).ptx
    # The variant a launch whose facts hold would take (compiled here without a launch).
    verdict = verdict_of(spec.result, k.py_func, spec.arg_types, Options())
    if verdict.ok:
        wide = compile_kernel(k.py_func, spec.arg_types, Options(coarsen=verdict.width))
        out["cujit"] = wide.ptx
    else:
        print(f"cujit: {verdict.describe()}")
    try:
        from numba import cuda as nc

        ptx, _ = nc.compile_ptx(kb.python_kernel(kernel, nc), sig, cc=(9, 0))
        out["numba"] = ptx
    except Exception as exc:  # an anchor that cannot compile here is reported, not fatal
        print(f"numba-cuda: {type(exc).__name__}: {str(exc)[:200]}")
    from cujit.ptx.nvrtc import compile_cuda

    out["c"] = compile_cuda(kernel.c_src, f"{name}.cu", (9, 0)).decode()
    return out


def sass_counts(ptx: str, nvdisasm: str, path: str) -> str:
    """The SASS instruction count of ``ptx`` (assembled for sm_90 by nvJitLink, read back
    by ``nvdisasm``) and its ten commonest opcodes, as one line."""
    import collections
    import subprocess

    from cujit.ptx.link import link_cubin

    with open(path, "wb") as f:
        f.write(link_cubin(ptx, (9, 0)))
    text = subprocess.run(
        [nvdisasm, "-c", path], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    ops = re.findall(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", text)
    common = collections.Counter(op.split(".")[0] for op in ops).most_common(10)
    return f"{len(ops):5}  " + " ".join(f"{k}:{v}" for k, v in common)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name", choices=sorted(kb.KERNELS))
    parser.add_argument("--out", default="/tmp/ptx_diff")
    parser.add_argument("--nvdisasm", help="path of nvdisasm: also count SASS instructions")
    parser.add_argument(
        "--print",
        dest="show",
        nargs="*",
        metavar="LABEL",
        help="print the kernel body's instructions of these (default with no labels: all)",
    )
    ns = parser.parse_args(argv)
    os.makedirs(ns.out, exist_ok=True)
    ptxs = ptx_all(ns.name)
    rows = {label: counts(p) for label, p in ptxs.items()}
    for label, p in ptxs.items():
        with open(os.path.join(ns.out, f"{ns.name}.{label}.ptx"), "w") as f:
            f.write(p)
    print(f"{'':18}" + "".join(f"{lab:>12}" for lab in rows))
    for key in PATTERNS:
        print(f"{key:18}" + "".join(f"{rows[lab][key]:>12}" for lab in rows))
    if ns.nvdisasm:
        print("SASS instructions (sm_90):")
        for label, p in ptxs.items():
            cubin = os.path.join(ns.out, f"{ns.name}.{label}.cubin")
            print(f"  {label:12} {sass_counts(p, ns.nvdisasm, cubin)}")
    if ns.show is not None:
        for label in ns.show or list(ptxs):
            print(f"==== {ns.name} {label}: instructions ====")
            print(body(ptxs[label]))
    print(f"PTX in {ns.out}/{ns.name}.*.ptx")


if __name__ == "__main__":
    main()
