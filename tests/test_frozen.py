"""``cujit.frozen.frozen`` against ``dataclasses.dataclass(frozen=True)``, and
``cujit.frozen.mutable`` against ``dataclasses.dataclass``: each class below is made
both ways from the same body, and the two must behave alike."""

from __future__ import annotations

import copy
import dataclasses
import importlib
import inspect
import pickle
import pkgutil
import sys

import pytest

import cujit
from cujit.frozen import _frozen_setattr, frozen, mutable


def twins(body, **kw):
    """(the class made by dataclass(frozen=True, **kw), the one made by frozen(**kw))
    from the same class body (a function that defines and returns the class)."""
    return dataclasses.dataclass(frozen=True, **kw)(body()), frozen(**kw)(body())


def point():
    class Point:
        """A point."""

        x: int
        y: int = 2
        tags: list = dataclasses.field(default_factory=list, compare=False)
        note: str = dataclasses.field(default="", repr=False)

    return Point


def op():
    class Op:
        """An op."""

        loc: str
        result: object = None
        args: tuple = ()

    return Op


def with_post_init():
    class Ranged:
        """Checks itself."""

        lo: int
        hi: int

        def __post_init__(self):
            if self.lo > self.hi:
                raise ValueError("empty range")
            object.__setattr__(self, "size", self.hi - self.lo)

    return Ranged


def with_own_hash():
    class Keyed:
        """Hashed by name alone."""

        name: str
        value: int = 0

        def __hash__(self):
            return hash(self.name)

    return Keyed


def with_own_eq():
    class Loose:
        """Equal to anything with the same name."""

        name: str

        def __eq__(self, other):
            return getattr(other, "name", None) == self.name

    return Loose


def no_fields():
    class Empty:
        """Nothing."""

    return Empty


def named_self():
    class Odd:
        """A field called self."""

        self: int
        other: int = 1

    return Odd


BODIES = [
    (point, {}, dict(x=1, tags=[1]), dict(x=1, y=3, note="n")),
    (op, {"kw_only": True}, dict(loc="a"), dict(loc="a", args=(1, 2))),
    (op, {"kw_only": True, "repr": False}, dict(loc="a"), dict(loc="b")),
    (with_post_init, {}, dict(lo=1, hi=4), dict(lo=0, hi=4)),
    (with_own_hash, {}, dict(name="a"), dict(name="a", value=1)),
    (with_own_eq, {}, dict(name="a"), dict(name="b")),
    (no_fields, {}, {}, {}),
    (named_self, {}, {"self": 1}, {"self": 2, "other": 3}),
    (point, {"eq": False}, dict(x=1), dict(x=1)),
]


@pytest.mark.parametrize(("body", "kw", "a", "b"), BODIES)
def test_same_as_a_frozen_dataclass(body, kw, a, b):
    real, ours = twins(body, **kw)
    assert parameters(ours) == parameters(real)
    assert ours.__match_args__ == real.__match_args__
    assert [f.name for f in dataclasses.fields(ours)] == [f.name for f in dataclasses.fields(real)]
    assert dataclasses.is_dataclass(ours)
    for name in ("init", "repr", "eq", "frozen", "order", "unsafe_hash"):
        assert getattr(ours.__dataclass_params__, name) == getattr(real.__dataclass_params__, name)
    for args in (a, b):
        r, o = real(**args), ours(**args)
        assert vars(o) == vars(r)
        assert dataclasses.asdict(o) == dataclasses.asdict(r)
        if "repr" not in kw:  # a class's own repr is the same text, under its own name
            assert repr(o) == repr(r)
        assert (o == ours(**args)) == (r == real(**args))
        if type(r).__hash__ is not None and kw.get("eq", True):
            assert hash(o) == hash(ours(**args))
            assert hash(o) == hash(r)  # the same number: hash of the compared fields' tuple
    ra, rb, oa, ob = real(**a), real(**b), ours(**a), ours(**b)
    assert (oa == ob) == (ra == rb)
    assert (oa != ob) == (ra != rb)
    assert oa != object()


@pytest.mark.parametrize(("body", "kw", "a", "b"), BODIES)
def test_frozen_replace_copy_pickle(body, kw, a, b):
    real, ours = twins(body, **kw)
    obj = ours(**a)
    for name in [f.name for f in dataclasses.fields(ours)] + ["other_attribute"]:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, name, 1)
        with pytest.raises(dataclasses.FrozenInstanceError):
            delattr(obj, name)
    changed = dataclasses.replace(obj, **b)
    assert type(changed) is ours
    assert vars(changed) == vars(dataclasses.replace(real(**a), **b))
    assert vars(copy.copy(obj)) == vars(obj)
    globals()["_Pickled"] = ours  # pickle finds a class by its module and name
    ours.__qualname__ = "_Pickled"
    assert vars(pickle.loads(pickle.dumps(obj))) == vars(obj)


