"""Regenerate the golden files of stages 1-3 (bytecode, CFG, untyped IR).

Run it under every supported Python, then review the diff:

    PYTHONPATH=src python3.11 tools/update_golden_frontend.py
    PYTHONPATH=src python3.12 tools/update_golden_frontend.py
    PYTHONPATH=src python3.13 tools/update_golden_frontend.py

Per-version files go to tests/golden/frontend/3.X/; the IR of the cases
listed in render.SHARED_IR goes to tests/golden/frontend/ir/ and must come
out the same on every version (the script says when it does not).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests" / "golden" / "frontend")]

import render  # noqa: E402


def main() -> int:
    changed = conflicts = 0
    for fn in render.all_cases():
        for kind, text in render.render(fn).items():
            path = render.golden_path(fn.__name__, kind)
            old = path.read_text() if path.exists() else None
            if old == text:
                continue
            if kind == "ir" and old is not None and fn.__name__ in render.SHARED_IR:
                print(
                    f"note: shared IR of {fn.__name__} changed on Python {render.VERSION}; "
                    "rerun on the other versions and check they agree"
                )
                conflicts += 1
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            changed += 1
            print(f"wrote {path.relative_to(ROOT)}")
    print(f"Python {render.VERSION}: {changed} golden file(s) updated")
    return 1 if conflicts else 0


if __name__ == "__main__":
    sys.exit(main())
