"""``cujit report FILE.py:KERNEL --sig SIG [-o out.html] [--arch 9.0]``."""

from __future__ import annotations

import importlib.util
import os
import sys


def load_function(target: str):
    """The Python function ``KERNEL`` of ``FILE.py:KERNEL`` (a kernel's ``py_func``).

    The file runs as a module registered in ``sys.modules`` (dataclasses and
    pickling look their module up there)."""
    path, sep, name = target.rpartition(":")
    if not sep or not path:
        raise SystemExit("report takes FILE.py:KERNEL")
    if not os.path.isfile(path):
        raise SystemExit(f"no such file: {path}")
    mod_name = "_cujit_report_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))  # its sibling imports
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.pop(0)
    obj = getattr(module, name, None)
    if obj is None:
        raise SystemExit(f"{path} has no function {name!r}")
    return getattr(obj, "py_func", obj)


def cmd_report(args) -> int:
    from cujit.diagnostics import CujitError
    from cujit.options import Options
    from cujit.report import report
    from cujit.types import parse_signature

    pyfunc = load_function(args.target)
    sig = parse_signature(args.sig)
    arch = tuple(int(x) for x in args.arch.split(".")) if args.arch else Options().arch
    out = args.output or f"{pyfunc.__name__}.report.html"
    try:
        path = report(pyfunc, sig.args, out, Options(arch=arch, debug=args.debug))
    except CujitError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"wrote {path}")
    return 0


def add_report_command(sub) -> None:
    rp = sub.add_parser("report", help="write an HTML report of a kernel's compilation")
    rp.add_argument("target", help="FILE.py:KERNEL")
    rp.add_argument("--sig", required=True, help='a signature such as "void(float32[:])"')
    rp.add_argument("-o", "--output", help="the HTML file (default KERNEL.report.html)")
    rp.add_argument("--arch", help="compute capability, e.g. 9.0 (default 9.0)")
    rp.add_argument("--debug", action="store_true", help="compile as jit(debug=True)")
    rp.set_defaults(func=cmd_report)
