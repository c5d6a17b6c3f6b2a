"""numba's index files read as data: the pickle format parsed, never run.

A kernel's ``.nbi`` index is numba's (``layout``): two pickles, numba's version and the
pair (source stamp, table).  ``pickle.load`` would run whatever a planted file asks,
so cujit never calls it: ``read`` walks the opcodes (``pickletools.genops``, a parser
that executes nothing) with a small stack machine of its own.  Plain values become
Python values (None, bools, ints, floats, str, bytes, tuples, lists, dicts); anything
that would name or call a global becomes an inert node that only records what it names
(``Global``, ``Call``, ``Build``): no module is imported and nothing is called, so
numba's own keys (its types are rebuilt by calls) survive a rewrite as they were, and a
planted ``os.system`` is a tuple of strings.  ``write`` puts the same values back in
the pickle format (protocol 4) for numba's reader.
"""

from __future__ import annotations

import io
import struct

MAX_BYTES = 16 << 20  # an index larger than this is not one
MAX_DEPTH = 200


class Node(tuple):
    """A value that needs code to be built; only a record of what it names."""

    __slots__ = ()
    TAG = ""

    def __new__(cls, *fields):
        return super().__new__(cls, (cls.TAG, *fields))

    def __repr__(self):
        return f"{type(self).__name__}{tuple(self[1:])!r}"


class Global(Node):
    """A module-level name (pickle's GLOBAL): ``(module, name)``, never looked up."""

    __slots__ = ()
    TAG = "global"


class Call(Node):
    """``func(*args)`` (REDUCE) or ``cls.__new__(cls, *args)`` (NEWOBJ), never made."""

    __slots__ = ()
    TAG = "call"


class New(Node):
    __slots__ = ()
    TAG = "new"


class Build(Node):
    """``obj.__setstate__(state)`` (BUILD), never applied."""

    __slots__ = ()
    TAG = "build"


class FrozenList(Node):
    __slots__ = ()
    TAG = "list"


class FrozenDict(Node):
    """A dict inside a key (keys must hash): its ``(key, value)`` pairs in order."""

    __slots__ = ()
    TAG = "dict"


def globals_named(value) -> set[tuple[str, str]]:
    """The ``(module, name)`` of every global ``value`` names."""
    found: set = set()
    seen: set = set()
    todo = [value]
    while todo:
        item = todo.pop()
        if not isinstance(item, (tuple, list, dict)) or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, Global):
            found.add((item[1], item[2]))
        elif isinstance(item, dict):
            todo.extend(item.keys())
            todo.extend(item.values())
        else:
            todo.extend(item)
    return found


# -- reading -----------------------------------------------------------------------------


class _List:
    """A list being built (its identity is its hash until it is frozen)."""

    __slots__ = ("items",)

    def __init__(self):
        self.items: list = []


class _Dict:
    __slots__ = ("items",)

    def __init__(self):
        self.items: list = []


_MARK = object()

_PLAIN_ARG = {
    "NONE": None,
    "NEWTRUE": True,
    "NEWFALSE": False,
}
_VALUE_OPS = {  # opcodes whose argument is the value pushed
    "BININT",
    "BININT1",
    "BININT2",
    "LONG1",
    "LONG4",
    "LONG",
    "INT",
    "BINFLOAT",
    "FLOAT",
    "SHORT_BINUNICODE",
    "BINUNICODE",
    "BINUNICODE8",
    "UNICODE",
    "SHORT_BINBYTES",
    "BINBYTES",
    "BINBYTES8",
    "SHORT_BINSTRING",
    "BINSTRING",
    "STRING",
}
_MEMO_PUT = {"BINPUT", "LONG_BINPUT", "PUT"}
_MEMO_GET = {"BINGET", "LONG_BINGET", "GET"}
_SKIP = {"PROTO", "FRAME"}


def read_all(data: bytes) -> list:
    """Every pickle in ``data``, back to back, as data (ValueError where one is not
    well formed or uses an opcode this reader does not take)."""
    if len(data) > MAX_BYTES:
        raise ValueError("too large for an index")
    f = io.BytesIO(data)
    out = []
    while f.tell() < len(data):
        out.append(_one(f))
    return out


