"""Every ``CUJIT_*`` environment variable, declared once with its type and default.

Only this module reads ``os.environ``; stages receive options as arguments.
"""

from __future__ import annotations

import os

from cujit.frozen import frozen


@frozen
class Knob:
    """One ``CUJIT_*`` environment variable: its name, type, default and meaning."""

    name: str
    kind: type
    default: object
    doc: str

    def get(self):
        raw = os.environ.get(self.name)
        if raw is None or raw == "":
            return self.default
        if self.kind is bool:
            return raw.strip().lower() not in ("0", "false", "no", "off")
        if self.kind is tuple:  # "9.0" or "90" -> (9, 0)
            text = raw.replace("sm_", "").replace("compute_", "")
            if "." in text:
                major, minor = text.split(".", 1)
                return (int(major), int(minor))
            return (int(text[:-1]), int(text[-1]))
        return self.kind(raw)

    def is_set(self) -> bool:
        """Whether the variable is set (to anything but the empty string)."""
        return bool(os.environ.get(self.name))

    def set(self, value: str) -> None:
        """Set the variable for this process and the processes it starts."""
        os.environ[self.name] = value


SHOW_INTERNALS = Knob(
    "CUJIT_SHOW_INTERNALS",
    bool,
    False,
    "show cujit's internal traceback behind compile errors (for bug reports)",
)
DEBUG = Knob("CUJIT_DEBUG", bool, False, "compile every kernel as if jit(debug=True)")
ARCH = Knob(
    "CUJIT_ARCH",
    tuple,
    None,
    "compute capability to compile for when no GPU is present (default 9.0)",
)
VERIFY = Knob("CUJIT_VERIFY", bool, False, "run the IR verifier between all stages")
TARGET = Knob(
    "CUJIT_TARGET",
    str,
    "cuda",
    "where cuda.jit kernels run: 'cuda' (the GPU) or 'cpu' (compiled for the host)",
)
CACHE = Knob(
    "CUJIT_CACHE",
    bool,
    False,
    "keep every compiled kernel in the on-disk cache, as if jit(cache=True)",
)
CACHE_DIR = Knob(
    "CUJIT_CACHE_DIR",
    str,
    None,
    "the on-disk kernel cache's folder (default: $XDG_CACHE_HOME/cujit, "
    "~/.cache/cujit, or %LOCALAPPDATA%\\cujit\\cache on Windows)",
)
CACHE_SHARED = Knob(
    "CUJIT_CACHE_SHARED",
    bool,
    False,
    "declare the cache folder (CUJIT_CACHE_DIR) shared by several users: its entries may "
    "be anyone's and are loaded only with a valid HMAC-SHA256 under the key in "
    "CUJIT_CACHE_KEY_FILE (docs/cache-trust.md); off, entries are loaded only from folders "
    "and files private to the current user",
)
CACHE_KEY_FILE = Knob(
    "CUJIT_CACHE_KEY_FILE",
    str,
    None,
    "the file of the shared cache folder's key, private to the user (mode 0600; default: "
    "$XDG_CONFIG_HOME/cujit/cache-key or ~/.config/cujit/cache-key, made where absent)",
)
CACHE_LOCK_WAIT = Knob(
    "CUJIT_CACHE_LOCK_WAIT",
    float,
    60.0,
    "the most seconds a process waits for another that is compiling the same kernel "
    "(it says so after a few seconds); then it compiles without waiting any longer",
)
CACHE_LINKED = Knob(
    "CUJIT_CACHE_LINKED",
    bool,
    False,
    "let jit(cache=True) keep kernels that link files (link=), keyed by the files' "
    "bytes; off, such a kernel is refused with a RuntimeError, as numba refuses it",
)
CACHE_KEY_GLOBALS = Knob(
    "CUJIT_CACHE_KEY_GLOBALS",
    bool,
    False,
    "make the disk cache's key cover the values of all the globals a kernel's functions "
    "read (a global changed at run time then misses); off, as numba, a global the "
    "function's own file binds to a literal counts as a constant of the compile, valid "
    "while that file is unchanged (imported and computed globals are keyed by value)",
)
BOUNDSCHECK = Knob(
    "CUJIT_BOUNDSCHECK",
    bool,
    None,
    "check array bounds in every kernel (1) or in none (0); unset: the "
    "target's default, on for the CPU target and off on the GPU, debug mode "
    "included, as in numba (jit(boundscheck=...) overrides it per kernel)",
)
WARMUP = Knob(
    "CUJIT_WARMUP",
    bool,
    True,
    "load and warm the compiler up in a thread while the CUDA driver starts, "
    "when a kernel is waiting for its first compile (cujit/warmup.py)",
)
COARSEN = Knob(
    "CUJIT_COARSEN",
    bool,
    True,
    "let a kernel proven independent per index run k consecutive indices per thread "
    "with 16-byte loads and stores where the launch allows (docs/coarsening.md); "
    "0 turns it off for every kernel (jit(coarsen=False): for one)",
)
INDEX32 = Knob(
    "CUJIT_INDEX32",
    bool,
    True,
    "let a launch whose arrays each hold at most 2**30 elements (and whose grid spans at "
    "most 2**30 threads per axis) run the kernel's 32-bit index variant, which compares "
    "and divides such indices in int32 (docs/index32.md); 0 turns it off for every kernel "
    "(jit(index32=False): for one)",
)
VARIANTS_LAZY = Knob(
    "CUJIT_VARIANTS_LAZY",
    bool,
    True,
    "compile a kernel's launch-selected variant (coarsened or 32-bit index) only once "
    "the kernel is launched again: the first launch that could take it runs the kernel "
    "as written and compiles nothing more.  On a GPU the second such launch starts the "
    "compile in a thread and the third waits for it; on the CPU target the second "
    "compiles it and runs it (docs/coarsening.md).  0 compiles it before the first such "
    "launch, on either target",
)

