"""Library dispatch end to end: an MLP exported with relax.frontend.nn, partitioned for the
numpy codegen, run by RunCodegen and the VM, equals NumPy; cuBLAS without a GPU and CuPy is
refused with a message naming the numpy alternative."""

import numpy as np
import pytest

import mlckit
from mlckit import relax
from mlckit.error import TVMError
from mlckit.relax.backend.contrib.numpy import partition_for_numpy
from mlckit.relax.backend.cuda import cublas
from mlckit.relax.frontend import nn


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 256)
        self.relu1 = nn.ReLU()
        self.fc2 = nn.Linear(256, 10, bias=False)

    def forward(self, x):
        return self.fc2(self.relu1(self.fc1(x)))


def _exported():
    return Mlp().export_tvm({"forward": {"x": nn.spec.Tensor((4, 784), "float32")}})


def test_partition_for_numpy_offloads_both_linear_layers():
    mod, _ = _exported()
    out = partition_for_numpy(mod)
    composites = sorted(f.attrs["Codegen"] + ":" + f.body.blocks[0].bindings[0].value
                        .attrs["Composite"] for f in out.functions.values()
                        if "Codegen" in f.attrs)
    assert composites == ["numpy:numpy.matmul_transposed",
                          "numpy:numpy.matmul_transposed_bias_relu"]


def test_the_offloaded_mlp_equals_numpy():
    mod, params = _exported()
    mod = relax.transform.RunCodegen()(partition_for_numpy(mod))
    ex = mlckit.compile(mod, target="llvm")
    vm = relax.VirtualMachine(ex, mlckit.cpu())
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 784)).astype("float32")
    ws = [rng.standard_normal(p.shape).astype("float32") for _, p in params]
    got = vm["forward"](x, *ws).numpy()
    ref = np.maximum(x @ ws[0].T + ws[1], 0) @ ws[2].T
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-4)


def test_cublas_without_gpu_and_cupy_is_refused_naming_numpy():
    assert cublas._cupy() is None  # this test describes a machine without them
    assert mlckit.get_global_func("relax.ext.cublas", True) is None
    mod, _ = _exported()
    with pytest.raises(TVMError, match=r"cuBLAS needs a GPU and CuPy.*partition_for_numpy"):
        cublas.partition_for_cublas(mod)


def test_run_codegen_for_cublas_without_it_says_what_to_use():
    mod, _ = _exported()
    pattern = relax.backend.get_pattern("cublas.matmul_transposed_bias_relu")
    mod = relax.transform.FuseOpsByPattern([pattern], annotate_codegen=True)(mod)
    with pytest.raises(TVMError, match=r"relax\.ext\.cublas.*partition_for_numpy"):
        relax.transform.RunCodegen()(mod)


def test_on_a_gpu_vm_the_numpy_functions_read_host_copies(monkeypatch):
    # a VM keeping its tensors on a (stand-in) GPU: the library call copies its inputs to
    # the host and its result back
    from mlckit.runtime.vm import virtual_machine
    from mlckit.runtime.vm.memory import DeviceMemory

    from ...runtime.vm.test_memory import FakeCuda

    cuda = FakeCuda()
    monkeypatch.setattr(virtual_machine, "vm_memory", lambda device: DeviceMemory(device, cuda))
    monkeypatch.setenv("MLCKIT_CUDA_MODE", "cpu")
    mod, params = _exported()
    mod = relax.transform.RunCodegen()(partition_for_numpy(mod))
    vm = relax.VirtualMachine(mlckit.compile(mod, target="cuda"), mlckit.cuda(0))
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 784)).astype("float32")
    ws = [rng.standard_normal(p.shape).astype("float32") for _, p in params]
    got = vm["forward"](x, *ws)
    assert cuda.to_dev >= 2 and cuda.to_host >= 4  # two library calls, each out and back
    ref = np.maximum(x @ ws[0].T + ws[1], 0) @ ws[2].T
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-5, atol=1e-4)
