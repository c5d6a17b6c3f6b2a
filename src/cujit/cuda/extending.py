"""``cujit.cuda.extending``: numba.cuda.extending's names for cujit's extension API
(``cujit.extending``, ``cujit.extension_intrinsic``), so a library's
``from numba.cuda.extending import ...`` ports unchanged.  ``core_models`` is numba's
name for the data-model classes."""

from cujit.extending import (
    lower_builtin,
    make_attribute_wrapper,
    models,
    overload,
    overload_attribute,
    overload_method,
    register_jitable,
    register_model,
    type_callable,
    typeof_impl,
)
from cujit.extension_intrinsic import _Intrinsic, intrinsic

core_models = models

__all__ = [
    "_Intrinsic",
    "core_models",
    "intrinsic",
    "lower_builtin",
    "make_attribute_wrapper",
    "models",
    "overload",
    "overload_attribute",
    "overload_method",
    "register_jitable",
    "register_model",
    "type_callable",
    "typeof_impl",
]
