"""The compile options of one kernel specialisation: one frozen dataclass.

Its value is part of every specialisation's identity (and so of the cache key).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cujit import config

DEFAULT_ARCH = (9, 0)


@dataclass(frozen=True)
class Options:
    arch: tuple[int, int] = DEFAULT_ARCH
    opt: int = 3
    fastmath: bool = False
    debug: bool = False
    # Run the IR verifier between stages; CUJIT_VERIFY=1 turns it on for every compile
    # (the knob is read when an Options is made, so the dispatcher's options carry it).
    verify: bool = field(default_factory=config.VERIFY.get)
    target: str = "cuda"  # "cuda" (PTX and cubin) or "cpu" (host code, run in-process)
