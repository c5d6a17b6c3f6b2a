"""The intrinsic table (``cujit.ir.intrinsics``): both targets cover it, its consumers
(dead-code elimination, written arguments, the CPU schedulers, the verifier, the docs)
take their facts from it, and a target's refusal reaches the user at the call's line."""

from __future__ import annotations

import dataclasses
import importlib
import pathlib
import re

import numpy as np
import pytest

from cujit import cuda, float32, float64, ir
from cujit.diagnostics import UnsupportedError
from cujit.ir import intrinsics
from cujit.ir.analysis import written_arguments
from cujit.libdevice import FUNCTIONS as LIBDEVICE_FUNCTIONS
from cujit.options import Options
from cujit.passes import eliminate_dead_code
from cujit.pipeline import compile_kernel

DOC = pathlib.Path(__file__).parent.parent / "docs" / "typed-ir.md"


def _cuda_table() -> dict:
    from cujit.targets.cuda import CUDA_TARGET

    return CUDA_TARGET.intrinsics


def _cpu_table() -> dict:
    from cujit.targets.cpu import cpu_target

    # The variant with every scheduler: the plain one refuses what suspends (below).
    return cpu_target(True, True, True).intrinsics


def test_every_row_names_the_rule_that_types_it():
    for row in intrinsics.ROWS:
        module, _, function = row.typing.partition(":")
        rule = getattr(importlib.import_module(module), function, None)
        assert callable(rule), f"{row.name}: {row.typing} is not a function"


@pytest.mark.parametrize("target, table", [("cuda", _cuda_table), ("cpu", _cpu_table)])
def test_every_row_is_lowered_by_the_target_or_refused(target, table):
    lowered = table()
    for row in intrinsics.ROWS:
        if row.name not in lowered:
            message = row.refusal(target)
            assert message and row.name in message, (
                f"{target} neither lowers nor refuses {row.name}"
            )
    # ...and no target lowers a name the IR cannot hold.
    assert set(lowered) - set(intrinsics.TABLE) == set()


def test_every_name_the_typing_rules_build_has_a_row():
    """The names ``infer`` builds from its own tables (f-strings over them) are rows
    (``math.*`` of Python's math module come from the table itself)."""
    from cujit.infer import atomic_calls, cmath_calls, fp16_calls, numpy_calls, warp_calls

    built = set(atomic_calls.ATOMIC_INTRINSICS)
    built |= {f"cuda.{n}" for n in (*warp_calls.SHUFFLES, *warp_calls.VOTES)}
    built |= {f"cmath.{n}" for n in cmath_calls.CMATH_INTRINSICS}
    maths = (
        *numpy_calls.NP_UNARY.values(),
        *numpy_calls.NP_BINARY.values(),
        *fp16_calls._FP16_MATH.values(),
    )
    built |= {f"math.{n}" for n in maths}
    assert built - set(intrinsics.TABLE) == set()


def test_refusal_is_the_error_the_user_sees(monkeypatch):
    """A CPU target without ``cuda.fma`` refuses it with the table's message at the
    user's line, through ``cuda.jit``'s public launch path."""
    from cujit.targets.cpu import cpu_target
    from cujit.targets.cpu import intrinsics as cpu_intrinsics

    message = "'cuda.fma' is not available on the host (a test's refusal)"
    row = dataclasses.replace(intrinsics.TABLE["cuda.fma"], refused=(("cpu", message),))
    monkeypatch.setitem(intrinsics.TABLE, "cuda.fma", row)
    monkeypatch.delitem(cpu_intrinsics.INTRINSICS, "cuda.fma")
    cpu_target.cache_clear()
    try:

        @cuda.jit(target="cpu")
        def fused(out, a):
            out[0] = cuda.fma(a[0], a[1], a[2])  # the refused line

        out = np.full(1, np.nan, np.float32)
        with pytest.raises(UnsupportedError) as info:
            fused[1, 1](out, np.array([2.0, 3.0, 1.0], np.float32))
    finally:
        cpu_target.cache_clear()
    text = str(info.value)
    line = next(
        k
        for k, src in enumerate(pathlib.Path(__file__).read_text().splitlines(), 1)
        if src.strip().endswith("# the refused line")
    )
    assert message in text
    assert f"{pathlib.Path(__file__).name}:{line}:" in text
    assert np.isnan(out[0])  # nothing ran


