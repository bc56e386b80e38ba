"""Built modules as TVM hands them out: runtime.Module, tvm.compile's Executable,
time_evaluator, and runtime.tensor."""

import numpy as np
import pytest

import mlckit as tvm
from tests.kernels import mm_relu


@pytest.fixture(scope="module")
def ab():
    rng = np.random.default_rng(0)
    return (rng.random((128, 128), dtype=np.float32), rng.random((128, 128), dtype=np.float32))


def test_compile_of_a_tir_module_is_an_executable_called_by_function_name(ab):
    a, b = ab
    ex = tvm.compile(tvm.IRModule({"mm_relu": mm_relu}), target="llvm")
    assert isinstance(ex, tvm.runtime.Executable)
    c = tvm.runtime.tensor(np.empty((128, 128), "float32"))
    ex["mm_relu"](tvm.runtime.tensor(a), tvm.runtime.tensor(b), c)
    np.testing.assert_allclose(c.numpy(), np.maximum(a @ b, 0), rtol=1e-5)


def test_a_lone_prim_func_also_answers_to_main(ab):
    a, b = ab
    ex = tvm.compile(mm_relu, target="llvm")
    c = np.empty((128, 128), "float32")
    ex["main"](a, b, c)
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-5)
    c2 = np.empty_like(c)
    ex(a, b, c2)  # calling the executable calls main
    np.testing.assert_array_equal(c2, c)
    assert "main" in ex.mod and "mm_relu" in ex.mod


def test_time_evaluator_through_ex_mod_reports_seconds_per_call(ab):
    a, b = ab
    ex = tvm.compile(mm_relu, target="llvm")
    c = np.empty((128, 128), "float32")
    result = ex.mod.time_evaluator("mm_relu", tvm.cpu(), number=2, repeat=3)(a, b, c)
    assert len(result.results) == 3 and all(t > 0 for t in result.results)
    assert result.min <= result.mean <= result.max
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-5)


def _off_boundary(shape, offset_bytes: int) -> np.ndarray:
    """A float32 array starting ``offset_bytes`` past a 64-byte boundary."""
    raw = tvm.runtime.ndarray.aligned_empty(int(np.prod(shape)) * 4 + 64, "uint8")
    return raw[offset_bytes:offset_bytes + np.prod(shape) * 4].view("float32").reshape(shape)


def test_time_evaluator_times_unaligned_numpy_arrays_on_aligned_copies(ab):
    """NumPy puts a large array 16 bytes into a page; TVM times its 64-byte aligned tensors."""
    seen = []

    def kernel(a, b, c):
        seen.append(tuple(x.ctypes.data % 64 for x in (a, b, c)))
        np.maximum(a @ b, 0, out=c)

    a, b = (_off_boundary((128, 128), 16) for _ in ab)
    a[...], b[...] = ab
    c = _off_boundary((128, 128), 16)
    result = tvm.runtime.module.time_evaluator(kernel, number=1, repeat=2)(a, b, c)
    assert set(seen) == {(0, 0, 0)}  # every call ran on aligned arrays
    np.testing.assert_allclose(c, np.maximum(ab[0] @ ab[1], 0), rtol=1e-5)  # written back
    assert "3 NumPy argument(s) off a 64-byte boundary timed on aligned copies" in str(result)
    aligned = tvm.runtime.ndarray.aligned_empty((128, 128), "float32")
    aligned[...] = 0
    assert tvm.runtime.module.time_evaluator(kernel)(aligned, aligned, aligned).note == ""


def test_time_evaluator_grows_the_call_count_once_and_keeps_it_for_every_repeat(monkeypatch):
    # TVM's timer: a repeat shorter than min_repeat_ms runs again with enough calls for it
    # (at least 1.618 times as many), and the later repeats keep that count.  A clock that
    # advances 1 ms per call makes the counts exact.
    clock = [0.0]
    monkeypatch.setattr(tvm.runtime.module.time, "perf_counter", lambda: clock[0])
    counts = []

    def kernel():
        counts.append(1)
        clock[0] += 1e-3

    result = tvm.runtime.module.time_evaluator(kernel, number=1, repeat=3, min_repeat_ms=10)()
    # the warm-up, 1 call (1 ms: too short), then 10 / 1 + 1 = 11 calls in each repeat;
    # doubling from 1 call in every repeat took 1 + 2 + 4 + 8 + 16 calls a repeat, 94 in all
    assert len(counts) == 1 + 1 + 3 * 11
    np.testing.assert_allclose(result.results, [1e-3] * 3)


def test_runtime_tensor_is_tvm_nd_array():
    x = np.arange(6, dtype="float32").reshape(2, 3)
    t = tvm.runtime.tensor(x, tvm.cpu())
    assert isinstance(t, tvm.runtime.Tensor) and isinstance(t, tvm.nd.NDArray)
    assert t.shape == (2, 3) and t.dtype == "float32"
    x[0, 0] = 100  # a copy was taken
    np.testing.assert_array_equal(t.numpy(), np.arange(6, dtype="float32").reshape(2, 3))


def test_runtime_empty_is_tvm_nd_empty_and_a_kernel_writes_into_it():
    out = tvm.runtime.empty((128, 128), "float32", tvm.cpu())
    assert isinstance(out, tvm.runtime.Tensor) and out.shape == (128, 128)
    assert out.dtype == "float32" and out.device == tvm.cpu()
    a, b = (np.random.default_rng(k).standard_normal((128, 128)).astype("float32")
            for k in (0, 1))
    ex = tvm.compile(tvm.IRModule({"mm_relu": mm_relu}), target="lnumpy")
    ex["mm_relu"](tvm.runtime.tensor(a), tvm.runtime.tensor(b), out)
    np.testing.assert_allclose(out.numpy(), np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)


def test_a_missing_function_lists_those_there_are():
    ex = tvm.compile(tvm.IRModule({"mm_relu": mm_relu}), target="lnumpy")
    with pytest.raises(tvm.TVMError, match=r"no function 'mm' \(it has: mm_relu\)"):
        ex["mm"]
