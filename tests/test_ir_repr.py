"""Ops share one ``__repr__`` (``Op.__repr__``) instead of one compiled per class at
import: it must print what the dataclass-generated one would."""

import dataclasses

import pytest

from cujit import ir
from cujit.diagnostics import Loc
from cujit.ir.core import Op, Value


def _instance(cls):
    # every field a distinct value (frozen dataclasses do not check types)
    values = {}
    for k, f in enumerate(dataclasses.fields(cls)):
        if f.name == "loc":
            values[f.name] = Loc("kernel.py", 3 + k)
        else:
            values[f.name] = Value(k, None) if k % 2 else (k, f"x{k}")
    return cls(**values), values


@pytest.mark.parametrize("cls", ir.OPS, ids=lambda c: c.__name__)
def test_an_op_prints_as_its_dataclass_would(cls):
    assert cls.__repr__ is Op.__repr__  # declared repr=False, sharing the base's
    op, values = _instance(cls)
    reference = dataclasses.dataclass(frozen=True, kw_only=True)(
        type(cls.__name__, (cls,), {"__qualname__": cls.__qualname__})
    )
    assert repr(op) == repr(reference(**values))
    assert cls.__name__ in repr(op) and "loc=" in repr(op)


def test_a_field_hidden_from_repr_stays_hidden():
    @dataclasses.dataclass(frozen=True, kw_only=True, repr=False)
    class Marked(Op):
        shown: int
        hidden: int = dataclasses.field(default=0, repr=False)

    text = repr(Marked(loc=Loc("k.py", 1), shown=5, hidden=7))
    assert "shown=5" in text and "hidden=" not in text
