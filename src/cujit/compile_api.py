"""numba's ahead-of-time entry points: ``cuda.compile``, ``compile_ptx`` and their
``_for_current_device`` forms, each returning ``(code, return type)``.

    ptx, rty = cuda.compile(udf, (float32, float32), device=True, abi="c")
    ltoir, _ = cuda.compile(udf, "int32(int32)", output="ltoir", abi_info={"abi_name": "f"})

A kernel (``device=False``) comes out as its ``.entry``; a device function as one
visible ``.func`` in numba's ABI (``status = f(&result, args...)``) or the C ABI
(``result = f(args...)``; named ``abi_info["abi_name"]`` or the function's
``__name__``); ``codegen/entry.py`` says how each ABI passes values.  ``output`` is
"ptx" (text), "ltoir" (libNVVM's LTO mode, bytes for nvJitLink) or "cubin" (bytes).
A signature without a return type (a tuple of argument types) returns the inferred
type; with one, the result converts to it.
"""

from __future__ import annotations

from cujit import numba_config
from cujit.diagnostics import api_boundary
from cujit.options import Options
from cujit.types import Signature, parse_signature, void

OUTPUTS = ("ptx", "ltoir", "cubin")
ABIS = ("numba", "c")  # codegen/entry.py lowers both


def _check(device: bool, abi: str, output: str, forceinline: bool) -> None:
    """numba's refusals, with its exception classes and messages."""
    if output not in OUTPUTS:
        raise NotImplementedError(f"Unsupported output type: {output}")
    if abi not in ABIS:
        raise NotImplementedError(f"Unsupported ABI: {abi}")
    if abi == "c" and not device:
        raise NotImplementedError("The C ABI is not supported for kernels")
    if forceinline and output != "ltoir":
        raise ValueError("Can only designate forced inlining in LTO-IR")
    if forceinline and not device:
        raise ValueError("Cannot force-inline kernels")


def _launch_bounds(value) -> tuple[int, ...]:
    """numba's ``launch_bounds``: an int or up to three (max threads per block, min blocks
    per multiprocessor, max blocks per cluster); device functions ignore them, as in numba."""
    if value is None:
        return ()
    bounds = (value,) if isinstance(value, int) else tuple(value)
    if len(bounds) > 3:
        raise ValueError(
            f"Got {len(bounds)} launch bounds: {value}. A maximum of three are "
            "supported: (max_threads_per_block, min_blocks_per_sm, "
            "max_blocks_per_cluster)"
        )
    return tuple(int(b) for b in bounds)


def _arch(cc) -> tuple:
    """``cc`` as (major, minor), or (major, minor, variant) for ``(9, 0, "a")``: sm_90a."""
    major, minor, *variant = cc
    return (int(major), int(minor), *(str(v) for v in variant))


def _options(cc, debug, lineinfo, fastmath, opt) -> Options:
    arch = _arch(cc) if cc else Options().arch
    debug = bool(debug)
    opt = (not debug) if opt is None else bool(opt)
    return Options(
        arch=arch,
        opt=3 if opt else 0,
        fastmath=fastmath,
        debug=debug,
        lineinfo=bool(lineinfo) and not debug,
        include_paths=numba_config.nvrtc_search_paths(),
    )


def _split(sig) -> tuple[tuple, object]:
    """(argument types, declared return type or None): a tuple declares none."""
    if isinstance(sig, (tuple, list)):
        return tuple(parse_signature(tuple(sig)).args), None
    parsed = sig if isinstance(sig, Signature) else parse_signature(sig)
    return tuple(parsed.args), parsed.return_type


def _compile(
    pyfunc,
    sig,
    debug,
    lineinfo,
    device,
    fastmath,
    cc,
    opt,
    abi,
    abi_info,
    output,
    forceinline,
    launch_bounds,
):
    """(the pipeline's CompileResult, the return type) of one ``compile`` call."""
    from cujit.codegen.entry import entry_symbol
    from cujit.pipeline import compile_entry

    _check(device, abi, output, forceinline)
    bounds = _launch_bounds(launch_bounds)
    options = _options(cc, debug, lineinfo, fastmath, opt)
    args, declared = _split(sig)
    if not device:
        if declared is not None and declared != void:
            raise TypeError("CUDA kernel must have void return type.")
        result, _ = compile_entry(
            pyfunc, args, None, options, None, output=output, launch_bounds=bounds
        )
        return result, void
    name = (abi_info or {}).get("abi_name") if abi == "c" else None
    symbol = name or entry_symbol(getattr(pyfunc, "__name__", "function"))
    return compile_entry(pyfunc, args, declared, options, abi, symbol, output, forceinline)