@pytest.mark.parametrize(("body", "kw", "a", "b"), BODIES)
def test_mutable_same_as_a_dataclass(body, kw, a, b):
    real, ours = dataclasses.dataclass(**kw)(body()), mutable(**kw)(body())
    assert parameters(ours) == parameters(real)
    assert ours.__match_args__ == real.__match_args__
    assert [f.name for f in dataclasses.fields(ours)] == [f.name for f in dataclasses.fields(real)]
    for name in ("init", "repr", "eq", "frozen", "order", "unsafe_hash"):
        assert getattr(ours.__dataclass_params__, name) == getattr(real.__dataclass_params__, name)
    assert (ours.__hash__ is None) == (real.__hash__ is None)
    for args in (a, b):
        r, o = real(**args), ours(**args)
        assert vars(o) == vars(r)
        if "repr" not in kw:
            assert repr(o) == repr(r)
        assert (o == ours(**args)) == (r == real(**args))
        if real.__hash__ is not None and kw.get("eq", True):
            assert hash(o) == hash(r)
        for f in dataclasses.fields(ours):  # a field may be assigned, as in a dataclass
            setattr(o, f.name, 7)
            setattr(r, f.name, 7)
        assert vars(o) == vars(r)
        assert (o == ours(**args)) == (r == real(**args))
    ra, rb, oa, ob = real(**a), real(**b), ours(**a), ours(**b)
    assert (oa == ob) == (ra == rb)
    assert vars(dataclasses.replace(oa, **b)) == vars(dataclasses.replace(ra, **b))
    assert vars(copy.copy(oa)) == vars(oa)


def test_mutable_refuses_a_frozen_base():
    @frozen
    class Base:
        """Frozen."""

        a: int

    with pytest.raises(TypeError, match="cannot inherit non-frozen dataclass from a frozen"):

        @mutable
        class Child(Base):
            b: int = 0

    @mutable
    class Plain:
        """A mutable base."""

        a: int

    @mutable
    class Sub(Plain):
        """Its subclass."""

        b: int = 1

    s = Sub(1)
    s.a, s.b = 3, 4
    assert (s.a, s.b) == (3, 4) and s == Sub(3, 4) and Sub.__hash__ is None


def test_errors_as_dataclasses_gives_them():
    with pytest.raises(ValueError, match="empty range"):
        frozen(with_post_init())(lo=5, hi=1)
    with pytest.raises(TypeError, match="missing 1 required"):
        frozen(point())()
    with pytest.raises(TypeError, match="takes 1 positional argument"):
        frozen(kw_only=True)(op())("positional")
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):

        @frozen
        class Bad:
            a: int = 1
            b: int

    with pytest.raises(TypeError, match="cannot overwrite attribute __setattr__"):

        @frozen
        class Settable:
            a: int

            def __setattr__(self, name, value):
                pass


def test_inheritance():
    @frozen(kw_only=True, repr=False)
    class Base:
        """Base."""

        loc: str

        def __repr__(self):
            return f"<{type(self).__name__} {self.loc}>"

    @frozen(kw_only=True, repr=False)
    class Child(Base):
        """Child."""

        value: int

    class Plain(Child):
        """Not a dataclass: may keep attributes of its own."""

    c = Child(loc="l", value=1)
    assert [f.name for f in dataclasses.fields(Child)] == ["loc", "value"]
    assert repr(c) == "<Child l>"
    assert c == Child(loc="l", value=1) and c != Child(loc="l", value=2)
    assert c != Base(loc="l")  # not the same class: dataclasses' rule
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.loc = "m"
    p = Plain(loc="l", value=1)
    p.extra = 5  # a plain subclass may set what is not a field, as with dataclasses
    assert p.extra == 5
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.value = 2
    # dataclasses' own rules about frozen bases hold for frozen's classes
    with pytest.raises(TypeError, match="cannot inherit non-frozen dataclass from a frozen"):

        @dataclasses.dataclass
        class Mutable(Child):
            more: int = 0

    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Real(Child):
        more: int = 0

    r = Real(loc="l", value=1, more=2)
    assert r == Real(loc="l", value=1, more=2) and hash(r) == hash(Real(loc="l", value=1, more=2))
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.value = 3
    params = Child.__dataclass_params__
    assert (params.init, params.repr, params.eq, params.frozen) == (True, False, True, True)


def _cujit_frozen_classes() -> list[type]:
    """Every class of cujit's that ``frozen`` made (the whole package imported)."""
    for info in pkgutil.walk_packages(cujit.__path__, "cujit."):
        if info.name.startswith(("cujit.dask", "cujit.__main__")):
            continue
        try:
            importlib.import_module(info.name)
        except ImportError:  # an optional dependency this machine lacks
            continue
    found = []
    for name, module in list(sys.modules.items()):
        if not name.startswith("cujit"):
            continue
        for value in vars(module).values():
            if isinstance(value, type) and value.__dict__.get("__setattr__") is _frozen_setattr:
                found.append(value)
    return list(dict.fromkeys(found))


def test_every_cujit_class_has_the_dataclass_signature():
    """Each class cujit makes with ``frozen`` has the ``__init__`` signature a frozen
    dataclass with the same fields would have."""
    classes = _cujit_frozen_classes()
    assert len(classes) > 60  # the IR's ops, the types, options...
    for cls in classes:
        fields = dataclasses.fields(cls)
        spec = []
        for f in fields:
            kw = {"init": f.init, "repr": f.repr, "compare": f.compare, "kw_only": f.kw_only}
            if f.default is not dataclasses.MISSING:
                kw["default"] = f.default
            if f.default_factory is not dataclasses.MISSING:
                kw["default_factory"] = f.default_factory
            spec.append((f.name, f.type, dataclasses.field(**kw)))
        twin = dataclasses.make_dataclass(cls.__name__, spec, frozen=True)
        assert parameters(cls) == parameters(twin), cls
        assert cls.__match_args__ == twin.__match_args__, cls


def parameters(cls) -> list[tuple]:
    """``cls``'s ``__init__`` parameters: name, kind and default (the annotations
    aside: frozen's ``__init__`` carries none)."""
    return [(p.name, p.kind, repr(p.default)) for p in inspect.signature(cls).parameters.values()]
