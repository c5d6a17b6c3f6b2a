"""Module-level kernels for the Dask tests: workers import this module, so these
kernels travel to them by name (tests/test_dask.py)."""

from cujit import cuda


@cuda.jit
def scale(x, a, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a * x[i] + 1.0


@cuda.jit
def laplace(x, out):
    # A 5-point stencil over a 2-D chunk grown by one element on every side;
    # the outermost ring is trimmed off by map_overlap, so it is left unwritten.
    i, j = cuda.grid(2)
    if 0 < i < x.shape[0] - 1 and 0 < j < x.shape[1] - 1:
        out[i, j] = x[i - 1, j] + x[i + 1, j] + x[i, j - 1] + x[i, j + 1] - 4.0 * x[i, j]


@cuda.jit(cache=True, target="cuda")
def cached_axpy(a, x, y, out):
    # Compiled (not launched) by the workers for the CUDA target, into the shared cache.
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a * x[i] + y[i]


@cuda.jit
def offset(x, out):
    # Launched by one test only, so each worker compiles it there (test_dask.py).
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = x[i] + 0.5


def host_backed(values):
    """A cujit device array whose "device" memory is a host array (no GPU needed):
    what a task returns to test how device arrays cross to the client."""
    import cujit.dask  # noqa: F401  (as a worker preload would: registers the serialiser)
    from cujit.runtime.memory import DeviceArray

    class HostBacked(DeviceArray):
        __slots__ = ("host",)

        def __init__(self, host):
            self.host, self.readonly = host, False

        def copy_to_host(self, ary=None, stream=0):
            return self.host.copy()

    return HostBacked(values)
