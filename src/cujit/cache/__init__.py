"""The on-disk kernel cache: a new process loads a kernel's cubin (or, on the CPU target,
its host object code) instead of compiling it.

    @cuda.jit(cache=True)            one kernel (in __pycache__ beside its source, as numba)
    CUJIT_CACHE=1                    every kernel (in the per-user cache folder)
    CUJIT_CACHE_DIR=/path            every entry in this folder instead
    python -m cujit cache list|clear the per-user (or CUJIT_CACHE_DIR) folder

``layout.py`` says where entries go and keeps each kernel's index file;
``key.py`` what the key covers, ``toolchain.py`` how the toolchain's part
is found cheaply, ``store.py`` the entry format and its atomic writes,
``cpu_entry.py`` what a CPU-target entry holds and how a hit loads it,
``listing.py`` what ``python -m cujit cache list`` prints, ``trust.py`` which
folders and files are trusted (docs/cache-trust.md), ``lock.py`` the lock around a
miss, ``pickledata.py`` numba's index read as data.  The
compiler itself knows nothing of the cache: the dispatcher calls
``compile_cached`` in place of ``pipeline.compile_kernel``.
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path

from cujit import config, launchconfig
from cujit.cache import entry_check, layout, lock, store, trust
from cujit.cache.key import kernel_key
from cujit.options import Options

__all__ = [
    "cache_dir",
    "check_cacheable",
    "clear",
    "compile_cached",
    "format_listing",
    "linked_refusal",
    "kernel_key",
]

# What an entry keeps of a CompileResult: enough to launch (cubin, symbol) and
# to answer inspect_ptx/inspect_llvm without compiling again.
SECTIONS = ("cubin", "ptx", "llvm")


class Stats:
    """numba's ``kernel.stats``: this process's disk-cache hits and misses per argument
    types, and the folder the kernel's entries go to (None before its first compile
    through the cache)."""

    __slots__ = ("cache_hits", "cache_misses", "cache_path")

    def __init__(self) -> None:
        from collections import Counter

        self.cache_hits: Counter = Counter()
        self.cache_misses: Counter = Counter()
        self.cache_path: str | None = None

    def note(self, arg_types, result, pyfunc, strict: bool) -> None:
        """Count one compile through the cache (a hit's result has a "cache" time)."""
        hit = "cache" in result.times
        (self.cache_hits if hit else self.cache_misses)[tuple(arg_types)] += 1
        self.cache_path = str(layout.entry_folder(pyfunc, beside_source=strict))


def cache_dir() -> Path:
    return Path(config.cache_dir())


def compile_cached(
    pyfunc,
    arg_types,
    options: Options,
    strict: bool = False,
    refresh: bool = False,
    launch_config=None,
):
    """``pipeline.compile_kernel(pyfunc, arg_types, options)``, through the cache.

    A hit's ``CompileResult`` has the cubin, PTX and LLVM IR as outputs, one
    time, ``cache``, and the ``LaunchRecord`` the entry stores whole; a miss
    compiles every stage and writes the entry.  ``strict`` (``cache=True`` on the
    kernel, not ``CUJIT_CACHE=1``): a kernel using a global or captured device array
    raises ``UncacheableKernel`` (a PicklingError) instead of compiling uncached.
    ``refresh`` (``kernel.recompile()``): compile afresh and overwrite the entry.
    ``launch_config`` (``launchconfig.config_key``): the configuration a kernel known to
    be launch-config sensitive compiles for, part of the key; unknown in this process,
    the kernel's marker on disk makes the current launch's configuration part of it, and
    a compile that marks itself sensitive saves its entry under that key and leaves the
    marker.
    """
    from cujit.pipeline import compile_kernel

    start = time.perf_counter()
    name = getattr(pyfunc, "__qualname__", repr(pyfunc))
    if options.link and strict and not config.CACHE_LINKED.get():
        raise linked_refusal(name, options.link)  # numba's refusal (the key would do)
    key = _key_or_none(pyfunc, arg_types, options, strict)
    if key is None:  # something the kernel uses has no stable fingerprint
        return compile_kernel(pyfunc, arg_types, options)
    folder = layout.entry_folder(pyfunc, beside_source=strict)
    if launch_config is None and layout.launch_config_marked(folder, pyfunc):
        launch_config = launchconfig.current_key()
    base = key if launch_config is None else None  # the key a sensitive compile extends
    if launch_config is not None:
        key = _with_launch_config(key, launch_config)
    path = store.entry_path(folder, name, key)
    mac_key, why = _trust(folder)
    if why is not None:  # a folder others could write: neither read nor written
        _untrusted_folder(folder, path, why)
        return compile_kernel(pyfunc, arg_types, options)
    cpu = options.target == "cpu"
    found = None if refresh else _loaded(name, path, key, arg_types, cpu, start, mac_key)
    if found is None:  # the first process to miss compiles; the others wait, then load
        with lock.held(path, name):
            found = None if refresh else _loaded(name, path, key, arg_types, cpu, start, mac_key)
            if found is None:
                keys = (key, base, mac_key)
                return _compile_and_save(pyfunc, arg_types, options, name, keys, path)
    entry, result = found
    if entry.header.get("launch_config_sensitive"):
        launchconfig.note_sensitive()  # so the kernel keeps a specialisation per config
    return result


def _trust(folder: Path) -> tuple[bytes | None, str | None]:
    """``(the shared folder's key or None, why the folder is refused or None)``."""
    if trust.shared(folder):
        try:
            return trust.mac_key(), None
        except (trust.Refused, OSError) as exc:
            return None, f"its folder is shared and this user's key cannot be used ({exc})"
    return None, trust.folder_refusal(folder)


_warned_folders: set[str] = set()


def _untrusted_folder(folder: Path, path: Path, why: str) -> None:
    """Say that ``folder`` is not used: the entry there refused, where there is one;
    else the folder itself, once a process."""
    from cujit.cache.key import user_level

    if path.exists() or path.is_symlink():
        _refused_entry(path, why)
        return
    if str(folder) in _warned_folders:
        return
    _warned_folders.add(str(folder))
    warnings.warn(
        f"cujit does not use the kernel cache folder {folder}: "
        f"{why.replace('its folder', 'it', 1)}; kernels compile without the cache "
        "(a folder several users write must be declared with CUJIT_CACHE_SHARED: "
        "docs/cache-trust.md)",
        RuntimeWarning,
        stacklevel=user_level(),
    )


def _loaded(name: str, path: Path, key: str, arg_types, cpu: bool, start: float, mac_key=None):
    """``(entry, CompileResult)`` of the entry at ``path``, or None: absent, damaged,
    not to be trusted or not usable here (then a warning says why; a damaged entry of a
    private folder is removed)."""
    entry = store.load(path, key, on_damage=_refused_entry, mac_key=mac_key)
    if entry is None:
        return None
    if not cpu:
        if _usable(entry, arg_types) is None:
            _refused_entry(path, "it lacks what a launch needs, or does not fit the arguments")
            return None
        return entry, _hit(name, entry, start)
    from cujit.cache import cpu_entry

    why = cpu_entry.refusal(entry, arg_types)
    if why is None and not entry_check.record_fits(entry, arg_types):
        why = "its launch record does not fit the argument types"
    if why is None:
        try:
            return entry, cpu_entry.hit(name, entry, arg_types, start)
        except ValueError as exc:
            why = str(exc)
    entry_check.discard(entry)
    _refused_entry(path, why)
    return None


def _refused_entry(path: Path, why: str) -> None:
    from cujit.cache.key import user_level

    warnings.warn(
        f"cujit refused the kernel cache entry {path}: {why}; compiling the kernel again",
        RuntimeWarning,
        stacklevel=user_level(),
    )


def _with_launch_config(key: str, launch_config) -> str:
    return store.hasher(f"{key} launch config {launch_config!r}".encode()).hexdigest()


def _hit(name: str, entry, start: float):
    """The ``CompileResult`` of a hit (see ``compile_cached``)."""
    from cujit.abi import LaunchRecord
    from cujit.pipeline import CompileResult

    outputs = {
        "llvm": entry.sections["llvm"].decode(),
        "ptx": entry.sections["ptx"].decode(),
        "cubin": entry.sections["cubin"],
    }
    add_stored_outputs(entry.header, outputs)
    return CompileResult(
        name,
        outputs,
        {"cache": time.perf_counter() - start},
        LaunchRecord.from_json(entry.header["record"]),
    )


def add_stored_outputs(header: dict, outputs: dict) -> None:
    """What a hit's launches read besides the code, from the header of its entry: the
    independence verdict (``coarsen.verdict_of``) and whether a 32-bit index variant
    exists (``cujit.index_width``), so that the hit runs no stage."""
    verdict = _stored_verdict(header)
    if verdict is not None:
        outputs["independence"] = verdict
    if header.get("index32"):
        outputs["index32"] = True


def linked_refusal(name: str, link) -> Exception:
    """numba's refusal of ``cache=True`` on a kernel that links ``link``."""
    from cujit.diagnostics import UncacheableLinkedKernel

    files = ", ".join(repr(getattr(f, "name", str(f))) for f in link)
    return UncacheableLinkedKernel(
        f"cannot cache kernel {name!r}: it links {files}, which cache=True refuses, as "
        'numba does ("Cannot pickle CUDACodeLibrary with linking files"); drop '
        "cache=True or link=, or set CUJIT_CACHE_LINKED=1 (the key covers the files' bytes)"
    )


def _usable(entry, arg_types):
    """``entry``, or None where it is missing or whole but not what a launch needs (then
    it is removed, and the kernel compiled again)."""
    if entry is not None and not entry_check.usable(entry, arg_types):
        entry_check.discard(entry)
        return None
    return entry


def _compile_and_save(pyfunc, arg_types, options: Options, name: str, keys, path: Path):
    """Compile and write the entry under ``keys[0]``; or, where the compile marked itself
    launch-config sensitive and ``keys[1]`` (the key without a configuration) is given,
    under that key extended with the current launch's configuration, with the marker.
    ``keys[2]``: the shared folder's key, which MACs the entry, or None."""
    from cujit.pipeline import compile_kernel

    key, base, mac_key = keys
    result = compile_kernel(pyfunc, arg_types, options)
    sensitive = launchconfig.marked_sensitive()
    if sensitive and base is not None:  # found out now: the entry is per configuration
        layout.mark_launch_config(path.parent, pyfunc)
        key = _with_launch_config(base, launchconfig.current_key())
        path = store.entry_path(path.parent, name, key)
    sections, header = _contents(result, options, arg_types, key, name)
    header["launch_config_sensitive"] = sensitive
    if sections is None:  # nothing to keep (MCJIT gave no object): compiled, not cached
        return result
    try:
        store.save(path, header, sections, mac_key)
        layout.record(path.parent, pyfunc, key, path)
    except OSError as exc:  # a read-only or full disk costs the cache, not the compile
        warnings.warn(
            f"cujit could not write the kernel cache entry {path}: {exc}",
            RuntimeWarning,
            stacklevel=3,
        )
    return result


def _contents(result, options: Options, arg_types, key: str, name: str):
    """``(sections, header)`` of the entry of ``result``; sections None where the
    compile left nothing to keep."""
    import datetime as dt  # here, not at the top: a cache hit does not need it

    if options.target == "cpu":
        from cujit.cache import cpu_entry

        sections, header = cpu_entry.sections_of(result), cpu_entry.header_of(result)
    else:
        sections = {
            "cubin": bytes(result.cubin),
            "ptx": result.ptx.encode(),
            "llvm": str(result.outputs["llvm"]).encode(),
        }
        header = {"record": result.record.to_json()}  # all a launch needs but the cubin
    header.update(
        key=key,
        name=name,
        arg_types=[str(t) for t in arg_types],
        arch="{}.{}".format(*options.arch),
        options={"opt": options.opt, "fastmath": options.fastmath, "debug": options.debug},
        created=dt.datetime.now().isoformat(timespec="seconds"),
        compile_ms={k: round(v * 1e3, 3) for k, v in result.times.items()},
    )
    if not options.coarsen:  # a variant's launches read the plain kernel's verdict
        header["coarsen"] = _verdict_json(result)
    if "index32" in result.outputs:  # whether small arrays have a 32-bit index variant
        header["index32"] = bool(result.outputs["index32"])
    return sections, header


def _verdict_json(result) -> dict:
    """The kernel's independence verdict for the entry; also kept in ``result`` so that
    the launch that follows does not analyse the kernel again."""
    from cujit.cache import verdict
    from cujit.ir.independence import analyse

    found = analyse(result.outputs["passes"])
    result.outputs["independence"] = found
    return verdict.to_json(found)


def _stored_verdict(header: dict):
    """The verdict an entry's header keeps, or None (an entry of a variant, or damaged:
    the launch then analyses the kernel itself)."""
    stored = header.get("coarsen")
    if stored is None:
        return None
    from cujit.cache import verdict

    return verdict.from_json(stored)


def _key_or_none(pyfunc, arg_types, options: Options, strict: bool) -> str | None:
    from cujit.cache.key import CapturesDeviceArray
    from cujit.diagnostics import CujitError, UncacheableKernel

    try:
        return kernel_key(pyfunc, arg_types, options, strict)
    except CapturesDeviceArray as why:  # cache=True on the kernel: refused, as numba does
        name = getattr(pyfunc, "__qualname__", repr(pyfunc))
        raise UncacheableKernel(
            f"cannot cache kernel {name!r}: it uses global device arrays ({why}), whose "
            "addresses are in its code; pass the array as an argument, or drop cache=True"
        ) from None
    except (CujitError, OSError):  # no toolchain found: the compile will say so
        return None


def check_cacheable(pyfunc, arg_types, options: Options) -> None:
    """Raise ``UncacheableKernel`` where ``cache=True`` on this kernel cannot be kept
    (it uses global device arrays), as ``compile_cached(strict=True)`` would: for the
    targets that keep nothing on disk, so that ``cache=True`` is refused alike."""
    _key_or_none(pyfunc, arg_types, options, True)


def clear() -> int:
    """Remove every entry of the cache folder; return how many files went."""
    return store.clear(cache_dir())


def format_listing() -> str:
    """The cache folder's entries, one per line, for ``python -m cujit cache list``."""
    from cujit.cache.listing import listing

    return listing(cache_dir())
