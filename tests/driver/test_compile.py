"""tvm.compile: TIR-only modules become an Executable, modules with Relax a VM executable."""

import numpy as np
import pytest

import mlckit as tvm
from mlckit import relax
from mlckit.script import relax as R
from mlckit.script import tir as T


@tvm.script.ir_module
class ReluModule:
    @T.prim_func
    def relu(x: T.Buffer((4, 8), "float32"), y: T.Buffer((4, 8), "float32")):
        for i, j in T.grid(4, 8):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                y[vi, vj] = T.max(x[vi, vj], T.float32(0))

    @R.function
    def main(x: R.Tensor((4, 8), "float32")):
        cls = ReluModule
        with R.dataflow():
            y = R.call_tir(cls.relu, (x,), out_sinfo=R.Tensor((4, 8), "float32"))
            R.output(y)
        return y


def test_a_module_with_relax_compiles_for_the_vm():
    x = np.random.default_rng(1).standard_normal((4, 8)).astype("float32")
    ex = tvm.compile(ReluModule, tvm.target.Target("llvm", host="llvm"))
    vm = relax.VirtualMachine(ex, tvm.cpu())
    np.testing.assert_array_equal(vm["main"](tvm.runtime.tensor(x)).numpy(), np.maximum(x, 0))


def test_vm_module_times_a_relax_function():
    x = np.ones((4, 8), "float32")
    vm = relax.VirtualMachine(tvm.compile(ReluModule, "llvm"), tvm.cpu())
    result = vm.module.time_evaluator("main", tvm.cpu(), number=3)(x)
    assert result.mean > 0
    np.testing.assert_array_equal(vm.module["main"](x).numpy(), x)


def test_a_kind_without_a_backend_is_named():
    with pytest.raises(tvm.TVMError, match="no backend for target kind 'metal'"):
        tvm.compile(ReluModule["relu"], target="metal")