def compile_device_alone(pyfunc, sig, debug=None, fastmath: bool = False, opt=None, abi: str = "c"):
    """``compile(pyfunc, sig, device=True, abi=abi)``'s whole outcome, for inspection:
    (the pipeline's CompileResult, with "llvm" and "ptx" among its outputs, the argument
    types, the return type)."""
    result, rtype = _compile(
        pyfunc, sig, debug, False, True, fastmath, None, opt, abi, None, "ptx", False, None
    )
    return result, _split(sig)[0], rtype


@api_boundary
def compile(
    pyfunc,
    sig,
    debug=None,
    lineinfo: bool = False,
    device: bool = True,
    fastmath: bool = False,
    cc=None,
    opt=None,
    abi: str = "c",
    abi_info=None,
    output: str = "ptx",
    forceinline: bool = False,
    launch_bounds=None,
):
    """``(code, return type)`` of ``pyfunc`` compiled for ``sig`` (module docstring)."""
    result, rtype = _compile(
        pyfunc,
        sig,
        debug,
        lineinfo,
        device,
        fastmath,
        cc,
        opt,
        abi,
        abi_info,
        output,
        forceinline,
        launch_bounds,
    )
    return result.outputs[output], rtype


@api_boundary
def compile_all(
    pyfunc,
    sig,
    debug=None,
    lineinfo: bool = False,
    device: bool = True,
    fastmath: bool = False,
    cc=None,
    opt=None,
    abi: str = "c",
    abi_info=None,
    output: str = "ltoir",
    forceinline: bool = False,
    launch_bounds=None,
):
    """``compile``, as a list: the function's code, then the code of the foreign files its
    ``declare_device`` functions link (CUDA sources compiled with NVRTC to ``output``,
    other files as ``LinkableCode`` objects)."""
    from cujit import linking
    from cujit.ptx.nvrtc import compile_cuda

    if output not in ("ptx", "ltoir"):
        raise NotImplementedError(f"Unsupported output type: {output}")
    result, rtype = _compile(
        pyfunc,
        sig,
        debug,
        lineinfo,
        device,
        fastmath,
        cc,
        opt,
        abi,
        abi_info,
        output,
        forceinline,
        launch_bounds,
    )
    arch = _arch(cc) if cc else Options().arch
    include = numba_config.nvrtc_search_paths()
    codes = [result.outputs[output]]
    for f in linking.foreign_files(linking.foreign_calls(result.outputs["passes"])):
        if f.kind == "cu":
            out = compile_cuda(f.data, f.name, arch, ltoir=output == "ltoir", include=include)
            codes.append(out if output == "ltoir" else out.decode())
        else:
            codes.append(linking.KINDS[f.kind](f.data, name=f.name))
    return codes, rtype


def _current_cc() -> tuple[int, int]:
    """The current device's compute capability; on the CPU target (``CUJIT_TARGET=cpu``),
    the one its kernels' inspection compiles for (its device object's, or CUJIT_ARCH)."""
    from cujit import config

    if config.TARGET.get() == "cpu":
        from cujit.cuda_view import default_arch

        return default_arch()
    from cujit.runtime import get_current_device

    return tuple(get_current_device().compute_capability)


@api_boundary
def compile_for_current_device(pyfunc, sig, **kwargs):
    """``compile`` for the current device's compute capability."""
    kwargs.pop("cc", None)
    return compile(pyfunc, sig, cc=_current_cc(), **kwargs)


@api_boundary
def compile_ptx(
    pyfunc,
    sig,
    debug=None,
    lineinfo: bool = False,
    device: bool = False,
    fastmath: bool = False,
    cc=None,
    opt=None,
    abi: str = "numba",
    abi_info=None,
    forceinline: bool = False,
    launch_bounds=None,
):
    """``compile`` to PTX with numba's defaults for it: a kernel, numba's ABI."""
    return compile(
        pyfunc,
        sig,
        debug=debug,
        lineinfo=lineinfo,
        device=device,
        fastmath=fastmath,
        cc=cc,
        opt=opt,
        abi=abi,
        abi_info=abi_info,
        output="ptx",
        forceinline=forceinline,
        launch_bounds=launch_bounds,
    )


@api_boundary
def compile_ptx_for_current_device(pyfunc, sig, **kwargs):
    """``compile_ptx`` for the current device's compute capability."""
    kwargs.pop("cc", None)
    return compile_ptx(pyfunc, sig, cc=_current_cc(), **kwargs)
