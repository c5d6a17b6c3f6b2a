"""Rewrite the generated effects section of docs/typed-ir.md from the intrinsic table.

PYTHONPATH=src python tools/intrinsic_doc.py
"""

from __future__ import annotations

import pathlib

from cujit.ir.intrinsics import markdown_table

BEGIN = "<!-- intrinsic-effects:begin"
END = "<!-- intrinsic-effects:end -->"


def main() -> None:
    doc = pathlib.Path(__file__).resolve().parent.parent / "docs" / "typed-ir.md"
    text = doc.read_text()
    start = text.index("\n", text.index(BEGIN)) + 1
    doc.write_text(text[:start] + markdown_table() + text[text.index(END) :])


if __name__ == "__main__":
    main()