def _one(f: io.BytesIO):
    import pickletools  # a parser: it reads opcodes and their arguments, and runs nothing

    stack: list = []
    memo: dict = {}
    try:
        for op, arg, _pos in pickletools.genops(f):
            name = op.name
            if name in _SKIP:
                continue
            if name == "STOP":
                if len(stack) != 1:
                    raise ValueError("a pickle that does not end with one value")
                return _freeze(stack.pop(), {}, 0)
            _step(name, arg, stack, memo)
    except (ValueError, IndexError, KeyError, TypeError, struct.error) as exc:
        raise ValueError(f"not a data pickle ({exc})") from None
    raise ValueError("a pickle without its end")


def _pop_mark(stack: list) -> list:
    i = len(stack) - 1
    while stack[i] is not _MARK:
        i -= 1
        if i < 0:
            raise ValueError("no mark")
    items = stack[i + 1 :]
    del stack[i:]
    return items


def _step(name: str, arg, stack: list, memo: dict) -> None:  # noqa: C901 -- one branch per pickle opcode
    if name in _PLAIN_ARG:
        stack.append(_PLAIN_ARG[name])
    elif name in _VALUE_OPS:
        if isinstance(arg, str) and name in ("SHORT_BINSTRING", "BINSTRING", "STRING"):
            arg = arg.encode("latin-1")
        stack.append(arg)
    elif name == "MARK":
        stack.append(_MARK)
    elif name == "MEMOIZE":
        memo[len(memo)] = stack[-1]
    elif name in _MEMO_PUT:
        memo[arg] = stack[-1]
    elif name in _MEMO_GET:
        stack.append(memo[arg])
    elif name == "POP":
        stack.pop()
    elif name == "POP_MARK":
        _pop_mark(stack)
    elif name == "DUP":
        stack.append(stack[-1])
    elif name == "EMPTY_TUPLE":
        stack.append(())
    elif name in ("TUPLE1", "TUPLE2", "TUPLE3"):
        n = int(name[-1])
        items = tuple(stack[-n:])
        del stack[-n:]
        stack.append(items)
    elif name == "TUPLE":
        stack.append(tuple(_pop_mark(stack)))
    elif name == "EMPTY_LIST":
        stack.append(_List())
    elif name == "LIST":
        made = _List()
        made.items = _pop_mark(stack)
        stack.append(made)
    elif name == "APPEND":
        item = stack.pop()
        _target(stack[-1], _List).items.append(item)
    elif name == "APPENDS":
        items = _pop_mark(stack)
        _target(stack[-1], _List).items.extend(items)
    elif name == "EMPTY_DICT":
        stack.append(_Dict())
    elif name == "DICT":
        items = _pop_mark(stack)
        made = _Dict()
        made.items = list(zip(items[::2], items[1::2], strict=True))
        stack.append(made)
    elif name == "SETITEM":
        v = stack.pop()
        k = stack.pop()
        _target(stack[-1], _Dict).items.append((k, v))
    elif name == "SETITEMS":
        items = _pop_mark(stack)
        _target(stack[-1], _Dict).items.extend(zip(items[::2], items[1::2], strict=True))
    elif name == "GLOBAL":
        module, _, qualname = str(arg).partition(" ")
        stack.append(Global(module, qualname))
    elif name == "STACK_GLOBAL":
        qualname = stack.pop()
        module = stack.pop()
        if not isinstance(module, str) or not isinstance(qualname, str):
            raise ValueError("a global that is not named by strings")
        stack.append(Global(module, qualname))
    elif name == "REDUCE":
        args = stack.pop()
        stack[-1] = Call(stack[-1], args)
    elif name == "NEWOBJ":
        args = stack.pop()
        stack[-1] = New(stack[-1], args)
    elif name == "BUILD":
        state = stack.pop()
        stack[-1] = Build(stack[-1], state)
    else:
        raise ValueError(f"opcode {name} is not taken")


def _target(value, kind):
    if not isinstance(value, kind):
        raise ValueError("an item added to what is not a container")
    return value


_MAKING = object()


def _freeze(value, seen: dict, depth: int):
    """``value`` with every container made: lists and dicts as Python's, except within
    a dict's key or a node, where they must hash (``FrozenList``, ``FrozenDict``).  A value
    the pickle refers to twice is made once; one that holds itself is refused."""
    return _make(value, seen, depth, hashable=False)


