"""nn.op's calls of one's own code — nn.extern (a registered packed function),
nn.tensor_expr_op (a te function) and nn.tensor_ir_op (a PrimFunc) — as in TVM's
relax_creation tutorial: the IR TVM prints, and the numbers NumPy gives."""

import numpy as np
import pytest

import mlckit as tvm
from mlckit import relax, topi
from mlckit.error import TVMError
from mlckit.ir import assert_structural_equal
from mlckit.relax.frontend import nn
from mlckit.script import relax as R
from mlckit.script import tir as T


@T.prim_func
def tir_linear(x: T.handle, w: T.handle, b: T.handle, z: T.handle):
    M, N, K = T.int64(), T.int64(), T.int64()
    X = T.match_buffer(x, (M, K), "float32")
    W = T.match_buffer(w, (N, K), "float32")
    B = T.match_buffer(b, (N,), "float32")
    Z = T.match_buffer(z, (M, N), "float32")
    for i, j, k in T.grid(M, N, K):
        with T.block("linear"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Z[vi, vj] = 0
            Z[vi, vj] = Z[vi, vj] + X[vi, vk] * W[vj, vk]
    for i, j in T.grid(M, N):
        with T.block("add"):
            vi, vj = T.axis.remap("SS", [i, j])
            Z[vi, vj] = Z[vi, vj] + B[vj]


class NNModuleWithTIR(nn.Module):
    def __init__(self):
        self.fc1 = nn.Linear(784, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        n = x.shape[0]
        x = nn.extern("env.linear", [x, self.fc1.weight, self.fc1.bias],
                      out=nn.Tensor.placeholder((n, 128), "float32"))
        x = nn.tensor_expr_op(topi.nn.relu, "relu", [x])
        x = nn.tensor_ir_op(tir_linear, "tir_linear", [x, self.fc2.weight, self.fc2.bias],
                            out=nn.Tensor.placeholder((n, 10), "float32"))
        return x


SPEC = {"forward": {"x": nn.spec.Tensor(("n", 784), "float32")}}


def test_extern_te_and_tir_calls_export_as_tvm_prints_them():
    mod, _ = NNModuleWithTIR().export_tvm(SPEC)
    assert sorted(gv.name_hint for gv in mod.get_global_vars()) == ["forward", "relu",
                                                                    "tir_linear"]
    assert_structural_equal(mod["tir_linear"], tir_linear)

    @R.function
    def forward(x: R.Tensor(("n", 784), dtype="float32"),
                fc1_weight: R.Tensor((128, 784), dtype="float32"),
                fc1_bias: R.Tensor((128,), dtype="float32"),
                fc2_weight: R.Tensor((10, 128), dtype="float32"),
                fc2_bias: R.Tensor((10,), dtype="float32")) -> R.Tensor(("n", 10), dtype="float32"):
        n = T.int64()
        R.func_attr({"num_input": 1})
        with R.dataflow():
            env_linear = R.call_dps_packed("env.linear", (x, fc1_weight, fc1_bias),
                                           out_sinfo=R.Tensor((n, 128), dtype="float32"))
            lv = R.call_tir(mod.get_global_var("relu"), (env_linear,),
                            out_sinfo=R.Tensor((n, 128), dtype="float32"))
            lv1 = R.call_tir(mod.get_global_var("tir_linear"), (lv, fc2_weight, fc2_bias),
                             out_sinfo=R.Tensor((n, 10), dtype="float32"))
            gv = lv1
            R.output(gv)
        return gv

    assert_structural_equal(mod["forward"], forward.with_attr("global_symbol", "forward"))
    assert 'env_linear = R.call_dps_packed("env.linear"' in mod.script()


def test_extern_te_and_tir_calls_run_equal_to_numpy():
    @tvm.register_func("env.linear", override=True)
    def linear(x, w, b, out):
        np.add(np.asarray(x) @ np.asarray(w).T, np.asarray(b), out=np.asarray(out))

    mod, params = NNModuleWithTIR().export_tvm(SPEC)
    rng = np.random.default_rng(0)
    weights = [rng.uniform(-0.1, 0.1, p.shape).astype("float32") for _, p in params]
    x = rng.uniform(-1, 1, (2, 784)).astype("float32")
    vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    out = vm["forward"](*[tvm.nd.array(a) for a in (x, *weights)]).numpy()
    w1, b1, w2, b2 = weights
    want = np.maximum(x @ w1.T + b1, 0) @ w2.T + b2
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)


def test_tensor_ir_op_with_a_bad_argument_names_it():
    class Bad(nn.Module):
        def forward(self, x):
            return nn.tensor_ir_op(tir_linear, "tir_linear", [x, "w"],
                                   out=nn.Tensor.placeholder((1, 1), "float32"))

    with pytest.raises(TVMError, match=r"nn.tensor_ir_op\('tir_linear'\): args\[1\] is str"):
        Bad().export_tvm({"forward": {"x": nn.spec.Tensor((1, 1), "float32")}})


def test_extern_without_an_output_description_says_how_to_give_one():
    class Bad(nn.Module):
        def forward(self, x):
            return nn.extern("env.f", [x], out=(1, 2))

    with pytest.raises(TVMError, match=r"nn.extern\('env.f'\): out must be an nn.Tensor.*"
                                       r"nn.Tensor.placeholder"):
        Bad().export_tvm({"forward": {"x": nn.spec.Tensor((1, 1), "float32")}})


def test_print_is_refused_naming_the_missing_vm_builtin():
    class Prints(nn.Module):
        def forward(self, x):
            nn.print_(x)
            return x

    with pytest.raises(TVMError, match="vm.builtin.invoke_debug_func"):
        Prints().export_tvm({"forward": {"x": nn.spec.Tensor((1,), "float32")}}, debug=True)
