"""A VM on a GPU keeps its tensors in device memory: inputs copied there once, constants once
per VM, intermediates allocated there, results left there until ``.numpy()``.

Without a GPU the device is a stand-in (``FakeCuda``: device arrays that count their copies)
and the kernels run on the CPU; ``-m gpu`` runs the same MLP on a real GPU."""

from __future__ import annotations

import numpy as np
import pytest

import mlckit
import mlckit.dlight as dl
from mlckit import relax, tir
from mlckit.runtime.vm import virtual_machine
from mlckit.runtime.vm.memory import DeviceMemory, HostMemory, vm_memory
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.target import Target

from .mlp_modules import MyModule


class FakeDeviceArray:
    """Stands for a numba.cuda device array: a NumPy array behind an interface that only
    copies (no ``__array__``, no ``_mlckit_numpy_view``)."""

    __cuda_array_interface__ = {}

    def __init__(self, host: np.ndarray, cuda):
        self._host, self._cuda = host, cuda

    shape = property(lambda self: self._host.shape)
    dtype = property(lambda self: self._host.dtype)
    ndim = property(lambda self: self._host.ndim)
    size = property(lambda self: self._host.size)

    def __getitem__(self, item):
        return FakeDeviceArray(self._host[item], self._cuda)

    def view(self, dtype):
        return FakeDeviceArray(self._host.view(dtype), self._cuda)

    def reshape(self, *shape):
        return FakeDeviceArray(self._host.reshape(*shape), self._cuda)

    def copy_to_host(self, ary=None):
        self._cuda.to_host += 1
        return self._host.copy()

    def copy_to_device(self, ary):
        self._cuda.to_dev += 1
        self._host[...] = ary


class FakeCuda:
    """``to_device`` and ``device_array`` of numba.cuda, counting what they do."""

    def __init__(self):
        self.allocs = self.to_dev = self.to_host = 0

    def to_device(self, host):
        self.to_dev += 1
        return FakeDeviceArray(np.array(host), self)

    def device_array(self, shape, dtype):
        self.allocs += 1
        return FakeDeviceArray(np.empty(shape, dtype), self)


def gpu_mlp():
    """The course's MLP with every kernel's rows bound to blocks and columns to threads."""
    sch = tir.Schedule(MyModule)
    for name in ("linear0", "relu0", "linear1"):
        sch.work_on(name)
        blocks = [b for b in ("Y", "Z") if b != "Z" or name != "relu0"]
        for block in blocks:
            i, j = sch.get_loops(sch.get_block(block))[:2]
            sch.bind(i, "blockIdx.x")
            sch.bind(j, "threadIdx.x")
    return sch.mod


def mlp_inputs(n=3, seed=0):
    rng = np.random.default_rng(seed)
    shapes = [(n, 784), (128, 784), (128,), (10, 128), (10,)]
    return [rng.uniform(-1, 1, s).astype("float32") for s in shapes]


def mlp_reference(x, w0, b0, w1, b1):
    return np.maximum(x @ w0.T + b0, 0) @ w1.T + b1


@pytest.fixture
def fake_gpu(monkeypatch):
    """VMs made in the test keep their tensors on a FakeCuda device, and the kernels built
    in it run on the CPU, as without a GPU (a real one could not read FakeDeviceArrays)."""
    cuda = FakeCuda()
    monkeypatch.setattr(virtual_machine, "vm_memory", lambda device: DeviceMemory(device, cuda))
    monkeypatch.setenv("MLCKIT_CUDA_MODE", "cpu")
    return cuda


def test_a_vm_without_a_gpu_keeps_tensors_on_the_host():
    assert isinstance(vm_memory(mlckit.cpu()), HostMemory)
    assert isinstance(vm_memory(mlckit.cuda(0), cuda=None), (HostMemory, DeviceMemory))
    assert isinstance(vm_memory(mlckit.cuda(0), cuda=FakeCuda()), DeviceMemory)
    assert isinstance(vm_memory(mlckit.cpu(), cuda=FakeCuda()), HostMemory)


