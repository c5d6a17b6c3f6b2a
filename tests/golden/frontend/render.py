"""What the frontend golden files hold, and where: shared by
tests/test_{bytecode,cfg,irgen}.py and tools/update_golden_frontend.py.

Layout (``V`` is the running Python's ``3.11``/``3.12``/``3.13``):

    V/<case>.bytecode   decode() listing: per version
    V/<case>.cfg        build_cfg() listing: per version
    ir/<case>.ir        build_ir() listing, identical on every version
    V/<case>.ir         build_ir() listing, for cases where CPython itself
                        compiles differently (3.12 duplicates small exits)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import cases

from cujit.bytecode import decode, format_bytecode
from cujit.cfg import build_cfg, format_cfg
from cujit.ir import format_function
from cujit.irgen import build_ir

ROOT = Path(__file__).resolve().parent
VERSION = f"{sys.version_info[0]}.{sys.version_info[1]}"

# Cases whose IR must print the same on 3.11, 3.12 and 3.13: the point of
# normalising bytecode in stage 1.
SHARED_IR = (
    "straight_line",
    "augmented",
    "tuples",
    "tuple_index",
    "atomic_call",
    "globals_and_closure",
    "closure_const",
    "maybe_undefined",
    "return_none",
    "assert_and_raise",
    "assert_computed_message",
    "for_ranges",
    "nested_loops",
)


def render(fn) -> dict[str, str]:
    """{kind: text} for one case function."""
    bc = decode(fn)
    cfg = build_cfg(bc)
    return {
        "bytecode": format_bytecode(bc),
        "cfg": format_cfg(cfg),
        "ir": format_function(build_ir(cfg)),
    }


# The interpreters the per-version listings were generated with.  CPython's patch
# releases may move an instruction's recorded column (3.12.1 and later 3.12s place
# an assert's raise differently), so on another patch release the listings are
# compared with their `# line:col` annotations removed: structure still must match.
GENERATED_ON = {"3.11": (3, 11, 7), "3.12": (3, 12, 1), "3.13": (3, 13, 0)}
_LOC = re.compile(r"\s*# \d+:\d+")


def same_listing(actual: str, expected: str) -> bool:
    if tuple(sys.version_info[:3]) == GENERATED_ON.get(VERSION):
        return actual == expected
    return _LOC.sub("", actual) == _LOC.sub("", expected)


def golden_path(name: str, kind: str) -> Path:
    if kind == "ir" and name in SHARED_IR:
        return ROOT / "ir" / f"{name}.ir"
    return ROOT / VERSION / f"{name}.{kind}"


def all_cases():
    return cases.CASES
