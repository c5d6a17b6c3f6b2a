"""``@cuda.jit``: the decorator, its keywords and the flags it hands the kernel class.

``jit`` reads numba's keywords (``device``, ``debug``, ``fastmath``, ``cache``,
``target``, ``boundscheck``, ``link``, ``opt``, ``inline``, ``lineinfo``,
``launch_bounds``, ``extensions``...), checks the ones cujit only validates
(``cujit.jit_options``), parses declared signatures at the decorator's line, and
builds a kernel or a device function.  The classes it builds are handed in by
``cujit.dispatcher`` (``make_jit``), which sits above this module and exports the
bound ``jit``.
"""

from __future__ import annotations

from collections.abc import Callable

from cujit import jit_options, numba_config
from cujit.diagnostics import JitOptionError, api_boundary
from cujit.types import Signature, Type, parse_signature


def _codegen_flags(kwargs: dict) -> dict:
    """numba's code-generation options among ``jit``'s keywords: ``opt`` (False is
    libNVVM's -opt=0), ``inline``/``forceinline`` for calls of the function from
    kernels (``device_function.wants_inline``), ``lto`` (link-time optimisation with
    the kernel's foreign code)."""
    names = ("opt", "inline", "forceinline", "lto")
    return {name: kwargs[name] for name in names if name in kwargs}


@api_boundary
def _numba_flags(flags: dict, debug: bool, kwargs: dict) -> None:
    """numba's other ``jit`` options: checked (``cujit.jit_options``), and those cujit
    acts on (``opt``, ``extensions``) put in ``flags``."""
    if kwargs.get("launch_bounds") is not None:
        from cujit.compile_api import _launch_bounds

        bounds = _launch_bounds(kwargs["launch_bounds"])  # too many: numba's ValueError
        if bounds:
            flags["launch_bounds"] = bounds
    jit_options.check_carveout(kwargs.get("shared_memory_carveout"))
    opt = kwargs.get("opt")
    jit_options.warn_config(debug, opt, bool(kwargs.get("lineinfo")))
    if opt is not None:
        flags["opt"] = bool(opt)
    elif not numba_config.opt_enabled():  # numba: opt=None is numba's config OPT != 0
        flags["opt"] = False
    if kwargs.get("extensions"):
        flags["extensions"] = list(kwargs["extensions"])


def jit_flags(device: bool, base: dict, kwargs: dict) -> dict:
    """The flags a kernel or device function is built with: ``base`` (the named keywords)
    and what ``kwargs`` adds, checked."""
    flags = dict(base)
    if kwargs.get("link"):  # foreign code to link (cujit.linking)
        if device:
            # numba refuses it too ("link keyword invalid for device function")
            raise JitOptionError(
                "link keyword invalid for device function: pass link= to the kernels "
                "that call it, or to cuda.declare_device"
            )
        flags["link"] = kwargs["link"]
    flags.update(_codegen_flags(kwargs))
    if "coarsen" in kwargs:  # jit(coarsen=False): the kernel as written, always
        flags["coarsen"] = bool(kwargs["coarsen"])
    if "index32" in kwargs:  # jit(index32=False): never the 32-bit index variant
        flags["index32"] = bool(kwargs["index32"])
    if kwargs.get("lineinfo"):  # numba's line tables (codegen/debuginfo.py)
        flags["lineinfo"] = True
    if kwargs.get("escaping_captures"):  # cujit's: run-time captures of escaping closures
        flags["escaping_captures"] = True
    _numba_flags(flags, base["debug"], kwargs)
    return flags


def declared_signatures(func_or_sig) -> tuple:
    """The signatures ``jit``'s first argument declares (none, one, or a list), each
    parsed now so that a bad one is reported at the decorator's line."""
    if func_or_sig is None:
        return ()
    sigs = tuple(func_or_sig) if isinstance(func_or_sig, list) else (func_or_sig,)
    for sig in sigs:
        parse_signature(sig)
    return sigs


def make_jit(kernel_class: type, device_class: type) -> Callable:
    """``cuda.jit``, building kernels as ``kernel_class`` and device functions as
    ``device_class`` (both called as ``cls(pyfunc, signatures, **flags)``)."""

    @api_boundary
    def jit(
        func_or_sig=None,
        device: bool = False,
        debug: bool | None = None,
        fastmath: bool = False,
        cache: bool = False,
        target: str | None = None,
        boundscheck: bool | None = None,
        **kwargs,
    ):
        """``@cuda.jit``, ``@cuda.jit("void(float32[:])")``, ``@cuda.jit(debug=True)``;
        ``device=True`` makes a device function (``DeviceFunction``) instead of a kernel;
        ``cache=True`` keeps the compiled kernels on disk (``cujit.cache``);
        ``target="cpu"`` runs the kernel on the host (default: ``CUJIT_TARGET`` or "cuda")."""
        if debug is None:  # numba's default: its config's CUDA_DEBUGINFO_DEFAULT
            debug = bool(numba_config.get("CUDA_DEBUGINFO_DEFAULT"))
        base = dict(
            debug=debug, fastmath=fastmath, cache=cache, target=target, boundscheck=boundscheck
        )
        flags = jit_flags(device, base, kwargs)
        make = device_class if device else kernel_class
        if callable(func_or_sig) and not isinstance(func_or_sig, (Type, Signature, str)):
            return make(func_or_sig, (), **flags)
        sigs = declared_signatures(func_or_sig)

        @api_boundary
        def decorate(pyfunc):
            made = make(pyfunc, sigs, **flags)
            # One signature, not a list of them: specialised, as numba's dispatcher is.
            if not device and sigs and not isinstance(func_or_sig, list):
                made._specialized = True
            return made

        return decorate

    return jit
