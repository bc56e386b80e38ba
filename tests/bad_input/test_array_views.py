"""Arrays that are views — a transpose, Fortran order, a negative stride, a broadcast, a slice
with a step — given to a built kernel or a VM function: an input is copied (as
``tvm.runtime.tensor`` copies it) and the result is NumPy's; an output that is a view is
refused, since the kernel would write into a copy (TVM refuses it too: "expected to be
compact array")."""

import numpy as np
import pytest

import mlckit
from mlckit import relax
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T

from .common import refused


@T.prim_func
def matmul(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"),
           C: T.Buffer((4, 4), "float32")):
    for i, j, k in T.grid(4, 4, 4):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def matmul_n(a: T.handle, b: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n, 4), "float32")
    B = T.match_buffer(b, (4, 4), "float32")
    C = T.match_buffer(c, (n, 4), "float32")
    for i, j, k in T.grid(n, 4, 4):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def add_gpu(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"),
            C: T.Buffer((4, 4), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for j in T.thread_binding(4, thread="threadIdx.x"):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] + B[vi, vj]


@I.ir_module
class Static:
    @R.function
    def main(x: R.Tensor((4, 4), "float32"), w: R.Tensor((4, 4), "float32")):
        with R.dataflow():
            y = R.matmul(x, w)
            z = R.add(y, x)
            R.output(z)
        return z


@I.ir_module
class Symbolic:
    @R.function
    def main(x: R.Tensor(("n", 4), "float32"), w: R.Tensor((4, 4), "float32")):
        with R.dataflow():
            y = R.matmul(x, w)
            z = R.add(y, x)
            R.output(z)
        return z


RNG = np.random.default_rng(0)
WIDE = RNG.random((4, 8), dtype="float32")
W = RNG.random((4, 4), dtype="float32")

VIEWS = {
    "transpose": lambda: WIDE[:, :4].copy().T,
    "fortran_order": lambda: np.asfortranarray(WIDE[:, :4]),
    "negative_stride": lambda: WIDE[::-1, :4],
    "broadcast": lambda: np.broadcast_to(WIDE[0, :4], (4, 4)),
    "slice_with_a_step": lambda: WIDE[:, ::2],
}
WRAPS = {"numpy": lambda v: v, "tensor": lambda v: mlckit.runtime.tensor(v),
         "nd_array": lambda v: mlckit.nd.array(v)}


def test_every_view_really_is_one():
    for make in VIEWS.values():
        assert not make().flags.c_contiguous


@pytest.mark.parametrize("wrap", WRAPS)
@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("target, kernel", [("llvm", matmul), ("lnumpy", matmul),
                                            ("llvm", matmul_n)], ids=["llvm", "lnumpy", "llvm_n"])
def test_a_view_given_to_a_built_kernel_gives_numpys_answer(target, kernel, view, wrap):
    f = mlckit.build(kernel, target=target)
    a = VIEWS[view]()
    c = np.zeros((4, 4), "float32")
    f(WRAPS[wrap](a), W, c)
    np.testing.assert_allclose(c, a @ W, rtol=1e-5)
    # and as the second operand
    f(W, WRAPS[wrap](a), c)
    np.testing.assert_allclose(c, W @ a, rtol=1e-5)


@pytest.mark.parametrize("mode", ["cpu", "sim"])
@pytest.mark.parametrize("view", VIEWS)
def test_a_view_given_to_a_cuda_kernel_gives_numpys_answer(view, mode):
    from mlckit.backend import numba_cuda

    f = numba_cuda.build(add_gpu, mode=mode)
    a = VIEWS[view]()
    c = np.zeros((4, 4), "float32")
    for _ in range(2):  # the second call takes the planned launch's path
        f(a, W, c)
        np.testing.assert_allclose(c, a + W, rtol=1e-6)
        f(W, W, c)
        np.testing.assert_allclose(c, W + W, rtol=1e-6)


@pytest.fixture(scope="module", params=["static", "symbolic"])
def vm(request):
    mod = {"static": Static, "symbolic": Symbolic}[request.param]
    ex = relax.build(relax.transform.LegalizeOps()(mod), target="llvm")
    return relax.VirtualMachine(ex, mlckit.cpu())


@pytest.mark.parametrize("wrap", WRAPS)
@pytest.mark.parametrize("view", VIEWS)
def test_a_view_given_to_a_vm_function_gives_numpys_answer(vm, view, wrap):
    a = VIEWS[view]()
    out = vm["main"](WRAPS[wrap](a), W).numpy()
    np.testing.assert_allclose(out, a @ W + a, rtol=1e-5)
    out = vm["main"](W, WRAPS[wrap](a)).numpy()
    np.testing.assert_allclose(out, W @ a + W, rtol=1e-5)


def test_an_unaligned_array_gives_numpys_answer():
    raw = np.zeros(4 * 4 * 4 + 1, np.uint8)
    a = raw[1:].view("float32").reshape(4, 4)  # starts one byte into a buffer
    assert not a.flags.aligned
    a[...] = WIDE[:, :4]
    f = mlckit.build(matmul, target="llvm")
    c = np.zeros((4, 4), "float32")
    f(a, W, c)
    np.testing.assert_allclose(c, WIDE[:, :4] @ W, rtol=1e-5)
    raw_c = np.zeros(4 * 4 * 4 + 1, np.uint8)
    c = raw_c[1:].view("float32").reshape(4, 4)
    f(W, a, c)
    np.testing.assert_allclose(c, W @ WIDE[:, :4], rtol=1e-5)


OUTPUT_VIEWS = {
    "transpose": (lambda out: out[:, :4].T, "a transposed view"),
    "fortran_order": (lambda out: np.asfortranarray(out[:, :4]), "Fortran-order"),
    "negative_stride": (lambda out: out[::-1, :4], "a reversed view"),
    "slice_with_a_step": (lambda out: out[:, ::2], "a strided view"),
}


@pytest.mark.parametrize("target", ["llvm", "lnumpy", "cuda"])
@pytest.mark.parametrize("view", OUTPUT_VIEWS)
def test_an_output_that_is_a_view_is_refused(view, target):
    make, kind = OUTPUT_VIEWS[view]
    kernel = add_gpu if target == "cuda" else matmul
    f = mlckit.build(kernel, target=target)
    out = np.zeros((4, 8), "float32")
    refused(lambda: f(W, W, make(out)), "argument 3 (C)", kind, "not a compact",
            "writes its result into C", "copy")
    assert not out.any()  # nothing half-written
    c = np.zeros((4, 4), "float32")
    f(W, W, c)  # the function still serves a good call
    assert c.any()


def test_an_output_tensor_that_wraps_a_view_is_refused():
    f = mlckit.build(matmul, target="llvm")
    out = mlckit.nd.from_dlpack(np.zeros((4, 8), "float32")[:, ::2])
    refused(lambda: f(W, W, out), "argument 3 (C)", "not a compact")


@I.ir_module
class WritesItsInput:
    """A kernel that adds one to its input in place (and copies it out): through the VM, the
    Relax function's argument is written, as with ``R.call_tir_inplace``."""

    @T.prim_func
    def bump(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
        for i, j in T.grid(4, 4):
            with T.block("A"):
                vi, vj = T.axis.remap("SS", [i, j])
                A[vi, vj] = A[vi, vj] + T.float32(1)
                B[vi, vj] = A[vi, vj]

    @R.function
    def main(x: R.Tensor((4, 4), "float32")):
        cls = WritesItsInput
        y = R.call_tir(cls.bump, (x,), out_sinfo=R.Tensor((4, 4), "float32"))
        return y


@pytest.mark.parametrize("target", ["llvm", "lnumpy"])
@pytest.mark.parametrize("view", OUTPUT_VIEWS)
def test_a_view_the_vm_would_write_in_place_is_refused(view, target):
    # TVM refuses it ("expected to be compact array"); mlckit never writes the VM's copy of it
    # while the caller's array stays as it was
    make, kind = OUTPUT_VIEWS[view]
    vm = relax.VirtualMachine(relax.build(WritesItsInput, target=target), mlckit.cpu())
    base = RNG.random((4, 8), dtype="float32")
    before = base.copy()
    refused(lambda: vm["main"](make(base)), "argument 1 (A)", kind, "of shape (4, 4)",
            "not a compact", "writes into A in place", "np.ascontiguousarray")
    np.testing.assert_array_equal(base, before)
    x = base[:, :4].copy()  # a compact array is written in place, as in TVM
    out = vm["main"](x).numpy()
    np.testing.assert_allclose(x, base[:, :4] + 1, rtol=1e-6)
    np.testing.assert_allclose(out, x, rtol=1e-6)
