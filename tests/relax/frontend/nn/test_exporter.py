"""export_tvm: a model traced into the IRModule TVM prints for it (written out below in
TVM v0.23's spelling), its parameters named and ordered as TVM, and the module compiled and
run equal to NumPy on those parameters."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import mlckit as tvm
from mlckit import relax
from mlckit.ir import assert_structural_equal
from mlckit.relax.frontend import nn
from mlckit.script import from_source
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T


class MLPModel(nn.Module):
    """The model of TVM's quick start and ir_module tutorials."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 256)
        self.relu1 = nn.ReLU()
        self.fc2 = nn.Linear(256, 10)

    def forward(self, x):
        x = self.fc1(x)
        x = self.relu1(x)
        x = self.fc2(x)
        return x


def random(shape, seed, scale=1.0):
    return (np.random.default_rng(seed).uniform(-1, 1, shape) * scale).astype("float32")


def run(mod, func, *arrays, target="llvm"):
    vm = relax.VirtualMachine(tvm.compile(mod, target=target), tvm.cpu())
    return numpy(vm[func](*[tvm.runtime.tensor(a) for a in arrays]))


def numpy(out):
    return [numpy(o) for o in out] if isinstance(out, (list, tuple)) else out.numpy()


def test_mlp_exports_the_module_tvm_prints():
    mod, _ = MLPModel().export_tvm({"forward": {"x": nn.spec.Tensor((1, 784), "float32")}})

    @I.ir_module
    class Expected:
        @R.function
        def forward(x: R.Tensor((1, 784), dtype="float32"),
                    fc1_weight: R.Tensor((256, 784), dtype="float32"),
                    fc1_bias: R.Tensor((256,), dtype="float32"),
                    fc2_weight: R.Tensor((10, 256), dtype="float32"),
                    fc2_bias: R.Tensor((10,), dtype="float32")) -> R.Tensor((1, 10), dtype="float32"):
            R.func_attr({"num_input": 1})
            with R.dataflow():
                permute_dims = R.permute_dims(fc1_weight, axes=None)
                matmul = R.matmul(x, permute_dims, out_dtype="void")
                add = R.add(matmul, fc1_bias)
                relu = R.nn.relu(add)
                permute_dims1 = R.permute_dims(fc2_weight, axes=None)
                matmul1 = R.matmul(relu, permute_dims1, out_dtype="void")
                add1 = R.add(matmul1, fc2_bias)
                gv = add1
                R.output(gv)
            return gv

    assert_structural_equal(mod, Expected)
    # the binding names too, as TVM prints them
    assert mod.script() == Expected.script()


def test_parameters_are_named_by_attribute_path_in_assignment_order():
    mod, params = MLPModel().export_tvm({"forward": {"x": nn.spec.Tensor((1, 784), "float32")}})
    assert [(name, p.shape, p.dtype) for name, p in params] == [
        ("fc1.weight", [256, 784], "float32"), ("fc1.bias", [256], "float32"),
        ("fc2.weight", [10, 256], "float32"), ("fc2.bias", [10], "float32")]
    assert [p.name_hint for p in mod["forward"].params] == [
        "x", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]


def test_symbolic_batch_n_is_one_tir_var_shared_by_input_and_output():
    mod, _ = MLPModel().export_tvm({"forward": {"x": nn.spec.Tensor(("n", 784), "float32")}})

    @I.ir_module
    class Expected:
        @R.function
        def forward(x: R.Tensor(("n", 784), dtype="float32"),
                    fc1_weight: R.Tensor((256, 784), dtype="float32"),
                    fc1_bias: R.Tensor((256,), dtype="float32"),
                    fc2_weight: R.Tensor((10, 256), dtype="float32"),
                    fc2_bias: R.Tensor((10,), dtype="float32")) -> R.Tensor(("n", 10), dtype="float32"):
            n = T.int64()
            R.func_attr({"num_input": 1})
            with R.dataflow():
                permute_dims = R.permute_dims(fc1_weight, axes=None)
                matmul: R.Tensor((n, 256), dtype="float32") = R.matmul(x, permute_dims, out_dtype="void")
                add = R.add(matmul, fc1_bias)
                relu = R.nn.relu(add)
                permute_dims1 = R.permute_dims(fc2_weight, axes=None)
                matmul1 = R.matmul(relu, permute_dims1, out_dtype="void")
                add1 = R.add(matmul1, fc2_bias)
                gv = add1
                R.output(gv)
            return gv

    assert_structural_equal(mod, Expected)


