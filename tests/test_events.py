"""cujit.events: observers see every kernel compile and launch; a failing observer
changes nothing of what the program does."""

from __future__ import annotations

import numpy as np

from cujit import cuda, events


def test_observers_see_compiles_and_launches_and_cannot_break_them():
    seen = []

    def broken(kind, name, target):
        raise RuntimeError("an observer's bug")

    def record(kind, name, target):
        seen.append((kind, name, target))

    events.subscribe(broken)
    events.subscribe(record)
    try:

        @cuda.jit(target="cpu", coarsen=False)  # its variant's compile: test_coarsen_variant
        def add_one(a):
            i = cuda.grid(1)
            if i < a.size:
                a[i] += 1

        a = np.arange(40, dtype=np.int64)
        add_one[2, 32](a)
        add_one[2, 32](a)  # compiled once, launched twice
        b = np.arange(8, dtype=np.float32)
        add_one[1, 8](b)  # a new argument type: a second compile
    finally:
        events.unsubscribe(broken)
        events.unsubscribe(record)
    np.testing.assert_array_equal(a, np.arange(40) + 2)
    np.testing.assert_array_equal(b, np.arange(8, dtype=np.float32) + 1)
    kinds = [k for k, _, _ in seen]
    assert kinds == ["compile", "launch", "launch", "compile", "launch"]
    assert all(t == "cpu" and n.endswith("add_one") for _, n, t in seen)
    assert broken not in events._callbacks and record not in events._callbacks
