"""``@frozen``: a frozen dataclass that is cheaper to create (``@mutable``: a plain one).

``@frozen(kw_only=True, repr=False)`` makes what ``@dataclass(frozen=True,
kw_only=True, repr=False)`` makes: the same ``dataclasses.fields``, the same
``__init__`` signature (defaults, default factories, keyword-only fields,
``__post_init__``), equality and hash over the compared fields, a repr over the
shown ones, ``FrozenInstanceError`` on assignment and deletion, and
``dataclasses.replace``, ``asdict`` and ``__match_args__`` as for any dataclass.

Why not ``dataclass(frozen=True)`` itself: it compiles five to six methods per
class with ``exec`` (``__init__``, ``__eq__``, ``__hash__``, ``__setattr__``,
``__delattr__``, ``__repr__``), about 1 ms a class on CPython 3.11 to 3.13, and
cujit's compiler is made of some ninety such classes (its IR's ops, its types, its
options): a third of the time a process spends importing it.  ``@mutable(...)`` makes
what ``@dataclass(...)`` makes (not frozen: the same methods, ``__hash__`` None where
``eq`` is, ``__init__`` storing each field with a plain assignment) the same way, for
the compiler's working records (inference state, call sites, builders' buffers).  Here
``dataclasses`` still collects the fields (``init=False, eq=False, repr=False``,
the part that compiles nothing), ``__init__`` is the one method compiled per
class, when the class is first used, and the others are shared functions that read a
per-class table.

``__dataclass_params__`` says ``frozen=True`` and the ``init``, ``repr`` and ``eq``
asked for, so a ``@dataclass(frozen=True)`` may extend a class made here and a
plain ``@dataclass`` may not, as with ``dataclasses`` alone.  (While this module
makes a class, its bases read as not frozen to ``dataclasses``, which it asks for a
class without frozenness: that part is this module's.)
"""

from __future__ import annotations

import dataclasses
import reprlib
import threading
from operator import attrgetter

__all__ = ["frozen", "mutable"]

_MISSING = dataclasses.MISSING


