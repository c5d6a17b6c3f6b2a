"""``cujit.cuda.extending``: numba.cuda.extending's names for cujit's extension API
(``cujit.extending``), so a library's ``from numba.cuda.extending import ...`` ports
unchanged.  ``core_models`` is numba's name for the data-model classes."""

from cujit.extending import (
    lower_builtin,
    make_attribute_wrapper,
    models,
    overload,
    register_model,
    type_callable,
    typeof_impl,
)

core_models = models

__all__ = [
    "core_models",
    "lower_builtin",
    "make_attribute_wrapper",
    "models",
    "overload",
    "register_model",
    "type_callable",
    "typeof_impl",
]
