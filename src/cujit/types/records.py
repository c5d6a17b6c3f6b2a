"""Record types: NumPy structured dtypes as kernel types.

A ``Record`` lists its fields with their byte offsets and its total size exactly as
NumPy lays the dtype out (``align=True`` or packed), so a kernel addresses the same
bytes the host array holds.  A field is a scalar, a nested record, or a fixed-shape
array of either (``NestedArray``: ``('h', np.float32, (3, 2))``).

In a kernel a record value is a reference to its bytes (an element of a record
array, a record argument, a nested record field): reading a field loads from them,
storing a field writes them, as numba does.
"""

from __future__ import annotations

from cujit.frozen import frozen
from cujit.types.core import Type


@frozen(repr=False)
class NestedArray(Type):
    """A record field holding a fixed-shape C-ordered array of ``dtype``."""

    dtype: Type
    shape: tuple[int, ...]

    __hash__ = Type._cached_hash

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def itemsize(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n * self.dtype.itemsize

    def __str__(self) -> str:
        return f"nestedarray({self.dtype}, {self.shape})"


@frozen(repr=False)
class CharSeq(Type):
    """A fixed-size string: NumPy's ``S<count>`` (bytes) or ``U<count>`` (UCS-4 code
    points, four bytes each), zero-padded.  In a kernel, like a record, a reference to
    its bytes: constants and strings of the same type can be stored into it."""

    kind: str  # 'S' or 'U'
    count: int

    __hash__ = Type._cached_hash

    @property
    def itemsize(self) -> int:
        return self.count * (4 if self.kind == "U" else 1)

    @property
    def size(self) -> int:
        return self.itemsize

    @property
    def name(self) -> str:
        return str(self)

    @property
    def dtype(self):
        import numpy as np

        return np.dtype(f"{self.kind}{self.count}")

    def encode(self, value: str | bytes) -> bytes | None:
        """``value``'s bytes as stored (truncated, zero-padded), or None if it does not
        convert (a non-ASCII str into bytes)."""
        try:
            if self.kind == "S":
                data = value.encode("ascii") if isinstance(value, str) else bytes(value)
            else:
                text = value.decode("ascii") if isinstance(value, bytes) else value
                data = text.encode("utf-32-le")
        except UnicodeError:
            return None
        return data[: self.itemsize].ljust(self.itemsize, b"\0")

    def __str__(self) -> str:
        return f"{'bytes' if self.kind == 'S' else 'unicode'}[{self.count}]"


@frozen(repr=False)
class Record(Type):
    """A structured dtype: ``fields`` is ``((name, type, offset), ...)`` in NumPy's
    order, ``size`` its itemsize in bytes, ``aligned`` whether NumPy aligned it."""

    fields: tuple[tuple[str, Type, int], ...]
    size: int
    aligned: bool = False
    # The extension type (``cujit.extending``) stored as this record: its struct
    # model's members are the fields, read through the attributes it declares.
    origin: Type | None = None

    __hash__ = Type._cached_hash
    kind = "V"

    @property
    def itemsize(self) -> int:
        return self.size

    @property
    def name(self) -> str:
        return str(self)

    def __getitem__(self, spec):
        """``rec[:]``: the type of a 1-d array of these records (numba's spelling)."""
        from cujit.types.core import Array

        return Array.from_slices(self, spec)

    def field(self, name: str) -> tuple[Type, int] | None:
        """The type and offset of field ``name``, or None if there is none."""
        for n, t, off in self.fields:
            if n == name:
                return t, off
        return None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(n for n, _, _ in self.fields)

    @property
    def alignment(self) -> int:
        """The largest alignment every element of an array of this record keeps, given
        an aligned base: what a field's access may assume (a power of two, at most 16)."""
        return _low_bit(self.size | 16)

    @property
    def dtype(self):
        """The NumPy dtype (built once)."""
        dt = self.__dict__.get("_np_dtype")
        if dt is None:
            import numpy as np

            dt = np.dtype(
                {
                    "names": list(self.names),
                    "formats": [_np_format(t) for _, t, _ in self.fields],
                    "offsets": [off for _, _, off in self.fields],
                    "itemsize": self.size,
                },
                align=self.aligned,
            )
            object.__setattr__(self, "_np_dtype", dt)
        return dt

    def __str__(self) -> str:
        inner = ", ".join(f"{n}: {t} @{off}" for n, t, off in self.fields)
        if self.origin is not None:
            return f"{self.origin}({inner}; {self.size})"
        return f"Record({inner}; {self.size}{'; aligned' if self.aligned else ''})"


def _low_bit(n: int) -> int:
    return n & -n


def field_alignment(rec: Record, offset: int, natural: int) -> int:
    """What a load or store of a field at ``offset`` of natural alignment ``natural``
    may promise: no more than the record's elements and the offset keep."""
    return max(1, min(natural, _low_bit(offset | rec.alignment)))


def _np_format(t: Type):
    if isinstance(t, NestedArray):
        return (_np_format(t.dtype), t.shape)
    return t.dtype


def from_structured(dt, scalar_of) -> Record:
    """The Record of structured NumPy dtype ``dt``; ``scalar_of`` converts a field's
    plain dtype (it raises for what kernels cannot hold)."""
    fields = []
    for name in dt.names:
        fdt, offset = dt.fields[name][:2]
        fields.append((name, _field_type(fdt, scalar_of), int(offset)))
    return Record(tuple(fields), int(dt.itemsize), bool(dt.isalignedstruct))


def _field_type(fdt, scalar_of) -> Type:
    if fdt.subdtype is not None:
        base, shape = fdt.subdtype
        return NestedArray(_field_type(base, scalar_of), tuple(int(s) for s in shape))
    if fdt.names is not None:
        return from_structured(fdt, scalar_of)
    return scalar_of(fdt)