def test_a_name_with_no_refusal_gets_the_default_message():
    assert intrinsics.refusal("cuda.fma", "cpu") == "'cuda.fma' is not supported on target 'cpu'"


def _atomic_kernel(a, b):
    cuda.atomic.add(a, 0, 1.0)  # the result is never read
    b[0] = 2.0


def _typed_atomic():
    types = (float32[::1], float32[::1])
    return compile_kernel(_atomic_kernel, types, Options(verify=True), stop_after="typed").outputs[
        "typed"
    ]


def _names(fn) -> list[str]:
    return [op.name for op in fn.all_ops() if isinstance(op, ir.Intrinsic)]


def test_dce_keeps_an_intrinsic_because_its_row_has_a_side_effect(monkeypatch):
    fn = _typed_atomic()
    assert "atomic.add" in _names(eliminate_dead_code(fn))
    # The same op, were its row without a store, is dead: the table decides.
    pure = dataclasses.replace(intrinsics.TABLE["atomic.add"], stores_into=None, reads=False)
    monkeypatch.setitem(intrinsics.TABLE, "atomic.add", pure)
    assert "atomic.add" not in _names(eliminate_dead_code(fn))


def test_a_new_row_with_an_effect_survives_dce(monkeypatch):
    """The next intrinsic someone adds needs its row only, not an entry in dce.py."""
    fn = _typed_atomic()
    renamed = _rename(fn, "atomic.add", "cuda.nanosleep")
    monkeypatch.setitem(
        intrinsics.TABLE,
        "cuda.nanosleep",
        intrinsics.IntrinsicRow(
            name="cuda.nanosleep", typing="cujit.infer.cuda_calls:fence", arity=3, fence=True
        ),
    )
    assert "cuda.nanosleep" in _names(eliminate_dead_code(renamed))
    monkeypatch.setitem(
        intrinsics.TABLE,
        "cuda.nanosleep",
        intrinsics.IntrinsicRow(
            name="cuda.nanosleep", typing="cujit.infer.cuda_calls:fence", arity=3
        ),
    )
    assert "cuda.nanosleep" not in _names(eliminate_dead_code(renamed))


def _rename(fn, old: str, new: str):
    blocks = tuple(
        dataclasses.replace(
            b,
            ops=tuple(
                dataclasses.replace(op, name=new)
                if isinstance(op, ir.Intrinsic) and op.name == old
                else op
                for op in b.ops
            ),
        )
        for b in fn.blocks
    )
    return dataclasses.replace(fn, blocks=blocks)


def test_written_arguments_follow_stores_into(monkeypatch):
    fn = _typed_atomic()
    assert written_arguments(fn) == (True, True)
    monkeypatch.setitem(
        intrinsics.TABLE,
        "atomic.add",
        dataclasses.replace(intrinsics.TABLE["atomic.add"], stores_into=None),
    )
    assert written_arguments(fn) == (False, True)


def test_verifier_rejects_a_name_not_in_the_table():
    fn = _rename(_typed_atomic(), "atomic.add", "atomic.addd")
    with pytest.raises(ir.VerificationError, match="'atomic.addd' is not in the intrinsic"):
        ir.verify(fn, typed=True)
    with pytest.raises(ir.VerificationError, match="not in the intrinsic table"):
        ir.verify(fn)  # the untyped check too


def test_verifier_checks_the_rows_operand_count():
    fn = _typed_atomic()
    blocks = tuple(
        dataclasses.replace(
            b,
            ops=tuple(
                dataclasses.replace(op, args=op.args[:2])
                if isinstance(op, ir.Intrinsic) and op.name == "atomic.add"
                else op
                for op in b.ops
            ),
        )
        for b in fn.blocks
    )
    with pytest.raises(ir.VerificationError, match="'atomic.add' takes 3 operands, has 2"):
        ir.verify(dataclasses.replace(fn, blocks=blocks), typed=True)


