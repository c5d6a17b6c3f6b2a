"""``cuda.random``: numba.cuda's xoroshiro128+ generators, giving the same streams as
numba for the same seed.

The algorithm (Blackman and Vigna's xoroshiro128+, seeded through splitmix64):

- a state is two 64-bit words ``(s0, s1)``; ``next`` returns ``s0 + s1`` (mod 2**64)
  and advances with ``s1 ^= s0; s0 = rotl(s0, 55) ^ s1 ^ (s1 << 14); s1 = rotl(s1, 36)``;
- ``jump`` advances a state by 2**64 steps: the xor of the states met along 128 steps
  whose bits are set in the jump polynomial ``0xD86B048B86AA9922_BEAC0467EBA5FACB``
  (low word first);
- the state of generator 0 is splitmix64(seed) in both words, jumped
  ``subsequence_start`` times; generator ``i`` is generator ``i - 1`` jumped once, so the
  generators are 2**64 steps apart in one sequence;
- a uniform float64 is ``(x >> 11) * 2**-53``; a float32 is that float64 rounded; the
  normals are Box-Muller's first value from two float32 uniforms (for both widths, as
  numba does).

The states are stored as numba stores them: a 1-d array of the aligned record
``xoroshiro128p_dtype`` (fields ``s0``, ``s1``, uint64), so host code that reads them
(``np.unique(states.copy_to_host())``) sees what it sees under numba.

The device-side functions are ordinary ``@cuda.jit(device=True)`` functions.  The
host side builds the states with NumPy: the jump is linear over GF(2), so it is a
128x128 bit matrix; generator ``i`` is ``J**i`` applied to generator 0, computed for
all generators at once by doubling (states ``[0, 2**k)`` times ``J**(2**k)`` give
``[2**k, 2**(k+1))``).
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from cujit.dispatcher import jit
from cujit.types.core import float32, float64, int64, uint64

__all__ = [
    "xoroshiro128p_dtype",
    "create_xoroshiro128p_states",
    "init_xoroshiro128p_states",
    "xoroshiro128p_jump",
    "xoroshiro128p_next",
    "xoroshiro128p_normal_float32",
    "xoroshiro128p_normal_float64",
    "xoroshiro128p_uniform_float32",
    "xoroshiro128p_uniform_float64",
]

xoroshiro128p_dtype = np.dtype([("s0", np.uint64), ("s1", np.uint64)], align=True)
_MASK64 = (1 << 64) - 1
_JUMP_LO = 0xBEAC0467EBA5FACB
_JUMP_HI = 0xD86B048B86AA9922
_SPLITMIX_GAMMA = 0x9E3779B97F4A7C15
_SPLITMIX_MUL1 = 0xBF58476D1CE4E5B9
_SPLITMIX_MUL2 = 0x94D049BB133111EB
TWO_PI_FLOAT32 = np.float32(2 * math.pi)
TWO_PI_FLOAT64 = np.float64(2 * math.pi)


# -- device side ------------------------------------------------------------------------
# Every value is kept in uint64: shifts keep the left operand's type, and uint64
# arithmetic wraps modulo 2**64, so no masking is needed.


@jit(device=True)
def xoroshiro128p_next(states, index):
    """The next uint64 of generator ``index``, advancing it one step."""
    state = states[int64(index)]
    s0 = state["s0"]
    s1 = state["s1"]
    result = s0 + s1
    s1 = s1 ^ s0
    state["s0"] = ((s0 << uint64(55)) | (s0 >> uint64(9))) ^ s1 ^ (s1 << uint64(14))
    state["s1"] = (s1 << uint64(36)) | (s1 >> uint64(28))
    return result


@jit(device=True)
def _jump_word(states, index, word, s0, s1):
    """64 steps of the jump: xor in the states at the set bits of ``word``."""
    for b in range(64):
        if (word >> uint64(b)) & uint64(1) != uint64(0):
            s0 = s0 ^ states[index]["s0"]
            s1 = s1 ^ states[index]["s1"]
        xoroshiro128p_next(states, index)
    return s0, s1


@jit(device=True)
def xoroshiro128p_jump(states, index):
    """Advance generator ``index`` by 2**64 steps."""
    index = int64(index)
    acc = _jump_word(states, index, uint64(_JUMP_LO), uint64(0), uint64(0))
    acc = _jump_word(states, index, uint64(_JUMP_HI), acc[0], acc[1])
    states[index]["s0"] = acc[0]
    states[index]["s1"] = acc[1]


@jit(device=True)
def _unit_float64(x):
    return float64(x >> uint64(11)) * (1.0 / 9007199254740992.0)  # 2**-53


@jit(device=True)
def xoroshiro128p_uniform_float64(states, index):
    """A float64 in [0, 1) from generator ``index`` (one step)."""
    return _unit_float64(xoroshiro128p_next(states, int64(index)))


@jit(device=True)
def xoroshiro128p_uniform_float32(states, index):
    """A float32 in [0, 1] from generator ``index`` (one step): the float64 rounded, so
    it may round up to 1.0, as in numba."""
    return float32(_unit_float64(xoroshiro128p_next(states, int64(index))))


@jit(device=True)
def xoroshiro128p_normal_float32(states, index):
    """A standard normal float32 (Box-Muller, two steps)."""
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    return math.sqrt(-float32(2.0) * math.log(u1)) * math.cos(TWO_PI_FLOAT32 * u2)


@jit(device=True)
def xoroshiro128p_normal_float64(states, index):
    """A standard normal float64 (Box-Muller, two steps; from float32 uniforms, as
    numba does, so the streams agree)."""
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    return math.sqrt(-float64(2.0) * math.log(u1)) * math.cos(TWO_PI_FLOAT64 * u2)


# -- host side: the same algorithm on Python ints and NumPy arrays -----------------------


def _splitmix64(seed: int) -> int:
    z = (seed + _SPLITMIX_GAMMA) & _MASK64
    z = ((z ^ (z >> 30)) * _SPLITMIX_MUL1) & _MASK64
    z = ((z ^ (z >> 27)) * _SPLITMIX_MUL2) & _MASK64
    return z ^ (z >> 31)


def _next_int(s0: int, s1: int) -> tuple[int, int]:
    s1 ^= s0
    s0 = (((s0 << 55) | (s0 >> 9)) & _MASK64) ^ s1 ^ ((s1 << 14) & _MASK64)
    s1 = ((s1 << 36) | (s1 >> 28)) & _MASK64
    return s0, s1


def _jump_int(s0: int, s1: int) -> tuple[int, int]:
    a0 = a1 = 0
    for word in (_JUMP_LO, _JUMP_HI):
        for b in range(64):
            if word >> b & 1:
                a0 ^= s0
                a1 ^= s1
            s0, s1 = _next_int(s0, s1)
    return a0, a1


def _apply(matrix: tuple[np.ndarray, np.ndarray], s0: np.ndarray, s1: np.ndarray):
    """A GF(2)-linear map of 128-bit states, given by the images of its 128 unit
    states (``matrix[w][k]``: word w of the image of bit k), applied to many states."""
    c0, c1 = matrix
    out0 = np.zeros_like(s0)
    out1 = np.zeros_like(s1)
    one = np.uint64(1)
    for k in range(128):
        word, bit = (s0, k) if k < 64 else (s1, k - 64)
        set_ = (word >> np.uint64(bit)) & one  # 0 or 1: multiplying selects the column
        out0 ^= set_ * c0[k]
        out1 ^= set_ * c1[k]
    return out0, out1


@cache
def _jump_power(k: int) -> tuple[np.ndarray, np.ndarray]:
    """The matrix of jump**(2**k)."""
    if k == 0:
        cols = [
            _jump_int(1 << bit, 0) if bit < 64 else _jump_int(0, 1 << (bit - 64))
            for bit in range(128)
        ]
        return (
            np.array([c[0] for c in cols], np.uint64),
            np.array([c[1] for c in cols], np.uint64),
        )
    prev = _jump_power(k - 1)
    return _apply(prev, *prev)  # the square: the map applied to its own columns


def _host_states(n: int, seed: int, subsequence_start: int) -> np.ndarray:
    if n < 0:
        raise ValueError(f"the number of generators must not be negative, got {n}")
    subsequence_start = int(subsequence_start)
    if not 0 <= subsequence_start <= _MASK64:
        raise ValueError(f"subsequence_start must be in [0, 2**64), got {subsequence_start}")
    out = np.empty(n, xoroshiro128p_dtype)
    if n == 0:
        return out
    z = _splitmix64(int(seed) & _MASK64)
    s0 = np.array([z], np.uint64)
    s1 = s0.copy()
    k = 0
    while subsequence_start >> k:
        if subsequence_start >> k & 1:
            s0, s1 = _apply(_jump_power(k), s0, s1)
        k += 1
    k = 0
    while len(s0) < n:  # states [0, 2**k) jumped 2**k times are states [2**k, 2**(k+1))
        t0, t1 = _apply(_jump_power(k), s0, s1)
        s0, s1 = np.concatenate([s0, t0]), np.concatenate([s1, t1])
        k += 1
    out["s0"] = s0[:n]
    out["s1"] = s1[:n]
    return out


def init_xoroshiro128p_states(states, seed, subsequence_start=0, stream=0):
    """Fill ``states`` (a 1-d device array of ``xoroshiro128p_dtype``) with ``n``
    generators 2**64 steps apart, the first one ``subsequence_start`` jumps past the
    seed's."""
    shape = tuple(states.shape)
    if len(shape) != 1 or np.dtype(states.dtype) != xoroshiro128p_dtype:
        raise ValueError(
            "xoroshiro128+ states are a 1-d device array of xoroshiro128p_dtype "
            f"(s0, s1: uint64), got {states.dtype} {shape}; make them with "
            "create_xoroshiro128p_states"
        )
    states.copy_to_device(_host_states(shape[0], seed, subsequence_start), stream=stream)


def create_xoroshiro128p_states(n, seed, subsequence_start=0, stream=0):
    """A new device array of ``n`` xoroshiro128+ generators (``xoroshiro128p_dtype``),
    2**64 steps apart, seeded as numba seeds them; under ``CUJIT_TARGET=cpu`` a host
    device array."""
    return _to_device(_host_states(int(n), seed, subsequence_start), stream)


def _to_device(host: np.ndarray, stream):
    """``cuda.to_device`` of the target CUJIT_TARGET names now (``cujit.cuda`` keeps the
    first one it resolved, so it is not asked here)."""
    from cujit import config

    if config.TARGET.get() == "cpu":
        from cujit.targets.cpu.memory import to_device
    else:
        from cujit.runtime.memory import to_device
    return to_device(host, stream=stream)
