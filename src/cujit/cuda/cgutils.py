"""``cujit.cuda.cgutils``: numba.cuda.cgutils's helpers for an extension's lowering
functions, which receive an llvmlite IR builder (``cujit.codegen.struct_proxy``)."""

from cujit.codegen.struct_proxy import create_struct_proxy

__all__ = ["create_struct_proxy"]
