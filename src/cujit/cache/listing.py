"""``python -m cujit cache list``: the entries of the cache folder, one per line."""

from __future__ import annotations

from pathlib import Path

from cujit.cache import store


def listing(folder: Path) -> str:
    """The entries of ``folder``, one per line, for ``python -m cujit cache list``."""
    lines = [f"cujit kernel cache: {folder}"]
    total = 0
    found = store.entries(folder) if folder.is_dir() else []
    for item in found:
        if isinstance(item, Path):
            lines.append(f"  {item.name}  (damaged: recompiled on next use)")
            continue
        h = item.header
        size = item.path.stat().st_size
        total += size
        lines.append(
            f"  {h['name']}({', '.join(h['arg_types'])})  {_target_of(h)}"
            f"  {size / 1024:.1f} KiB  {h['created']}  {item.path.name}"
        )
    lines.append(f"{len(found)} entries, {total / 1024:.1f} KiB")
    return "\n".join(lines)


def _target_of(header: dict) -> str:
    """What an entry's code runs on, for the listing: ``sm_90``, or ``cpu``."""
    if header.get("target") == "cpu":
        return "cpu"
    return f"sm_{str(header.get('arch', '?')).replace('.', '')}"
