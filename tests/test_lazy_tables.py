"""Tables with families most kernels never use, loaded at their first use: stage 4's
call table (``cujit.infer.calls``) and the CUDA target's lowering table
(``codegen.target.LazyTable``).  Loading them changes no row already in the table."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")


def run_fresh(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; it prints one JSON object last."""
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_families_are_disjoint_from_the_eager_rows_and_complete_the_table():
    facts = run_fresh(
        """
        import json
        from cujit.infer import calls

        eager = dict(calls.CALLS)
        rows = calls.family_rows()
        calls.rule_for(object())  # a callee no row has: the families load
        print(json.dumps({
            "overlap": [repr(k) for k in eager if k in rows],
            "families": len(rows),
            "loaded": calls._families_loaded,
            "complete": len(calls.CALLS) == len(eager) + len(rows),
            "same": all(calls.CALLS[k] is v for k, v in eager.items()),
            "rules": sorted({v.__module__ for v in rows.values()}),
        }))
        """
    )
    assert facts["overlap"] == []
    assert facts["families"] > 100  # cmath, numpy, fp16, libdevice (hundreds)...
    assert facts["loaded"] and facts["complete"] and facts["same"]
    from cujit.infer.calls import LAZY_FAMILIES

    # each family's rules are made in its own module (or in one it builds on)
    assert {f"cujit.infer.{m}" for m, _ in LAZY_FAMILIES} - set(facts["rules"]) <= {
        "cujit.infer.numpy_calls"  # np.sin...: the builtin and cmath rules' makers
    }


def test_a_plain_kernel_compiles_without_the_families():
    facts = run_fresh(
        """
        import json, sys
        from cujit import cuda, float32, pipeline

        def saxpy(a, x, y, out):
            i = cuda.grid(1)
            if i < x.size:
                out[i] = a * x[i] + y[i]

        sig = (float32, float32[::1], float32[::1], float32[::1])
        pipeline.compile_kernel(saxpy, sig, cuda.jit(saxpy)._options(), stop_after="llvm")
        from cujit.infer import calls
        print(json.dumps({
            "loaded": calls._families_loaded,
            "modules": [m for m in sys.modules if m.startswith("cujit.infer.")
                        and m.removeprefix("cujit.infer.") in dict(calls.LAZY_FAMILIES)],
        }))
        """
    )
    assert facts == {"loaded": False, "modules": []}


def test_the_first_call_of_a_family_types_in_a_fresh_process():
    """Each kernel below types in a fresh process, the first with the families not
    loaded yet: each callee's family loads, and the call types as it always has."""
    facts = run_fresh(
        """
        import cmath, json, operator
        import numpy as np
        from cujit import cuda, float32, float64, pipeline
        from cujit.types import complex128
        from cujit.infer import calls

        def k_print(x):
            print(x[0])

        def k_cmath(z):
            z[0] = cmath.exp(z[0])

        def k_numpy(x):
            x[0] = np.sin(x[0])

        def k_round(x):
            x[0] = round(x[0]) + pow(x[0], 2.0)

        def k_libdevice(x):
            x[0] = cuda.libdevice.exp(x[0])

        def k_operator(x):
            f = operator.add
            x[0] = f(x[0], 1.0)

        out = {"before": calls._families_loaded}
        for fn, arr in ((k_print, float32[::1]), (k_cmath, complex128[::1]),
                        (k_numpy, float64[::1]), (k_round, float64[::1]),
                        (k_libdevice, float64[::1]), (k_operator, float64[::1])):
            r = pipeline.compile_kernel(fn, (arr,), cuda.jit(fn)._options(), stop_after="typed")
            ops = [op for b in r.outputs["typed"].blocks for op in b.ops]
            out[fn.__name__] = sorted(
                {type(op).__name__ + ":" + str(getattr(op, "name", getattr(op, "op", "")))
                 for op in ops} - {"Const:", "GetItem:", "SetItem:", "Cast:"})
        out["after"] = calls._families_loaded
        print(json.dumps(out))
        """
    )
    assert facts == {
        "before": False,
        "k_print": ["Intrinsic:print"],
        "k_cmath": ["CallFunction:"],  # cmath.exp: cujit's own device function
        "k_numpy": ["Intrinsic:math.sin"],
        "k_round": ["BinOp:**", "BinOp:+", "Intrinsic:libdevice.rint"],
        "k_libdevice": ["Intrinsic:libdevice.exp"],
        "k_operator": ["BinOp:+"],
        "after": True,
    }


