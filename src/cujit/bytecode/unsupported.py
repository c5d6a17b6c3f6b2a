"""The Python constructs kernels cannot use, found at decode time.

Each unsupported CPython opcode maps to a short user-facing message; decode
raises ``UnsupportedError`` at the first one, pointing at its source.
"""

from __future__ import annotations

import inspect

from cujit.guards import parameters_message

_TRY = "'try' statements are not supported in kernels"
_WITH = "'with' statements are not supported in kernels"
_GEN = "generators ('yield') are not supported in kernels"
_LIST = "list displays are not supported in kernels (use a tuple)"
_DICT = "dict displays are not supported in kernels"
_SET = "set displays are not supported in kernels"
_COMP = "comprehensions are not supported in kernels"
_FSTR = "f-strings are not supported in kernels"
_DEL = "'del' statements are not supported in kernels"
_STARCALL = "calls with *args or **kwargs are not supported in kernels"
_STAR = "star-unpacking is not supported in kernels"
_IMPORT = "'import' statements are not supported in kernels"
CLASS_MESSAGE = "class definitions are not supported in kernels"

MESSAGES: dict[str, str] = {
    "PUSH_EXC_INFO": _TRY,
    "POP_EXCEPT": _TRY,
    "CHECK_EXC_MATCH": _TRY,
    "RERAISE": _TRY,
    "CHECK_EG_MATCH": _TRY,
    "WITH_EXCEPT_START": _WITH,
    "BEFORE_WITH": _WITH,
    "BEFORE_ASYNC_WITH": _WITH,
    "CLEANUP_THROW": _TRY,
    "YIELD_VALUE": _GEN,
    "RETURN_GENERATOR": _GEN,
    "SEND": _GEN,
    "END_SEND": _GEN,
    "GET_YIELD_FROM_ITER": _GEN,
    "GET_AWAITABLE": _GEN,
    "GET_AITER": _GEN,
    "GET_ANEXT": _GEN,
    "END_ASYNC_FOR": _GEN,
    "ASYNC_GEN_WRAP": _GEN,
    "BUILD_LIST": _LIST,
    "LIST_APPEND": _LIST,
    "LIST_EXTEND": _LIST,
    "LIST_TO_TUPLE": _STAR,
    "BUILD_MAP": _DICT,
    "BUILD_CONST_KEY_MAP": _DICT,
    "MAP_ADD": _DICT,
    "DICT_UPDATE": _DICT,
    "BUILD_SET": _SET,
    "SET_ADD": _SET,
    "SET_UPDATE": _SET,
    "LOAD_FAST_AND_CLEAR": _COMP,
    "FORMAT_VALUE": _FSTR,
    "FORMAT_SIMPLE": _FSTR,
    "FORMAT_WITH_SPEC": _FSTR,
    "CONVERT_VALUE": _FSTR,
    "BUILD_STRING": _FSTR,
    "DELETE_FAST": _DEL,
    "DELETE_SUBSCR": _DEL,
    "DELETE_ATTR": _DEL,
    "DELETE_GLOBAL": _DEL,
    "DELETE_NAME": _DEL,
    "DELETE_DEREF": _DEL,
    "STORE_GLOBAL": "assigning to a 'global' variable is not supported in kernels",
    "CALL_FUNCTION_EX": _STARCALL,
    "DICT_MERGE": _STARCALL,
    "UNPACK_EX": _STAR,
    "IMPORT_NAME": _IMPORT,
    "IMPORT_FROM": _IMPORT,
    "IMPORT_STAR": _IMPORT,
    "LOAD_BUILD_CLASS": CLASS_MESSAGE,
    "LOAD_SUPER_ATTR": "super() is not supported in kernels",
    "MATCH_CLASS": "'match' statements are not supported in kernels",
    "MATCH_MAPPING": "'match' statements are not supported in kernels",
    "MATCH_SEQUENCE": "'match' statements are not supported in kernels",
    "MATCH_KEYS": "'match' statements are not supported in kernels",
    "GET_LEN": "'match' statements are not supported in kernels",
}

_NESTED_NAMES = {
    "<listcomp>": _COMP,
    "<setcomp>": _COMP,
    "<dictcomp>": _COMP,
    "<genexpr>": "generator expressions are not supported in kernels",
}


def nested_function_message(code_name: str | None, code=None) -> str | None:
    """The message for a MAKE_FUNCTION kernels cannot have, by the nested code object
    (or its name), or None for a nested function or lambda, which they can.  A class
    body's code is the one kind without fresh locals (CO_NEWLOCALS)."""
    if code is not None and hasattr(code, "co_flags") and not code.co_flags & inspect.CO_NEWLOCALS:
        return CLASS_MESSAGE
    if code is not None and hasattr(code, "co_flags") and code.co_flags & inspect.CO_GENERATOR:
        return _GEN
    return _NESTED_NAMES.get(code_name)


def flags_message(co_flags: int, code=None, device: bool = True) -> str | None:
    """A message when the function itself cannot be a kernel, else None."""
    if co_flags & (
        inspect.CO_COROUTINE | inspect.CO_ITERABLE_COROUTINE | inspect.CO_ASYNC_GENERATOR
    ):
        return "async functions are not supported in kernels"
    if co_flags & inspect.CO_GENERATOR:
        return _GEN
    # ``*args`` alone is a device function's tuple parameter; a kernel's parameters
    # are all positional (guards.check_parameters says so at the launch as well).
    star_kw = co_flags & inspect.CO_VARKEYWORDS
    if code is not None and (not device or star_kw or code.co_kwonlyargcount):
        return parameters_message(code)
    if star_kw:
        return "**kwargs parameters are not supported in kernels"
    return None


TRY_MESSAGE = _TRY