def test_cpu_schedulers_read_the_table():
    from cujit.targets.cpu import coro, warp

    rendezvous = intrinsics.names_where(lambda r: r.cpu_wait == intrinsics.RENDEZVOUS)
    barriers = intrinsics.names_where(lambda r: r.cpu_wait == intrinsics.COROUTINE)
    assert set(warp.WARP_FUNCTIONS) == rendezvous
    assert set(coro.BARRIERS) == barriers == {"cuda.syncthreads", "cuda.grid_sync"}
    # Everything that suspends is lowered by the warp variant's table, and only there
    # (or by the coroutine variant): the plain host variant lowers none of it for real.
    from cujit.targets.cpu import cpu_target, mma

    assert rendezvous | barriers <= set(warp.WARP_INTRINSICS) | set(mma.MMA_WARP_INTRINSICS)
    assert rendezvous <= set(cpu_target(False, False, True).intrinsics)
    assert not rendezvous & set(cpu_target(False).intrinsics)


def test_cpu_suspension_comes_from_the_row(monkeypatch):
    from cujit.targets.cpu import coro

    fn = _typed_atomic()
    assert not coro.suspends(fn)
    monkeypatch.setattr(
        coro, "_SUSPENDING", intrinsics.names_where(lambda r: r.suspends or r.name == "atomic.add")
    )
    assert coro.suspends(fn)


def test_effects_of_the_known_rows():
    """Facts worked out from CUDA's documentation, not read back from the table."""
    t = intrinsics.TABLE
    assert t["atomic.cas"].stores_into == 0 and t["atomic.cas"].reads
    assert t["print"].side_effect and not t["print"].writes
    assert t["cuda.syncthreads"].barrier == "block" and t["cuda.grid_sync"].barrier == "grid"
    assert t["cuda.shfl_sync"].warp and not t["cuda.shfl_sync"].side_effect
    assert t["cuda.lanemask_lt"].cpu_wait == "" and t["cuda.activemask"].suspends
    assert not any(t[f"math.{f}"].side_effect for f in ("sqrt", "pow", "isnan"))
    assert not t["shared.array"].side_effect  # an unused allocation is dead


def _doc_section(text: str) -> str:
    start = text.index("<!-- intrinsic-effects:begin")
    start = text.index("\n", start) + 1
    return text[start : text.index("<!-- intrinsic-effects:end -->")]


def test_docs_effects_section_is_generated_from_the_table():
    assert _doc_section(DOC.read_text()) == intrinsics.markdown_table(), (
        "regenerate with: PYTHONPATH=src python tools/intrinsic_doc.py"
    )


def _documented_names(text: str) -> set[str]:
    """The names of the contract's hand-written intrinsic table, patterns expanded."""
    section = text[text.index("## Intrinsics (") : text.index("<!-- intrinsic-effects:begin")]
    names: set[str] = set()
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        cell = line.split(" | ")[0].lstrip("| ")
        cell_names = re.sub(r"of `cujit\.libdevice\.FUNCTIONS`", "of the libdevice table", cell)
        for token in re.findall(r"`([^`]+)`", cell_names):
            pattern = re.fullmatch(r"(.*)<(\w+)>(.*)", token)
            if pattern is None:
                names.add(token)
                continue
            if re.search(rf"for {pattern[2]} of the libdevice table", cell_names):
                names |= {pattern[1] + w + pattern[3] for w in LIBDEVICE_FUNCTIONS}
                continue
            words = re.search(rf"for {pattern[2]} in ([\w ]+)", cell)
            if words is not None:  # "`math.<f>` on float16" names no new function
                names |= {pattern[1] + w + pattern[3] for w in words[1].split()}
    return names


def test_docs_contract_names_exactly_the_tables_rows():
    assert _documented_names(DOC.read_text()) == set(intrinsics.TABLE)


@pytest.mark.parametrize("dtype", [float32, float64])
def test_atomic_kept_by_dce_still_runs(dtype):
    """End to end on the CPU target: the unused-result atomic of a kernel happens."""

    @cuda.jit(target="cpu")
    def count(a):
        cuda.atomic.add(a, 0, 1.0)

    a = np.full(1, 5.0, np.float32 if dtype is float32 else np.float64)
    count[2, 8](a)
    assert a[0] == 5.0 + 2 * 8