def test_mlp_compiled_and_run_equals_numpy_for_any_batch():
    mod, params = MLPModel().export_tvm({"forward": {"x": nn.spec.Tensor(("n", 784), "float32")}})
    weights = [random(p.shape, seed=i, scale=0.1) for i, (_, p) in enumerate(params)]
    w1, b1, w2, b2 = weights
    for batch in (1, 3):
        x = random((batch, 784), seed=10 + batch)
        want = np.maximum(x @ w1.T + b1, 0) @ w2.T + b2
        np.testing.assert_allclose(run(mod, "forward", x, *weights), want, rtol=1e-4, atol=1e-4)


def test_debug_mode_threads_the_io_effect_as_tvm():
    mod, _ = MLPModel().export_tvm({"forward": {"x": nn.spec.Tensor(("n", 784), "float32")}},
                                   debug=True)

    @I.ir_module
    class Expected:
        @R.function
        def _initialize_effect() -> R.Tuple(R.Object):
            with R.dataflow():
                _io: R.Object = R.null_value()
                lv: R.Tuple(R.Object) = (_io,)
                gv: R.Tuple(R.Object) = lv
                R.output(gv)
            return gv

        @R.function
        def forward(x: R.Tensor(("n", 784), dtype="float32"), _io: R.Object,
                    fc1_weight: R.Tensor((256, 784), dtype="float32"),
                    fc1_bias: R.Tensor((256,), dtype="float32"),
                    fc2_weight: R.Tensor((10, 256), dtype="float32"),
                    fc2_bias: R.Tensor((10,), dtype="float32"),
                    ) -> R.Tuple(R.Tensor(("n", 10), dtype="float32"), R.Tuple(R.Object)):
            n = T.int64()
            R.func_attr({"num_input": 2})
            with R.dataflow():
                permute_dims = R.permute_dims(fc1_weight, axes=None)
                matmul: R.Tensor((n, 256), dtype="float32") = R.matmul(x, permute_dims, out_dtype="void")
                add = R.add(matmul, fc1_bias)
                relu = R.nn.relu(add)
                permute_dims1 = R.permute_dims(fc2_weight, axes=None)
                matmul1 = R.matmul(relu, permute_dims1, out_dtype="void")
                add1 = R.add(matmul1, fc2_bias)
                gv1 = add1, (_io,)
                R.output(gv1)
            return gv1

    assert_structural_equal(mod, Expected)


class Block(nn.Module):
    """A small transformer-ish block: layer norm, single-head softmax attention, an
    embedding added, RMS norm and a GELU feed-forward in a ModuleList."""

    def __init__(self, dim=16):
        self.ln = nn.LayerNorm(dim)
        self.q = nn.Linear(dim, dim, bias=False)
        self.emb = nn.Embedding(10, dim)
        self.norm = nn.RMSNorm(dim, -1, bias=False)
        self.layers = nn.ModuleList([nn.Linear(dim, dim), nn.GELU()])

    def forward(self, x, ids):
        h = self.ln(x)
        q = self.q(h)
        s = nn.op.matmul(q, nn.op.permute_dims(h, [1, 0])) / 4.0
        p = nn.op.softmax(s, axis=-1)
        y = nn.op.matmul(p, h) + self.emb(ids)
        y = self.layers(self.norm(y))
        return y, nn.op.split(y, 2, axis=1)


BLOCK_SPEC = {"forward": {"x": nn.spec.Tensor(("n", 16), "float32"),
                          "ids": nn.spec.Tensor(("n",), "int32")}}


