"""numba's ``_type_annotation.typemap`` on a kernel's specialisation: each local
variable's type, a library's struct type shown as itself."""

from __future__ import annotations

from cujit import cuda, extending, float32, int32, types, void
from cujit.type_annotation import annotate
from cujit.types import Array, Tuple, int64


class PointType(types.Type):
    def __init__(self):
        super().__init__(name="PointType")


pair_type = PointType()


@extending.register_model(PointType)
class _PointModel(extending.models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("x", types.float32), ("y", types.float32)])


def _locals(x, y):
    acc = cuda.local.array(4, dtype=float32)
    n = x.shape[0]
    acc[0] = y[0]
    x[0] = int32(acc[0]) + int32(n)


def test_typemap_names_arguments_and_locals():
    k = cuda.jit(void(int32[::1], float32[:]), target="cpu")(_locals)
    (spec,) = k.overloads.values()
    tm = spec._type_annotation.typemap
    assert tm["x"] == Array(int32, 1, "C")
    assert tm["y"] == Array(float32, 1, "A")
    assert tm["acc"] == Array(float32, 1, "C")
    assert tm["n"] == int64
    assert not isinstance(tm["n"], Tuple)


def _pairs(x):
    s = cuda.shared.array(10, dtype=pair_type)
    s[0] = x[0]
    x[0] = s[0]


def test_typemap_shows_extension_types_as_themselves():
    k = cuda.jit(void(pair_type[::1]), target="cpu")(_pairs)
    (spec,) = k.overloads.values()
    tm = spec._type_annotation.typemap
    assert tm["s"].dtype == pair_type and tm["x"].dtype == pair_type
    assert tm["s"].layout == "C" and tm["s"].ndim == 1


def test_no_typed_ir_gives_an_empty_typemap():
    assert annotate(None).typemap == {}