def test_inputs_are_copied_to_the_device_once_and_results_stay_there(fake_gpu):
    ex = relax.build(gpu_mlp(), target="cuda")
    vm = relax.VirtualMachine(ex, mlckit.cuda(0))
    args = mlp_inputs()
    out = vm["main"](*args)
    assert vm.memory.copies_in == 5  # x, w0, b0, w1, b1: once each
    assert isinstance(out._mlckit_device_array(), FakeDeviceArray)  # left on the device
    assert fake_gpu.allocs >= 1  # intermediates: storage allocated on the device
    to_host = fake_gpu.to_host
    np.testing.assert_allclose(out.numpy(), mlp_reference(*args), rtol=1e-4, atol=1e-4)
    assert fake_gpu.to_host == to_host + 1  # .numpy(): the one copy back


def test_device_ndarrays_are_taken_as_they_are(fake_gpu):
    ex = relax.build(gpu_mlp(), target="cuda")
    vm = relax.VirtualMachine(ex, mlckit.cuda(0))
    args = mlp_inputs(n=2, seed=1)
    on_device = [mlckit.nd.NDArray(fake_gpu.to_device(a), mlckit.cuda(0)) for a in args]
    out = vm["main"](*on_device)
    assert vm.memory.copies_in == 0
    np.testing.assert_allclose(out.numpy(), mlp_reference(*args), rtol=1e-4, atol=1e-4)


def test_constants_are_copied_to_the_device_once_per_vm(fake_gpu):
    x, w0, b0, w1, b1 = mlp_inputs(n=4, seed=2)
    mod = relax.transform.BindParams("main", {"w0": w0, "b0": b0, "w1": w1, "b1": b1})(
        gpu_mlp())
    vm = relax.VirtualMachine(relax.build(mod, target="cuda"), mlckit.cuda(0))
    assert vm.memory.copies_in == 4  # the four weights, when the VM is made
    for _ in range(2):
        out = vm["main"](x)
        np.testing.assert_allclose(out.numpy(), mlp_reference(x, w0, b0, w1, b1),
                                   rtol=1e-4, atol=1e-4)
    assert vm.memory.copies_in == 6  # and x, once per call


@pytest.mark.gpu
def test_the_mlp_runs_in_gpu_memory():
    from numba import cuda

    ex = relax.build(gpu_mlp(), target="cuda")
    vm = relax.VirtualMachine(ex, mlckit.cuda(0))
    assert isinstance(vm.memory, DeviceMemory)
    args = mlp_inputs(n=5, seed=3)
    out = vm["main"](*args)
    assert vm.memory.copies_in == 5
    assert cuda.is_cuda_array(out._mlckit_device_array())
    np.testing.assert_allclose(out.numpy(), mlp_reference(*args), rtol=1e-4, atol=1e-4)
    again = vm["main"](*[mlckit.nd.array(a, mlckit.cuda(0)) for a in args])
    assert vm.memory.copies_in == 5
    np.testing.assert_allclose(again.numpy(), out.numpy())


def test_a_numpy_library_call_runs_on_host_copies_and_its_result_goes_back(fake_gpu):
    # LegalizeOps without a target lowers a large matmul to mlckit.lib.matmul (NumPy's
    # BLAS): on a GPU it reads host copies of x and w and its result is copied back
    @I.ir_module
    class Matmul:
        @R.function
        def main(x: R.Tensor((16, 256), "float32"), w: R.Tensor((256, 64), "float32")):
            with R.dataflow():
                y = R.matmul(x, w)
                z = R.nn.relu(y)
                R.output(z)
            return z

    mod = relax.transform.LegalizeOps()(Matmul)
    assert "mlckit.lib.matmul" in mod.script()
    with Target("cuda"):
        mod = dl.ApplyDefaultSchedule(dl.gpu.Fallback())(mod)
    vm = relax.VirtualMachine(relax.build(mod, target="cuda"), mlckit.cuda(0))
    rng = np.random.default_rng(3)
    x, w = (rng.uniform(-1, 1, s).astype("float32") for s in [(16, 256), (256, 64)])
    out = vm["main"](x, w)
    assert (vm.memory.copies_in, vm.memory.copies_out) == (3, 2)  # x, w in, y back; x, w out
    np.testing.assert_allclose(out.numpy(), np.maximum(x @ w, 0), rtol=1e-5, atol=1e-5)