def test_transformer_block_exports_the_module_tvm_prints():
    mod, params = Block().export_tvm(BLOCK_SPEC)
    assert [name for name, _ in params] == ["ln.weight", "ln.bias", "q.weight", "emb.weight",
                                            "norm.weight", "layers.0.weight", "layers.0.bias"]

    @I.ir_module
    class Expected:
        @R.function
        def forward(x: R.Tensor(("n", 16), dtype="float32"), ids: R.Tensor(("n",), dtype="int32"),
                    ln_weight: R.Tensor((16,), dtype="float32"),
                    ln_bias: R.Tensor((16,), dtype="float32"),
                    q_weight: R.Tensor((16, 16), dtype="float32"),
                    emb_weight: R.Tensor((10, 16), dtype="float32"),
                    norm_weight: R.Tensor((16,), dtype="float32"),
                    layers_0_weight: R.Tensor((16, 16), dtype="float32"),
                    layers_0_bias: R.Tensor((16,), dtype="float32"),
                    ) -> R.Tuple(R.Tensor(("n", 16), dtype="float32"),
                                 R.Tuple(R.Tensor(("n", 8), dtype="float32"),
                                         R.Tensor(("n", 8), dtype="float32"))):
            n = T.int64()
            R.func_attr({"num_input": 2})
            with R.dataflow():
                layer_norm = R.nn.layer_norm(x, ln_weight, ln_bias, axes=[-1], epsilon=1e-05,
                                             center=True, scale=True)
                permute_dims = R.permute_dims(q_weight, axes=None)
                matmul = R.matmul(layer_norm, permute_dims, out_dtype="void")
                permute_dims1 = R.permute_dims(layer_norm, axes=[1, 0])
                matmul1 = R.matmul(matmul, permute_dims1, out_dtype="void")
                divide = R.divide(matmul1, R.const(4.0, "float32"))
                softmax = R.nn.softmax(divide, axis=-1)
                matmul2 = R.matmul(softmax, layer_norm, out_dtype="void")
                take = R.take(emb_weight, ids, axis=0, mode="fast")
                add = R.add(matmul2, take)
                rms_norm = R.nn.rms_norm(add, norm_weight, axes=[-1], epsilon=1e-05)
                permute_dims2 = R.permute_dims(layers_0_weight, axes=None)
                matmul3 = R.matmul(rms_norm, permute_dims2, out_dtype="void")
                add1 = R.add(matmul3, layers_0_bias)
                gelu = R.nn.gelu(add1)
                split = R.split(gelu, indices_or_sections=2, axis=1)
                split_0: R.Tensor((n, 8), dtype="float32") = split[0]
                split_1: R.Tensor((n, 8), dtype="float32") = split[1]
                gv = gelu, (split_0, split_1)
                R.output(gv)
            return gv

    assert_structural_equal(mod, Expected)


def test_transformer_block_run_equals_numpy():
    from math import erf

    mod, params = Block().export_tvm(BLOCK_SPEC)
    weights = {name: random(p.shape, seed=i) for i, (name, p) in enumerate(params)}
    x = random((5, 16), seed=20)
    ids = np.array([0, 3, 9, 3, 1], dtype="int32")
    y, (a, b) = run(mod, "forward", x, ids, *weights.values())

    h = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    h = h * weights["ln.weight"] + weights["ln.bias"]
    s = (h @ weights["q.weight"].T) @ h.T / 4.0
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    z = p @ h + weights["emb.weight"][ids]
    z = z / np.sqrt((z * z).mean(-1, keepdims=True) + 1e-5) * weights["norm.weight"]
    z = z @ weights["layers.0.weight"].T + weights["layers.0.bias"]
    want = z * 0.5 * (1 + np.vectorize(erf)(z / np.sqrt(2)))
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.concatenate([a, b], axis=1), want, rtol=1e-4, atol=1e-5)


def test_debug_mode_runs_with_the_effect_from_initialize_effect():
    mod, params = MLPModel().export_tvm({"forward": {"x": nn.spec.Tensor((2, 784), "float32")}},
                                        debug=True)
    vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    effects = vm["_initialize_effect"]()
    weights = [random(p.shape, seed=i, scale=0.1) for i, (_, p) in enumerate(params)]
    x = random((2, 784), seed=7)
    out, returned_effects = vm["forward"](tvm.runtime.tensor(x), *effects,
                                          *[tvm.runtime.tensor(w) for w in weights])
    w1, b1, w2, b2 = weights
    np.testing.assert_allclose(out.numpy(), np.maximum(x @ w1.T + b1, 0) @ w2.T + b2,
                               rtol=1e-4, atol=1e-4)
    assert len(returned_effects) == 1


@settings(deadline=None, derandomize=True, database=None, max_examples=25)
@given(widths=st.lists(st.integers(1, 6), min_size=2, max_size=5), bias=st.booleans(),
       act=st.sampled_from(["ReLU", "SiLU", "GELU", "Identity"]),
       batch=st.sampled_from([1, 3, "n"]))
def test_random_mlps_export_round_trip_through_tvmscript(widths, bias, act, batch):
    class Stack(nn.Module):
        def __init__(self):
            layers = []
            for a, b in zip(widths, widths[1:]):
                layers += [nn.Linear(a, b, bias=bias), getattr(nn, act)()]
            self.layers = nn.ModuleList(layers)

        def forward(self, x):
            return self.layers(x)

    mod, params = Stack().export_tvm(
        {"forward": {"x": nn.spec.Tensor((batch, widths[0]), "float32")}})
    assert [name for name, _ in params] == [
        f"layers.{2 * i}.{w}" for i in range(len(widths) - 1)
        for w in (("weight", "bias") if bias else ("weight",))]
    out = mod["forward"].ret_struct_info
    assert out.dims[1].value == widths[-1]
    assert_structural_equal(from_source(mod.script()), mod)
