"""Everything one report shows, gathered from a compile: ``build_report``.

The compile is an ordinary ``compile_kernel`` run with line tables on
(``lineinfo``, or ``debug`` when asked), so the LLVM IR and PTX carry the
locations the report links; the report reads only the stages' outputs and times and
the compile's launch record (which flat parameters a launch passes).
"""

from __future__ import annotations

import dataclasses
import inspect
import linecache
from dataclasses import dataclass, field

from cujit.options import Options
from cujit.report import findings, graph, resources, stages


@dataclass
class Param:
    name: str
    kind: str
    passed: bool


@dataclass
class Report:
    name: str
    path: str
    signature: str
    arch: tuple[int, int]
    source: list[tuple[int, str]]
    stages: list[stages.StageView]
    times: dict[str, float]
    params: list[Param]
    resources: resources.Resources | None
    occupancy: list[resources.Occupancy]
    findings: list[findings.Finding]  # grouped (``findings.group``): warnings and notes
    graph: graph.Graph
    notes: list[str] = field(default_factory=list)  # what the report could not gather

    @property
    def warnings(self) -> list[findings.Finding]:
        return [f for f in self.findings if not f.is_note]

    @property
    def remarks(self) -> list[findings.Finding]:
        """The optimisation notes: what the compiler did, nothing to fix."""
        return [f for f in self.findings if f.is_note]


def _source(pyfunc, path: str) -> list[tuple[int, str]]:
    try:
        lines, first = inspect.getsourcelines(pyfunc)
    except (OSError, TypeError):
        first = pyfunc.__code__.co_firstlineno
        lines = linecache.getlines(path)[first - 1 :] if linecache.getlines(path) else []
    return [(first + i, ln.rstrip("\n")) for i, ln in enumerate(lines)]


def _params(pyfunc, arg_types, record) -> list[Param]:
    """The flat parameters and which a launch passes: ``record.passed``, the launch
    record's mask that ``explain`` prints and the launcher applies (``abi.keep``)."""
    from cujit import abi

    code = pyfunc.__code__
    names = [
        n
        for a, t in zip(code.co_varnames[: code.co_argcount], arg_types, strict=True)
        for n in abi.param_names(a, t)
    ]
    kinds = abi.flat_param_kinds(tuple(arg_types))
    return [Param(n, str(k), p) for n, k, p in zip(names, kinds, record.passed, strict=True)]


def compile_options(options: Options | None) -> Options:
    """The options a report compiles with: the CUDA target, line tables on."""
    options = options or Options()
    return dataclasses.replace(options, target="cuda", verify=True, lineinfo=not options.debug)


def build_report(
    pyfunc, arg_types, options: Options | None = None, disassemble: bool = True
) -> Report:
    """Compile ``pyfunc`` for ``arg_types`` through every stage and gather the report;
    ``disassemble=False`` skips the SASS (the disassembler is the slow part)."""
    from cujit.bytecode import format_bytecode
    from cujit.cfg import format_cfg
    from cujit.pipeline import compile_kernel

    pyfunc = getattr(pyfunc, "py_func", pyfunc)
    options = compile_options(options)
    result = compile_kernel(pyfunc, tuple(arg_types), options)
    out = result.outputs
    path = pyfunc.__code__.co_filename
    fn = out["passes"]
    symbol = result.record.symbol
    views = [
        stages.listing_view("bytecode", format_bytecode(out["bytecode"])),
        stages.listing_view("cfg", format_cfg(out["cfg"])),
        stages.ir_view("ir", out["ir"], path),
        stages.ir_view("typed", out["typed"], path),
        stages.ir_view("passes", fn, path),
        stages.llvm_view(out["llvm"], path),
        stages.ptx_view(out["ptx"], path),
        stages.sass_view(out.get("cubin"), path)
        if disassemble
        else stages.StageView("sass", note="not disassembled"),
    ]
    notes = []
    try:
        res = resources.link_resources(out["ptx"], options.arch, symbol)
    except Exception as exc:  # noqa: BLE001 - the report still shows every stage
        res = None
        notes.append(f"resource use unavailable: the verbose link failed ({exc})")
    # Widening is read off the typed IR: constant folding turns np.int32(3), cast to
    # int64, into an int64 constant that would look like a Python literal.
    found = findings.wide_types(out["typed"], path, views[6].lines)
    found += findings.local_arrays(fn, path, res.stack_frame if res else None)
    found += findings.loops_not_unrolled(fn, path, views[6].lines)
    found.append(findings.coarsening(fn, path))  # coarsened, or the rule that failed
    sig = ", ".join(str(t) for t in arg_types)
    return Report(
        name=fn.name,
        path=path,
        signature=f"void({sig})",
        arch=options.arch,
        source=_source(pyfunc, path),
        stages=views,
        times=dict(result.times),
        params=_params(pyfunc, arg_types, result.record),
        resources=res,
        occupancy=resources.occupancy_table(res, options.arch) if res else [],
        findings=findings.group(found),
        graph=graph.render(fn, path),
        notes=notes,
    )
