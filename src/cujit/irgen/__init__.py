"""Stage 3: control-flow graph -> untyped SSA IR (``cujit.ir.Function``)."""

from cujit.cfg import CFG
from cujit.ir import Function
from cujit.irgen.builder import IRBuilder


def build_ir(cfg: CFG) -> Function:
    """The untyped SSA IR of the function ``cfg`` describes."""
    return IRBuilder(cfg).build()


__all__ = ["build_ir"]
