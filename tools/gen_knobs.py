"""Write docs/guide/environment.md: the table of every CUJIT_* variable, from config.py.

    PYTHONPATH=src python tools/gen_knobs.py           # regenerate the page
    PYTHONPATH=src python tools/gen_knobs.py --check   # exit 1 if the page is stale

The page is generated from ``cujit.config.KNOBS`` alone (name, type, default, doc):
declare a new knob there and run this once.
"""

from __future__ import annotations

import sys
from pathlib import Path

from cujit import config

PAGE = Path(__file__).resolve().parent.parent / "docs" / "guide" / "environment.md"

HEADER = """\
# Environment variables

Generated from `src/cujit/config.py` by `python tools/gen_knobs.py`: do not edit by hand.
Each variable is read when it is needed (a kernel's definition or compile, a launch), so
set it before running your program: `CUJIT_TARGET=cpu python my_program.py`. An empty
value means the default. On/off variables take `1`/`0` (also `true`/`false`, `yes`/`no`,
`on`/`off`).

| variable | type | default | effect |
|---|---|---|---|
"""

KINDS = {
    bool: "on/off",
    str: "text",
    int: "integer",
    float: "number",
    tuple: "compute capability (`9.0` or `90`)",
}


def _default(knob: config.Knob) -> str:
    if knob.default is None:
        return "unset"
    if knob.kind is bool:
        return "`1` (on)" if knob.default else "`0` (off)"
    return f"`{knob.default}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render() -> str:
    """The page's text, one row per declared knob in declaration order."""
    rows = [
        f"| `{k.name}` | {KINDS.get(k.kind, k.kind.__name__)} | {_default(k)} | {_cell(k.doc)} |\n"
        for k in config.KNOBS
    ]
    return HEADER + "".join(rows)


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if not PAGE.exists() or PAGE.read_text() != text:
            print(f"{PAGE} is stale: run python tools/gen_knobs.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text)
    print(f"wrote {PAGE} ({len(config.KNOBS)} variables)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
