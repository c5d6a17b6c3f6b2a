"""Stage 1: CPython bytecode -> cujit's version-independent instruction list."""

from cujit.bytecode.decode import decode
from cujit.bytecode.instr import Bytecode, Instr, format_bytecode, format_instr

__all__ = ["decode", "Bytecode", "Instr", "format_bytecode", "format_instr"]
