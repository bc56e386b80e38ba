"""RunCodegen: each Codegen function goes to its codegen (relax.ext.<name>) and its calls
become R.call_dps_packed of the function's global symbol, as TVM 0.27 prints them; the VM
runs the library functions and the results equal NumPy's."""

import numpy as np
import pytest

import mlckit
from mlckit import relax
from mlckit.error import TVMError
from mlckit.ir import assert_structural_equal
from mlckit.relax.backend.patterns import make_matmul_pattern
from mlckit.relax.transform import FuseOpsByPattern, RunCodegen
from mlckit.script import ir as I
from mlckit.script import relax as R


@I.ir_module
class Mlp:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), w: R.Tensor((3, 4), "float32"),
             b: R.Tensor((4,), "float32")):
        with R.dataflow():
            lv = R.matmul(x, w)
            lv1 = R.add(lv, b)
            lv2 = R.nn.relu(lv1)
            gv = R.multiply(lv2, lv2)
            R.output(gv)
        return gv


def _partitioned(codegen="numpy"):
    pat, ann = make_matmul_pattern(True, "relax.nn.relu")
    return FuseOpsByPattern([(f"{codegen}.matmul_bias_relu", pat, ann)],
                            annotate_codegen=True)(Mlp)


def test_calls_of_codegen_functions_become_call_dps_packed():
    # TVM 0.27 prints: lv = R.call_dps_packed("fused_..._numpy", (x, w, b), out_ty=...)
    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((2, 3), dtype="float32"), w: R.Tensor((3, 4), dtype="float32"),
                 b: R.Tensor((4,), dtype="float32")) -> R.Tensor((2, 4), dtype="float32"):
            with R.dataflow():
                lv = R.call_dps_packed("fused_relax_matmul_relax_add_relax_nn_relu_numpy",
                                       (x, w, b), out_sinfo=R.Tensor((2, 4), dtype="float32"))
                gv: R.Tensor((2, 4), dtype="float32") = R.multiply(lv, lv)
                R.output(gv)
            return gv

    out = RunCodegen()(_partitioned())
    assert_structural_equal(mlckit.IRModule(dict(out.functions)), Expected)  # attrs below
    (ext,) = out.attrs["external_mods"]
    assert ext.get_source() == (
        "def fused_relax_matmul_relax_add_relax_nn_relu_numpy(x, w, b, out):\n"
        "    # numpy.matmul_bias_relu\n"
        "    lv = np.matmul(x, w)\n"
        "    lv1 = np.add(lv, b)\n"
        "    out[...] = np.maximum(lv1, 0)\n")


def test_the_vm_runs_the_library_function():
    ex = relax.build(RunCodegen()(_partitioned()), target="llvm")
    vm = relax.VirtualMachine(ex, mlckit.cpu())
    rng = np.random.default_rng(1)
    x, w, b = (rng.standard_normal(s).astype("float32") for s in ((2, 3), (3, 4), (4,)))
    got = vm["main"](x, w, b).numpy()
    ref = np.maximum(x @ w + b, 0) ** 2
    np.testing.assert_allclose(got, ref, rtol=1e-6)


def test_a_module_without_codegen_functions_is_unchanged():
    assert RunCodegen()(Mlp) is Mlp


def test_a_codegen_that_is_not_registered_is_named():
    with pytest.raises(TVMError, match=r"relax\.ext\.mylib is not registered.*"
                                       r"fused_relax_matmul_relax_add_relax_nn_relu_mylib"):
        RunCodegen()(_partitioned("mylib"))
