"""numba's ``cuda.vector_types``: ``vector_types`` maps ``float32x4``... to the classes
(each with numba's ``name``, ``base_type``, ``num_elements``, ``user_facing_object``,
``aliases``)."""

from cujit.vector_types import VECTOR_TYPES as vector_types

__all__ = ["vector_types"]