NUMBA = Knob(
    "CUJIT_NUMBA",
    bool,
    False,
    "serve `import numba.cuda` / `from numba import cuda` from cujit in a process "
    "that imports cujit (cujit/numba_drop_in.py; `python -m cujit run` does it too)",
)
# numba's own variable, read only under the numba drop-in.
NUMBA_CUDASIM = Knob(
    "NUMBA_ENABLE_CUDASIM",
    bool,
    False,
    "under the numba drop-in: run kernels on cujit's CPU target (numba's "
    "simulator switch), unless CUJIT_TARGET is set",
)

LOW_OCCUPANCY_WARNINGS = Knob(
    "CUJIT_LOW_OCCUPANCY_WARNINGS",
    bool,
    False,
    "warn (NumbaPerformanceWarning) when a launch configuration has fewer than 128 "
    "blocks, as numba does by default",
)
WARN_ON_IMPLICIT_COPY = Knob(
    "CUJIT_WARN_ON_IMPLICIT_COPY",
    bool,
    False,
    "warn (NumbaPerformanceWarning) when a launch copies a host array to the GPU and "
    "back, as numba does by default",
)
NEGATIVE_STRIDE_COPIES = Knob(
    "CUJIT_NEGATIVE_STRIDE_COPIES",
    bool,
    False,
    "let copy_to_host copy device-array views with negative strides (d[::-1]); off, it "
    "raises NotImplementedError, as numba does",
)
CUDA_ARRAY_INTERFACE_SYNC = Knob(
    "CUJIT_CUDA_ARRAY_INTERFACE_SYNC",
    bool,
    True,
    "synchronize the stream a foreign array's __cuda_array_interface__ names when it is "
    "imported (cuda.as_cuda_array) or passed to a kernel, as numba does; off, a launch "
    "orders its stream after that stream without blocking the host",
)

