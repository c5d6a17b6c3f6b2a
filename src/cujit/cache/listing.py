"""``python -m cujit cache list``: the entries of the cache folder, one per line."""

from __future__ import annotations

from pathlib import Path

from cujit.cache import store, trust


def listing(folder: Path) -> str:
    """The entries of ``folder``, one per line, for ``python -m cujit cache list``."""
    lines = [f"cujit kernel cache: {folder}"]
    total = 0
    found = store.entries(folder, _mac_key(folder)) if folder.is_dir() else []
    for item in found:
        if isinstance(item, Path):
            lines.append(f"  {item.name}  (damaged or refused: recompiled on next use)")
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


def _mac_key(folder: Path) -> bytes | None:
    """The shared folder's key, where ``folder`` is the declared shared one: its entries
    without the right MAC are listed as refused."""
    if not trust.shared(folder):
        return None
    try:
        return trust.mac_key()
    except (trust.Refused, OSError):
        return b""  # no key: no entry of the shared folder is authentic here


def _target_of(header: dict) -> str:
    """What an entry's code runs on, for the listing: ``sm_90``, or ``cpu``."""
    if header.get("target") == "cpu":
        return "cpu"
    return f"sm_{str(header.get('arch', '?')).replace('.', '')}"
