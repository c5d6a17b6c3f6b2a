"""Every ``CUJIT_*`` environment variable, declared once with its type and default.

Only this module reads ``os.environ``; stages receive options as arguments.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Knob:
    name: str
    kind: type
    default: object
    doc: str

    def get(self):
        raw = os.environ.get(self.name)
        if raw is None or raw == "":
            return self.default
        if self.kind is bool:
            return raw.strip().lower() not in ("0", "false", "no", "off")
        if self.kind is tuple:  # "9.0" or "90" -> (9, 0)
            text = raw.replace("sm_", "").replace("compute_", "")
            if "." in text:
                major, minor = text.split(".", 1)
                return (int(major), int(minor))
            return (int(text[:-1]), int(text[-1]))
        return self.kind(raw)


SHOW_INTERNALS = Knob("CUJIT_SHOW_INTERNALS", bool, False,
                      "show cujit's internal traceback behind compile errors (for bug reports)")
DEBUG = Knob("CUJIT_DEBUG", bool, False, "compile every kernel as if jit(debug=True)")
ARCH = Knob("CUJIT_ARCH", tuple, None,
            "compute capability to compile for when no GPU is present (default 9.0)")
VERIFY = Knob("CUJIT_VERIFY", bool, False, "run the IR verifier between all stages")

KNOBS = (SHOW_INTERNALS, DEBUG, ARCH, VERIFY)
