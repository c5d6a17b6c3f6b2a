"""Run every GPU test kernel and every bench kernel once, checked, for compute-sanitizer.

    PYTHONPATH=src python3 tools/sanitize_kernels.py [--set tests|bench|all] [--only NAME]

``tools/gpu-sanitize.sh`` runs this under memcheck, racecheck and synccheck.  The test
kernels are ``tests/kernels.py``'s cases (device arrays, as ``test_kernels_run``); the
bench kernels are ``bench/kernel_bench.py``'s, through cujit only, with the matrix and
array sizes cut down (the sanitizers slow kernels 10-100x; the code paths are the
same).  Each result is compared with its NumPy reference; one line per kernel, then
``sanitize-kernels: N ok, M failed``; the exit status is 1 if any failed.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import traceback

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))
sys.path.insert(0, os.path.join(ROOT, "tests"))

# Smaller problems than the benchmark's (same kernels, same launch shapes per block).
BENCH_SIZES = {"MM_N": 256, "TR_N": 1024, "JA_N": 1024, "BS_N": 1 << 16}


def test_kernels(only: str | None):
    import kernels

    for case in kernels.CASES:
        if only and only not in case.name:
            continue
        yield (
            f"tests/{case.name}",
            lambda c=case: kernels.run_case(c, "device", "cuda", np.random.default_rng(16)),
        )


def _bench_module():
    spec = importlib.util.spec_from_file_location(
        "kernel_bench", os.path.join(ROOT, "bench", "kernel_bench.py")
    )
    kb = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kb)
    for name, value in BENCH_SIZES.items():
        setattr(kb, name, value)
    return kb


def _run_bench(kb, kernel, impl, sms: int) -> None:
    args, grid, block, _ = kernel.make(np.random.default_rng(7), sms)
    expected = kernel.reference([a.copy() if isinstance(a, np.ndarray) else a for a in args])
    kern = impl.build(kernel)
    dargs = [impl.device(a) for a in args]
    impl.launcher(kern, grid, block, dargs, [])()
    impl.sync()
    for index, want in expected.items():
        err = kb.rel_err(impl.host(dargs[index]), np.asarray(want))
        if not err < kernel.tol:
            raise AssertionError(f"output {index}: relative error {err:.3e}")


def bench_kernels(only: str | None):
    from cujit import cuda

    kb = _bench_module()
    impl = kb.CujitImpl()
    dev = cuda.get_current_device()
    sms = getattr(dev, "MULTIPROCESSOR_COUNT", None) or dev.multiprocessor_count
    for name, kernel in kb.KERNELS.items():
        if only and only not in name:
            continue
        yield f"bench/{name}", lambda k=kernel: _run_bench(kb, k, impl, sms)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", choices=("tests", "bench", "all"), default="all")
    ap.add_argument("--only", help="run the kernels whose name contains this")
    opts = ap.parse_args(argv)
    from cujit import cuda

    if not cuda.is_available():
        print("sanitize-kernels: no CUDA GPU here: nothing to run")
        return 2
    sets = {
        "tests": [test_kernels],
        "bench": [bench_kernels],
        "all": [test_kernels, bench_kernels],
    }[opts.set]
    ok = failed = 0
    for source in sets:
        for name, run in source(opts.only):
            try:
                run()
            except Exception:  # noqa: BLE001 - report every kernel, then the count
                failed += 1
                print(f"FAIL {name}\n{traceback.format_exc(limit=3)}", flush=True)
            else:
                ok += 1
                print(f"ok   {name}", flush=True)
    print(f"sanitize-kernels: {ok} ok, {failed} failed")
    return 1 if failed or not ok else 0


if __name__ == "__main__":
    sys.exit(main())
