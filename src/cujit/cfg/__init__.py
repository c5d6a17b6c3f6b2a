"""Stage 2: cujit bytecode -> control-flow graph (blocks, edges, stack depths, loops)."""

from cujit.cfg.graph import CFG, BasicBlock, CFGError, build_cfg, format_cfg

__all__ = ["build_cfg", "format_cfg", "CFG", "BasicBlock", "CFGError"]
