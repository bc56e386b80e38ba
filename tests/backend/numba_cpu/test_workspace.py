"""numba_cpu.workspace: a kernel's own buffers are workspaces, allocated where the TIR
allocates them and freed where their scope ends, so the kernel compiles without Numba's
runtime (kernels with parallel loops keep it and np.empty: test_numba_cpu.py)."""

import numpy as np
import pytest
from numba import njit
from numba.core.errors import TypingError

from mlckit.backend import numba_cpu
from mlckit.backend.numba_cpu.workspace import ALIGNMENT, workspace_alloc, workspace_free
from mlckit.script import tir as T


@njit(_nrt=False)
def _filled(rows, cols):
    """Fill a rows x cols workspace with 0, 1, 2, ...; its sum, address, shape, strides."""
    w = workspace_alloc((rows, cols), np.float64)
    for i in range(rows):
        for j in range(cols):
            w[i, j] = i * cols + j
    total = w.sum()
    address = w.ctypes.data
    shape = w.shape
    strides = w.strides
    workspace_free(w)
    return total, address, shape, strides


def test_a_workspace_is_a_c_contiguous_aligned_array_of_its_shape_and_dtype():
    total, address, shape, strides = _filled(7, 5)
    assert total == np.arange(35, dtype=np.float64).sum()
    assert shape == (7, 5) and strides == (40, 8)
    assert address % ALIGNMENT == 0


@njit(_nrt=False)
def _flags(n):
    w = workspace_alloc((n,), np.bool_)
    for i in range(n):
        w[i] = i % 3 == 0
    count = 0
    for i in range(n):
        count += w[i]
    workspace_free(w)
    return count


def test_a_workspace_of_booleans_and_of_a_size_known_only_when_called():
    assert _flags(10) == 4 and _flags(1) == 1


@njit(_nrt=False)
def _make(n, m):
    w = workspace_alloc((n, m), np.float32)
    workspace_free(w)


def test_a_negative_extent_or_a_size_past_the_address_space_is_refused_as_by_np_empty():
    _make(0, 5)  # an empty workspace is fine
    with pytest.raises(ValueError, match="workspace_alloc: negative dimension"):
        _make(-1, 5)
    with pytest.raises(MemoryError, match="workspace_alloc: the array is too big"):
        _make(2**40, 2**30)  # 2**72 bytes: the size overflows
    with pytest.raises(MemoryError, match="workspace_alloc: out of memory"):
        _make(2**40, 2**20)  # 4 PiB: no such memory


def test_workspace_alloc_rejects_what_is_not_a_shape_and_a_dtype():
    @njit(_nrt=False)
    def bad(n):
        w = workspace_alloc((n,), "float32")  # a dtype's name, not NumPy's type
        workspace_free(w)

    with pytest.raises(TypingError, match="workspace_alloc"):
        bad(3)


# this file's own kernels (built with cache=False): a shared one could come from numba_cpu's
# in-process cache, built under another test's settings
@T.prim_func
def scaled_relu(A: T.Buffer((16, 24), "float32"), B: T.Buffer((16, 24), "float32")):
    T.func_attr({"tir.noalias": True})
    Y = T.alloc_buffer((16, 24), "float32")
    for i, j in T.grid(16, 24):
        with T.block("Y"):
            vi, vj = T.axis.remap("SS", [i, j])
            Y[vi, vj] = A[vi, vj] * T.float32(3)
    for i, j in T.grid(16, 24):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.max(Y[vi, vj], T.float32(0))


def test_a_kernel_allocating_a_buffer_runs_without_numbas_runtime():
    f = numba_cpu.build(scaled_relu, cache=False)
    src = f.source
    assert "@njit(cache=False, _nrt=False)" in src
    assert "from mlckit.backend.numba_cpu.workspace import workspace_alloc, workspace_free" \
        in src
    assert "    Y = workspace_alloc((384,), np.float32)\n" in src
    # freed once, after the last loop that reads it, at the indentation it was allocated at
    assert src.count("workspace_free(Y)") == 1
    assert src.index("    workspace_free(Y)\n") > src.rindex("for j in range(24):")
    assert "np.empty" not in src
    assert f.dispatcher.targetoptions["_nrt"] is False
    a = np.random.default_rng(1).standard_normal((16, 24)).astype("float32")
    b = np.zeros((16, 24), "float32")
    for _ in range(3):  # allocated and freed on every call
        f(a, b)
        np.testing.assert_array_equal(b, np.maximum(a * np.float32(3), 0))


@T.prim_func
def rows(A: T.Buffer((8, 32), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("row"):
            vi = T.axis.spatial(8, i)
            t = T.alloc_buffer((32,), "float32")
            for k in range(32):
                with T.block("t"):
                    vk = T.axis.spatial(32, k)
                    t[vk] = A[vi, vk] + T.float32(1)
            B[vi] = t[0] + t[31]


def test_a_workspace_lives_where_the_lowered_tir_allocates_it():
    # TVM's lowering allocates a block's buffer once, around the loop (StorageRewrite)
    f = numba_cpu.build(rows, cache=False)
    assert f.source.endswith(
        "    t = workspace_alloc((32,), np.float32)\n"
        "    for i in range(8):\n"
        "        for k in range(32):\n"
        "            t[k] = A_1[i * 32 + k] + np.float32(1.0)\n"
        "        B[i] = t[0] + t[31]\n"
        "    workspace_free(t)\n")
    a = np.arange(256, dtype="float32").reshape(8, 32)
    b = np.zeros(8, "float32")
    f(a, b)
    np.testing.assert_array_equal(b, a[:, 0] + a[:, 31] + 2)