RARE_LOWERING_MODULES = (
    "cujit.codegen.printing",
    "cujit.codegen.cache_hints",
    "cujit.codegen.libdevice",
    "cujit.targets.cuda.cg",
    "cujit.targets.cuda.constmem",
    "cujit.targets.cuda.foreign",
    "cujit.targets.cuda.warp",
    "cujit.codegen.debugtypes",
    "cujit.codegen.debugvars",
)


def test_the_cuda_lowering_table_loads_its_rare_families_at_first_use():
    facts = run_fresh(
        f"""
        import json, sys
        from cujit import cuda, float32, pipeline

        def saxpy(a, x, y, out):
            i = cuda.grid(1)
            if i < x.size:
                out[i] = a * x[i] + y[i]

        def shout(x):
            print(x[0])

        sig = (float32, float32[::1], float32[::1], float32[::1])
        pipeline.compile_kernel(saxpy, sig, cuda.jit(saxpy)._options(), stop_after="llvm")
        rare = {RARE_LOWERING_MODULES!r}
        out = {{"plain": [m for m in rare if m in sys.modules]}}
        r = pipeline.compile_kernel(shout, (float32[::1],), cuda.jit(shout)._options(),
                                    stop_after="llvm")
        out["printed"] = 'call i32 @"vprintf"' in r.outputs["llvm"]
        out["after"] = sorted(m for m in rare if m in sys.modules)
        print(json.dumps(out))
        """
    )
    assert facts["plain"] == []
    assert facts["printed"] is True
    # the families load together; the debug-info tables only with line info
    assert facts["after"] == sorted(
        set(RARE_LOWERING_MODULES) - {"cujit.codegen.debugtypes", "cujit.codegen.debugvars"}
    )


def test_a_lazy_table_refuses_a_family_that_shadows_a_row_and_loads_once():
    import pytest

    from cujit.codegen.target import LazyTable

    calls = []

    def more():
        calls.append(1)
        return {"b": 2, "c": 3}

    table = LazyTable({"a": 1}, more)
    assert table["a"] == 1 and calls == []
    assert table.get("zzz") is None and calls == [1]  # a miss loads, once
    assert table["b"] == 2 and "c" in table and len(table) == 3 and calls == [1]
    assert sorted(table) == ["a", "b", "c"]
    with pytest.raises(KeyError):
        table["zzz"]
    clash = LazyTable({"a": 1}, lambda: {"a": 5})
    with pytest.raises(RuntimeError, match="shadow rows: \\['a'\\]"):
        clash.get("x")


def test_libdevice_is_made_at_first_use_and_its_placeholders_unpickle_anywhere():
    """``cujit.libdevice`` makes its table and placeholders when first asked; a
    placeholder pickled in one process unpickles in a fresh one that has not touched
    ``cuda.libdevice`` (to the object its kernels call)."""
    import pickle

    from cujit import cuda

    data = pickle.dumps(cuda.libdevice.sin)
    facts = run_fresh(
        f"""
        import json, pickle, sys
        from cujit import cuda, pipeline

        pipeline.import_stages()
        made = "FUNCTIONS" in vars(sys.modules["cujit.libdevice"])
        sin = pickle.loads({data!r})
        print(json.dumps({{"made_by_stages": made, "same": sin is cuda.libdevice.sin,
                           "key": sin.key}}))
        """
    )
    assert facts == {"made_by_stages": False, "same": True, "key": "libdevice.sin"}