def _make(value, seen: dict, depth: int, hashable: bool):
    if value is None or isinstance(value, (bool, int, float, str, bytes)):
        return value
    if depth > MAX_DEPTH:
        raise ValueError("nested too deeply")
    if value is _MARK:
        raise ValueError("a mark left on the stack")
    key = (id(value), hashable)
    made = seen.get(key)
    if made is _MAKING:
        raise ValueError("a value that holds itself")
    if made is not None:
        return made
    seen[key] = _MAKING
    made = _made(value, seen, depth, hashable)
    seen[key] = made
    return made


def _made(value, seen: dict, depth: int, hashable: bool):
    if isinstance(value, _List):
        items = [_make(v, seen, depth + 1, hashable) for v in value.items]
        return FrozenList(*items) if hashable else items
    if isinstance(value, _Dict):
        pairs = [
            (_make(k, seen, depth + 1, True), _make(v, seen, depth + 1, hashable))
            for k, v in value.items
        ]
        return FrozenDict(*pairs) if hashable else dict(pairs)
    if isinstance(value, Node):
        return type(value)(*(_make(v, seen, depth + 1, True) for v in value[1:]))
    if isinstance(value, tuple):
        return tuple(_make(v, seen, depth + 1, hashable) for v in value)
    raise ValueError(f"not data: {type(value).__name__}")


# -- writing -----------------------------------------------------------------------------


def write(value) -> bytes:
    """``value`` (what ``read_all`` gives, or plain data) as one pickle (protocol 4)."""
    out = bytearray(b"\x80\x04")
    _emit(value, out, 0)
    out += b"."
    return bytes(out)


def _emit(value, out: bytearray, depth: int) -> None:  # noqa: C901 -- one branch per value type
    if depth > MAX_DEPTH or len(out) > MAX_BYTES:
        raise ValueError("nested too deeply, or too large for an index")
    if value is None:
        out += b"N"
    elif value is True:
        out += b"\x88"
    elif value is False:
        out += b"\x89"
    elif isinstance(value, int):
        if 0 <= value < 256:
            out += b"K" + bytes([value])
        elif 0 <= value < 65536:
            out += b"M" + struct.pack("<H", value)
        elif -(2**31) <= value < 2**31:
            out += b"J" + struct.pack("<i", value)
        else:
            raw = value.to_bytes((value.bit_length() + 8) // 8, "little", signed=True)
            if len(raw) > 255:
                raise ValueError("an integer too large for an index")
            out += b"\x8a" + bytes([len(raw)]) + raw
    elif isinstance(value, float):
        out += b"G" + struct.pack(">d", value)
    elif isinstance(value, str):
        raw = value.encode("utf-8", "surrogatepass")
        out += b"X" + struct.pack("<I", len(raw)) + raw
    elif isinstance(value, (bytes, bytearray)):
        out += b"B" + struct.pack("<I", len(value)) + bytes(value)
    elif isinstance(value, Global):
        _emit(value[1], out, depth + 1)
        _emit(value[2], out, depth + 1)
        out += b"\x93"
    elif isinstance(value, (Call, New, Build)):
        _emit(value[1], out, depth + 1)
        _emit(value[2], out, depth + 1)
        out += {Call: b"R", New: b"\x81", Build: b"b"}[type(value)]
    elif isinstance(value, FrozenList):
        _emit(list(value[1:]), out, depth)
    elif isinstance(value, FrozenDict):
        _emit(dict(value[1:]), out, depth)
    elif isinstance(value, tuple):
        if not value:
            out += b")"
            return
        out += b"("
        for item in value:
            _emit(item, out, depth + 1)
        out += b"t"
    elif isinstance(value, list):
        out += b"]"
        if value:
            out += b"("
            for item in value:
                _emit(item, out, depth + 1)
            out += b"e"
    elif isinstance(value, dict):
        out += b"}"
        if value:
            out += b"("
            for k, v in value.items():
                _emit(k, out, depth + 1)
                _emit(v, out, depth + 1)
            out += b"u"
    else:
        raise ValueError(f"not data: {type(value).__name__}")
