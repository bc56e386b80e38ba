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


def test_the_tutorials_model_partitioned_with_cublas_patterns_is_what_tvm_prints():
    # TVM 0.27: FuseOpsByPattern(get_patterns_with_prefix("cublas"), annotate_codegen=True)
    # on the Customize Optimization tutorial's model (batch 1), as it prints it
    from mlckit.ir import assert_structural_equal
    from mlckit.script import ir as I
    from mlckit.script import relax as R

    @I.ir_module
    class Expected:
        @R.function
        def forward(x: R.Tensor((1, 784), dtype="float32"),
                    fc1_weight: R.Tensor((256, 784), dtype="float32"),
                    fc1_bias: R.Tensor((256,), dtype="float32"),
                    fc2_weight: R.Tensor((10, 256), dtype="float32")
                    ) -> R.Tensor((1, 10), dtype="float32"):
            R.func_attr({"num_input": 1})
            cls = Expected
            with R.dataflow():
                lv: R.Tensor((1, 256), dtype="float32") = \
                    cls.fused_relax_permute_dims_relax_matmul_relax_add_relax_nn_relu_cublas(
                        fc1_weight, x, fc1_bias)
                lv_1: R.Tensor((1, 10), dtype="float32") = \
                    cls.fused_relax_permute_dims_relax_matmul_cublas(fc2_weight, lv)
                gv: R.Tensor((1, 10), dtype="float32") = lv_1
                R.output(gv)
            return gv

        @R.function
        def fused_relax_permute_dims_relax_matmul_cublas(
                fc2_weight: R.Tensor((10, 256), dtype="float32"),
                lv: R.Tensor((1, 256), dtype="float32")) -> R.Tensor((1, 10), dtype="float32"):
            R.func_attr({"Codegen": "cublas"})

            @R.function
            def local_func(fc2_weight_1: R.Tensor((10, 256), dtype="float32"),
                           lv_1: R.Tensor((1, 256), dtype="float32")
                           ) -> R.Tensor((1, 10), dtype="float32"):
                R.func_attr({"Composite": "cublas.matmul_transposed"})
                with R.dataflow():
                    permute_dims1: R.Tensor((256, 10), dtype="float32") = \
                        R.permute_dims(fc2_weight_1, axes=None)
                    gv: R.Tensor((1, 10), dtype="float32") = \
                        R.matmul(lv_1, permute_dims1, out_dtype=None)
                    R.output(gv)
                return gv

            output: R.Tensor((1, 10), dtype="float32") = local_func(fc2_weight, lv)
            return output

        @R.function
        def fused_relax_permute_dims_relax_matmul_relax_add_relax_nn_relu_cublas(
                fc1_weight: R.Tensor((256, 784), dtype="float32"),
                x: R.Tensor((1, 784), dtype="float32"),
                fc1_bias: R.Tensor((256,), dtype="float32")
                ) -> R.Tensor((1, 256), dtype="float32"):
            R.func_attr({"Codegen": "cublas"})

            @R.function
            def local_func(fc1_weight_1: R.Tensor((256, 784), dtype="float32"),
                           x_1: R.Tensor((1, 784), dtype="float32"),
                           fc1_bias_1: R.Tensor((256,), dtype="float32")
                           ) -> R.Tensor((1, 256), dtype="float32"):
                R.func_attr({"Composite": "cublas.matmul_transposed_bias_relu"})
                with R.dataflow():
                    permute_dims: R.Tensor((784, 256), dtype="float32") = \
                        R.permute_dims(fc1_weight_1, axes=None)
                    matmul: R.Tensor((1, 256), dtype="float32") = \
                        R.matmul(x_1, permute_dims, out_dtype=None)
                    add: R.Tensor((1, 256), dtype="float32") = R.add(matmul, fc1_bias_1)
                    gv: R.Tensor((1, 256), dtype="float32") = R.nn.relu(add)
                    R.output(gv)
                return gv

            output: R.Tensor((1, 256), dtype="float32") = local_func(fc1_weight, x, fc1_bias)
            return output

    mod, _ = Mlp().export_tvm({"forward": {"x": nn.spec.Tensor((1, 784), "float32")}})
    patterns = relax.backend.get_patterns_with_prefix("cublas")
    out = relax.transform.FuseOpsByPattern(patterns, annotate_codegen=True)(mod)
    assert_structural_equal(out, Expected)
    assert out.script().count("def local_func(") == 2