class _Factory:
    """The default that stands for "call the field's default factory"."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def frozen(cls=None, /, *, kw_only: bool = False, repr: bool = True, eq: bool = True):  # noqa: A002 - dataclass's own keyword
    """``@dataclass(frozen=True, kw_only=..., repr=..., eq=...)``, made at a quarter
    of the cost (see the module's docstring)."""

    def wrap(cls):
        return _make(cls, kw_only=kw_only, show=repr, eq=eq, freeze=True)

    return wrap if cls is None else wrap(cls)


def mutable(cls=None, /, *, kw_only: bool = False, repr: bool = True, eq: bool = True):  # noqa: A002 - dataclass's own keyword
    """``@dataclass(kw_only=..., repr=..., eq=...)``, made as ``frozen`` makes its
    classes.  A frozen base is refused, as ``dataclasses`` refuses it."""

    def wrap(cls):
        return _make(cls, kw_only=kw_only, show=repr, eq=eq, freeze=False)

    return wrap if cls is None else wrap(cls)


class _Making(threading.local):
    depth = 0  # > 0 while this thread makes a class here


_making = _Making()


class _Params:
    """A class's ``__dataclass_params__``: what ``dataclass(...)`` would have
    recorded, except that a frozen class's ``frozen`` reads False while this module
    makes a frozen subclass (``dataclasses`` refuses a non-frozen class on a frozen
    base, and asked for no frozenness here)."""

    __slots__ = ("_made", "_asked")

    def __init__(self, made, **asked):
        self._made, self._asked = made, asked

    def __getattr__(self, name):
        if name == "frozen":  # a mutable class's reads False
            return self._asked["frozen"] and _making.depth == 0
        return self._asked.get(name, getattr(self._made, name))

    def __repr__(self) -> str:
        shown = ("init", "repr", "eq", "order", "unsafe_hash", "frozen")
        return "_DataclassParams(" + ",".join(f"{k}={getattr(self, k)!r}" for k in shown) + ")"


def _make(cls, *, kw_only: bool, show: bool, eq: bool, freeze: bool):
    own = dict(cls.__dict__)  # what the class body defined, before dataclasses adds to it
    cls = _fields_of(cls, own, kw_only, freeze)
    cls.__dataclass_params__ = _Params(
        cls.__dataclass_params__, init=True, repr=show, eq=eq, frozen=freeze
    )
    fields = dataclasses.fields(cls)
    if "__init__" not in own:
        _check_order(f for f in fields if f.init and not f.kw_only)
        cls.__init__ = _LazyInit(cls, fields, freeze)
    if freeze:
        cls.__setattr__ = _frozen_setattr
        cls.__delattr__ = _frozen_delattr
    if show and "__repr__" not in own:
        cls.__cujit_shown__ = tuple(f.name for f in fields if f.repr)
        cls.__repr__ = _repr
    if eq:
        _compare(cls, own, fields, freeze)
    if not own.get("__doc__"):
        import inspect

        text = str(inspect.signature(cls)).replace(" -> None", "")
        cls.__doc__ = f"{cls.__name__}{text}"
    return cls


def _fields_of(cls, own: dict, kw_only: bool, freeze: bool):
    """``cls`` with its fields collected by ``dataclasses``, which compiles nothing
    with ``init``, ``repr`` and ``eq`` off."""
    if not freeze:  # a frozen base reads as frozen here: dataclasses refuses it in its words
        return dataclasses.dataclass(cls, init=False, repr=False, eq=False, kw_only=kw_only)
    for name in ("__setattr__", "__delattr__"):
        if name in own:
            raise TypeError(f"cannot overwrite attribute {name} in class {cls.__name__}")
    _making.depth += 1
    try:
        return dataclasses.dataclass(cls, init=False, repr=False, eq=False, kw_only=kw_only)
    finally:
        _making.depth -= 1


def _compare(cls, own: dict, fields, freeze: bool) -> None:
    """Equality over the compared fields, and the hash dataclasses would give."""
    compared = tuple(f.name for f in fields if f.compare)
    if len(compared) == 1:  # attrgetter of one name gives the value, not a 1-tuple
        name = compared[0]
        cls.__cujit_key__ = staticmethod(lambda obj: (getattr(obj, name),))
    else:
        cls.__cujit_key__ = staticmethod(attrgetter(*compared) if compared else _no_key)
    if "__eq__" not in own:
        cls.__eq__ = _eq
    # A body that defines __eq__ alone gets __hash__ = None from Python: that is
    # no hash of its own (dataclasses reads it the same way).
    explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
    if not explicit_hash:
        cls.__hash__ = _hash if freeze else None  # a mutable dataclass is unhashable


def _no_key(obj) -> tuple:
    return ()


class _LazyInit:
    """A class's ``__init__`` until it is first looked up (the class's first instance,
    ``inspect.signature``): then compiled by ``_init`` and set on the class in its
    place.  Compiling an ``__init__`` is the larger part of making a class here, and
    most of the classes a process imports make no instance in it (the IR's ops for the
    constructs its kernels do not use).  Two threads that look it up at once compile it
    twice, to the same function."""

    __slots__ = ("_cls", "_fields", "_freeze")

    def __init__(self, cls, fields, freeze: bool):
        self._cls, self._fields, self._freeze = cls, fields, freeze

    def __get__(self, obj, owner=None):
        init = self._cls.__dict__.get("__init__")
        if init is self:
            init = _init(self._cls, self._fields, self._freeze)
            self._cls.__init__ = init
        return init if obj is None else init.__get__(obj, owner)


def _init(cls, fields, freeze: bool):
    """The class's ``__init__``, compiled as ``dataclass(frozen=freeze)`` would compile
    it: one parameter per ``init`` field (the keyword-only ones after ``*``), each
    stored with ``object.__setattr__`` (frozen) or assigned (mutable), then
    ``__post_init__``."""
    self_name = "__cujit_self__" if any(f.name == "self" for f in fields) else "self"
    names = {"__cujit_set__": object.__setattr__, "__cujit_factory__": _FACTORY}
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    for f in fields:
        value = f.name
        if f.default_factory is not _MISSING:
            names[f"__cujit_factory_{f.name}__"] = f.default_factory
            made = f"__cujit_factory_{f.name}__()"
            value = f"{made} if {f.name} is __cujit_factory__ else {f.name}" if f.init else made
        elif not f.init:
            continue  # not set by __init__: its default (if any) is the class attribute
        if f.init:
            (keyword if f.kw_only else positional).append(_param(f, names))
        if freeze:
            body.append(f"__cujit_set__({self_name}, {f.name!r}, {value})")
        else:
            body.append(f"{self_name}.{f.name} = {value}")
    if hasattr(cls, "__post_init__"):
        body.append(f"{self_name}.__post_init__()")
    params = [self_name, *positional, *(["*", *keyword] if keyword else [])]
    source = f"def __init__({', '.join(params)}):\n    " + "\n    ".join(body or ["pass"])
    exec(source, names)  # noqa: S102 - cujit's own classes' field names, as dataclasses does
    init = names["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    return init


def _param(f, names: dict) -> str:
    """``f``'s parameter in ``__init__``: its name, with its default if it has one."""
    if f.default is not _MISSING:
        names[f"__cujit_default_{f.name}__"] = f.default
        return f"{f.name}=__cujit_default_{f.name}__"
    if f.default_factory is not _MISSING:
        return f"{f.name}=__cujit_factory__"
    return f.name


def _check_order(positional) -> None:
    seen_default = False
    for f in positional:
        if f.default is not _MISSING or f.default_factory is not _MISSING:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")


def _owner(cls: type) -> type:
    """The last class in ``cls``'s MRO that ``frozen`` made: what comes after it sets
    and deletes the attributes of a plain subclass."""
    return [c for c in cls.__mro__ if c.__dict__.get("__setattr__") is _frozen_setattr][-1]


def _frozen_setattr(self, name, value):
    cls = type(self)
    if cls.__dict__.get("__setattr__") is _frozen_setattr or name in cls.__dataclass_fields__:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
    super(_owner(cls), self).__setattr__(name, value)  # a plain subclass's own attribute


def _frozen_delattr(self, name):
    cls = type(self)
    if cls.__dict__.get("__setattr__") is _frozen_setattr or name in cls.__dataclass_fields__:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
    super(_owner(cls), self).__delattr__(name)


def _eq(self, other):
    if other.__class__ is self.__class__:
        key = self.__cujit_key__
        return key(self) == key(other)
    return NotImplemented


def _hash(self):
    return hash(self.__cujit_key__(self))


@reprlib.recursive_repr()
def _repr(self):
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__cujit_shown__)
    return f"{self.__class__.__qualname__}({shown})"