# numba's own variables, by numba's names: the initial values of cujit's numba config
# (cujit/numba_config.py, ``numba.cuda.core.config`` under the drop-in).
NUMBA_OPT = Knob("NUMBA_OPT", str, "3", "numba's optimisation level (0 turns opt off)")
NUMBA_DEBUGINFO = Knob("NUMBA_CUDA_DEBUGINFO", bool, False, "numba's default for jit(debug=...)")
NUMBA_LOW_OCCUPANCY_WARNINGS = Knob(
    "NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS",
    bool,
    None,
    "numba's name for CUJIT_LOW_OCCUPANCY_WARNINGS (either one turns the warning on)",
)
NUMBA_WARN_ON_IMPLICIT_COPY = Knob(
    "NUMBA_CUDA_WARN_ON_IMPLICIT_COPY",
    bool,
    None,
    "numba's name for CUJIT_WARN_ON_IMPLICIT_COPY (either one turns the warning on)",
)
NUMBA_NVRTC_EXTRA_SEARCH_PATHS = Knob(
    "NUMBA_CUDA_NVRTC_EXTRA_SEARCH_PATHS",
    str,
    "",
    "extra include directories (separated by ':') for the CUDA C/C++ sources kernels "
    "link (cuda.CUSource, .cu files), searched after the CUDA toolkit's headers",
)
NUMBA_DUMP_BYTECODE = Knob(
    "NUMBA_DUMP_BYTECODE", bool, False, "print each kernel's decoded bytecode (stage 1)"
)
NUMBA_DUMP_CFG = Knob(
    "NUMBA_DUMP_CFG", bool, False, "print each kernel's control-flow graph and dominators"
)
NUMBA_DUMP_IR = Knob("NUMBA_DUMP_IR", bool, False, "print each kernel's untyped IR (stage 3)")
NUMBA_DUMP_LLVM = Knob("NUMBA_DUMP_LLVM", bool, False, "print each kernel's LLVM IR (stage 6)")
NUMBA_DUMP_ASSEMBLY = Knob(
    "NUMBA_DUMP_ASSEMBLY",
    bool,
    False,
    "print each kernel's PTX (the host assembly on the CPU target)",
)
NUMBA_CUDA_ARRAY_INTERFACE_SYNC = Knob(
    "NUMBA_CUDA_ARRAY_INTERFACE_SYNC",
    bool,
    True,
    "numba's switch for synchronizing a foreign array's stream (as "
    "CUJIT_CUDA_ARRAY_INTERFACE_SYNC; either off turns it off)",
)
NUMBA_DUMPS = (
    NUMBA_DUMP_BYTECODE,
    NUMBA_DUMP_CFG,
    NUMBA_DUMP_IR,
    NUMBA_DUMP_LLVM,
    NUMBA_DUMP_ASSEMBLY,
)

KNOBS = (
    SHOW_INTERNALS,
    DEBUG,
    ARCH,
    VERIFY,
    TARGET,
    CACHE,
    CACHE_DIR,
    CACHE_SHARED,
    CACHE_KEY_FILE,
    CACHE_LOCK_WAIT,
    CACHE_LINKED,
    CACHE_KEY_GLOBALS,
    BOUNDSCHECK,
    WARMUP,
    COARSEN,
    INDEX32,
    VARIANTS_LAZY,
    NUMBA,
    NUMBA_CUDASIM,
    LOW_OCCUPANCY_WARNINGS,
    WARN_ON_IMPLICIT_COPY,
    NUMBA_OPT,
    NUMBA_DEBUGINFO,
    NUMBA_LOW_OCCUPANCY_WARNINGS,
    NUMBA_WARN_ON_IMPLICIT_COPY,
    NUMBA_NVRTC_EXTRA_SEARCH_PATHS,
    *NUMBA_DUMPS,
    NUMBA_CUDA_ARRAY_INTERFACE_SYNC,
    CUDA_ARRAY_INTERFACE_SYNC,
    NEGATIVE_STRIDE_COPIES,
)

# Variables that steer which CUDA toolchain (libNVVM, nvJitLink) a process loads
# (cuda.pathfinder and ptx/libs.py read them): part of the kernel cache's toolchain stamp.
TOOLCHAIN_ENV = ("CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH", "CONDA_PREFIX")


def cache_dir() -> str:
    """The kernel cache's folder: ``CUJIT_CACHE_DIR``, else the per-user cache folder."""
    explicit = CACHE_DIR.get()
    if explicit:
        return os.path.expanduser(explicit)
    if os.name == "nt":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~")
        return os.path.join(base, "cujit", "cache")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "cujit")


def toolchain_environment() -> tuple[tuple[str, str], ...]:
    """The values of ``TOOLCHAIN_ENV`` (empty string when unset)."""
    return tuple((name, os.environ.get(name, "")) for name in TOOLCHAIN_ENV)
