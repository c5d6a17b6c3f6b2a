"""``cujit report FILE.py:KERNEL --sig SIG [-o out.html] [--arch 9.0] [--debug]``.

The file is loaded as ``explain`` loads it (``cujit.explain_load``, handed in by
``cujit.cli``): its top-level definitions run, its launches do not.  Every bad
argument (file, kernel, signature, source, output folder, architecture) ends the
command with one line on stderr; what it prints of the user's text is escaped
(``diagnostics.printable``).
"""

from __future__ import annotations

import os
import sys

HEAD = "cujit report:"


def _signature(text: str):
    from cujit.diagnostics import CujitError
    from cujit.types import parse_signature

    try:
        return parse_signature(text)
    except (CujitError, SyntaxError, TypeError, ValueError) as exc:
        message = getattr(exc, "message", None) or str(exc)
        hint = f" ({exc.hint})" if getattr(exc, "hint", None) else ""
        raise SystemExit(_line(f"--sig {text!r}: {message}{hint}")) from None


def _arch(text: str | None) -> tuple[int, int]:
    from cujit.options import Options

    if not text:
        return Options().arch
    major, dot, minor = text.partition(".")
    if not (major.isdigit() and (not dot or minor.isdigit())):
        raise SystemExit(_line(f"--arch {text!r}: expected a compute capability such as 9.0"))
    return int(major), int(minor or 0)


def _output(path: str) -> str:
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise SystemExit(_line(f"-o {path!r}: no such folder: {folder}"))
    if os.path.isdir(path):
        raise SystemExit(_line(f"-o {path!r}: is a folder; name the HTML file to write"))
    return path


def _line(text: str) -> str:
    """One line of the command's error output: ``cujit report: <text>``, escaped."""
    from cujit.diagnostics import printable

    return printable(f"{HEAD} {text}")


def cmd_report(args) -> int:
    from cujit.diagnostics import CujitError, printable
    from cujit.options import Options
    from cujit.report import report

    sig = _signature(args.sig)
    arch = _arch(args.arch)
    out = _output(args.output) if args.output else None
    pyfunc = args.load_kernel(args.target, "report")
    out = out or _output(f"{pyfunc.__name__}.report.html")
    try:
        path = report(pyfunc, sig.args, out, Options(arch=arch, debug=args.debug))
    except CujitError as exc:
        print(exc, file=sys.stderr)
        return 1
    except OSError as exc:  # the folder went away, or is not writable
        raise SystemExit(_line(f"cannot write {out!r}: {exc.strerror or exc}")) from None
    print(f"wrote {printable(path)}")
    return 0


def add_report_command(sub, load_kernel) -> None:
    """The ``report`` subcommand; ``load_kernel(target, command)`` loads the kernel
    (``cujit.explain_load.load_kernel``)."""
    rp = sub.add_parser("report", help="write an HTML report of a kernel's compilation")
    rp.add_argument("target", help="FILE.py:KERNEL")
    rp.add_argument("--sig", required=True, help='a signature such as "void(float32[:])"')
    rp.add_argument("-o", "--output", help="the HTML file (default KERNEL.report.html)")
    rp.add_argument("--arch", help="compute capability, e.g. 9.0 (default 9.0)")
    rp.add_argument("--debug", action="store_true", help="compile as jit(debug=True)")
    rp.set_defaults(func=cmd_report, load_kernel=load_kernel)
