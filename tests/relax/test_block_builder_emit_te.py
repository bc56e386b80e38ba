"""BlockBuilder.emit_te / call_te: te functions become PrimFuncs called with R.call_tir.

The course's examples (te_matmul then te_relu on 128x128; the Fashion-MNIST MLP) are built,
compared with the TVMScript TVM prints for them, and run against NumPy.
"""

import numpy as np
import pytest

import mlckit
from mlckit import relax, te, tir
from mlckit.ir import assert_structural_equal
from mlckit.relax.analysis import well_formed
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T


def te_matmul(A, B):
    assert A.shape[1] == B.shape[0]
    k = te.reduce_axis((0, A.shape[1]), name="k")
    return te.compute((A.shape[0], B.shape[1]),
                      lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="matmul")


def te_relu(A):
    return te.compute(A.shape, lambda *i: te.max(A(*i), 0), name="relu")


def te_dense(X, W):
    k = te.reduce_axis((0, X.shape[1]), name="k")
    return te.compute((X.shape[0], W.shape[0]),
                      lambda i, j: te.sum(X[i, k] * W[j, k], axis=k), name="dense")


def te_bias_add(X, B):
    return te.compute(X.shape, lambda i, j: X[i, j] + B[j], name="add")


def _vm(mod):
    return relax.VirtualMachine(relax.build(mod, target="llvm"), mlckit.cpu())


@I.ir_module
class CourseModule:
    @T.prim_func(private=True)
    def te_matmul(A: T.Buffer((T.int64(128), T.int64(128)), "float32"),
                  B: T.Buffer((T.int64(128), T.int64(128)), "float32"),
                  matmul: T.Buffer((T.int64(128), T.int64(128)), "float32")):
        T.func_attr({"tir.noalias": True})
        for i, j, k in T.grid(T.int64(128), T.int64(128), T.int64(128)):
            with T.block("matmul"):
                v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    matmul[v_i, v_j] = T.float32(0.0)
                matmul[v_i, v_j] = matmul[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]

    @T.prim_func(private=True)
    def te_relu(lv: T.Buffer((T.int64(128), T.int64(128)), "float32"),
                relu: T.Buffer((T.int64(128), T.int64(128)), "float32")):
        T.func_attr({"tir.noalias": True})
        for i0, i1 in T.grid(T.int64(128), T.int64(128)):
            with T.block("relu"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                relu[v_i0, v_i1] = T.max(lv[v_i0, v_i1], T.float32(0.0))

    @R.function
    def main(A: R.Tensor((128, 128), dtype="float32"),
             B: R.Tensor((128, 128), dtype="float32")) -> R.Tensor((128, 128), dtype="float32"):
        cls = CourseModule
        with R.dataflow():
            lv = R.call_tir(cls.te_matmul, (A, B), out_sinfo=R.Tensor((128, 128), "float32"))
            lv1 = R.call_tir(cls.te_relu, (lv,), out_sinfo=R.Tensor((128, 128), "float32"))
            gv = lv1
            R.output(gv)
        return gv


def test_course_matmul_relu_equals_script_and_runs():
    A = relax.Var("A", relax.TensorStructInfo((128, 128), "float32"))
    B = relax.Var("B", relax.TensorStructInfo((128, 128), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main"):
        with bb.dataflow():
            C = bb.emit_te(te_matmul, A, B)
            D = bb.emit_te(te_relu, C)
            out = bb.emit_output(D)
        bb.emit_func_output(out, params=[A, B])
    mod = bb.get()
    assert type(C) is relax.DataflowVar and isinstance(C, relax.Var)
    assert_structural_equal(mod, CourseModule)
    assert well_formed(mod)
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((128, 128)).astype("float32") for _ in range(2))
    np.testing.assert_allclose(_vm(mod)["main"](a, b).numpy(), np.maximum(a @ b, 0),
                               rtol=1e-4, atol=1e-4)


@T.prim_func(private=True)
def expected_dense(x: T.Buffer((T.int64(1), T.int64(784)), "float32"),
                   B: T.Buffer((T.int64(128), T.int64(784)), "float32"),
                   dense: T.Buffer((T.int64(1), T.int64(128)), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, j, k in T.grid(T.int64(1), T.int64(128), T.int64(784)):
        with T.block("dense"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            with T.init():
                dense[v_i, v_j] = T.float32(0.0)
            dense[v_i, v_j] = dense[v_i, v_j] + x[v_i, v_k] * B[v_j, v_k]


def _mlp(x, params):
    bb = relax.BlockBuilder()
    with bb.function("main"):
        with bb.dataflow():
            lv = bb.emit_te(te_dense, x, relax.const(params["w0"], "float32"))
            lv = bb.emit_te(te_bias_add, lv, relax.const(params["b0"], "float32"))
            lv = bb.emit_te(te_relu, lv)
            lv = bb.emit_te(te_dense, lv, relax.const(params["w1"], "float32"))
            lv = bb.emit_te(te_bias_add, lv, relax.const(params["b1"], "float32"))
            gv = bb.emit_output(lv)
        bb.emit_func_output(gv, [x])
    return bb.get()


def _numpy_mlp(img, p):
    return np.maximum(img @ p["w0"].T + p["b0"], 0) @ p["w1"].T + p["b1"]


def test_fashion_mlp_built_with_emit_te_runs_like_numpy():
    from mlckit.models import fashion_mlp

    params = fashion_mlp()
    mod = _mlp(relax.Var("x", relax.TensorStructInfo((1, 784), "float32")), params)
    assert sorted(gv.name_hint for gv in mod.get_global_vars()) == [
        "main", "te_bias_add", "te_bias_add1", "te_dense", "te_dense1", "te_relu"]
    assert_structural_equal(mod["te_dense"], expected_dense)  # constants are "B", "C", ...
    calls = [b.value for b in mod["main"].body.blocks[0].bindings[:-1]]
    assert [c.args[0].name_hint for c in calls] == [
        "te_dense", "te_bias_add", "te_relu", "te_dense1", "te_bias_add1"]
    assert [c.struct_info.dims[1].value for c in calls] == [128, 128, 128, 10, 10]
    assert well_formed(mod)
    img = np.random.default_rng(1).random((1, 784)).astype("float32")
    np.testing.assert_allclose(_vm(mod)["main"](img).numpy(), _numpy_mlp(img, params),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("batch", [1, 5])
def test_mlp_with_a_symbolic_batch_runs_for_any_batch(batch):
    from mlckit.models import fashion_mlp

    params = fashion_mlp()
    n = tir.Var("n", "int64")
    mod = _mlp(relax.Var("x", relax.TensorStructInfo((n, 784), "float32")), params)
    ret = mod["main"].ret_struct_info
    assert ret.dims[0] is mod["main"].params[0].struct_info.dims[0]  # the caller's n
    assert mod["te_dense"].params[0] is not n  # the PrimFunc has its own copy of n
    img = np.random.default_rng(batch).random((batch, 784)).astype("float32")
    np.testing.assert_allclose(_vm(mod)["main"](img).numpy(), _numpy_mlp(img, params),
                               rtol=1e-5, atol=1e-5)


@I.ir_module
class TirVarsModule:
    @T.prim_func(private=True)
    def te_func(var_y: T.handle, var_compute: T.handle, n: T.int64):
        T.func_attr({"tir.noalias": True})
        y = T.match_buffer(var_y, (n + T.int64(1),))
        compute = T.match_buffer(var_compute, (n + T.int64(1),))
        for i in range(n + T.int64(1)):
            with T.block("compute"):
                v_i = T.axis.spatial(n + T.int64(1), i)
                compute[v_i] = y[v_i] * T.float32(2.0)

    @R.function
    def rx_func(x: R.Tensor(("n",), dtype="float32"), y: R.Tensor(("n + 1",), dtype="float32")):
        n = T.int64()
        cls = TirVarsModule
        gv = R.call_tir(cls.te_func, (y,), out_sinfo=R.Tensor((n + 1,), dtype="float32"),
                        tir_vars=R.shape([n]))
        return gv


def test_symbolic_var_not_defined_by_the_inputs_goes_to_tir_vars():
    n = tir.Var("n", "int64")
    x = relax.Var("x", relax.TensorStructInfo([n], "float32"))
    y = relax.Var("y", relax.TensorStructInfo([n + 1], "float32"))

    def te_func(A):
        return te.compute(A.shape, lambda i: A[i] * 2.0)

    bb = relax.BlockBuilder()
    with bb.function("rx_func", [x, y]):
        out = bb.emit_te(te_func, y)
        bb.emit_func_output(out)
    mod = bb.get()
    assert_structural_equal(mod, TirVarsModule)
    result = _vm(mod)["rx_func"](np.ones(3, "float32"), np.arange(4, dtype="float32"))
    np.testing.assert_allclose(result.numpy(), 2 * np.arange(4, dtype="float32"))


def test_equal_prim_funcs_are_shared_and_others_get_unique_names():
    n, m = tir.Var("n", "int64"), tir.Var("m", "int64")
    x = relax.Var("x", relax.TensorStructInfo([n, m], "float32"))
    y = relax.Var("y", relax.TensorStructInfo([n, m], "float32"))
    z = relax.Var("z", relax.TensorStructInfo([4, m], "float32"))

    def te_func(A):
        return te.compute((4, 4), lambda i, j: A[i, j] + 1.0)

    bb = relax.BlockBuilder()
    with bb.function("rx_func", [x, y, z]):
        x1 = bb.emit_te(te_func, x)
        y1 = bb.emit_te(te_func, y)
        z1 = bb.emit_te(te_func, z)
        bb.emit_func_output([x1, y1, z1])
    mod = bb.get()
    callees = [b.value.args[0].name_hint for b in mod["rx_func"].body.blocks[0].bindings]
    assert callees == ["te_func", "te_func", "te_func1"]
    assert sum(isinstance(f, tir.PrimFunc) for _, f in mod.functions.items()) == 2
    a = np.arange(24, dtype="float32").reshape(4, 6)
    outs = _vm(mod)["rx_func"](a, a, a)
    for out in outs:
        np.testing.assert_allclose(out.numpy(), a[:4, :4] + 1)


def test_call_te_passes_lists_dicts_and_keywords_and_names_the_prim_func():
    x = relax.Var("x", relax.TensorStructInfo((4, 4), "float32"))
    y = relax.Var("y", relax.TensorStructInfo((4, 4), "float32"))
    z = relax.Var("z", relax.TensorStructInfo((4, 4), "float32"))

    def te_func(args, args_dict, msg):
        assert msg == "hello"
        A, B = args
        C = args_dict["C"]
        D = te.compute((4, 4), lambda i, j: A[i, j] + B[i, j])
        return te.compute((4, 4), lambda i, j: D[i, j] - C[i, j])

    bb = relax.BlockBuilder()
    with bb.function("rx_func", [x, y, z]):
        with bb.dataflow():
            call = bb.call_te(te_func, [x, y], {"C": z}, msg="hello",
                              primfunc_name_hint="sub_of_sum")
            out = bb.emit_output(call)
        bb.emit_func_output(out)
    mod = bb.get()
    (binding,) = mod["rx_func"].body.blocks[0].bindings
    assert binding.var is out and binding.value.args[0].name_hint == "sub_of_sum"
    assert list(binding.value.args[1].fields) == [x, y, z]
    prim = mod["sub_of_sum"]
    assert [prim.buffer_map[p].name for p in prim.params] == ["x", "y", "z", "compute"]
    rng = np.random.default_rng(2)
    a, b, c = (rng.standard_normal((4, 4)).astype("float32") for _ in range(3))
    np.testing.assert_allclose(_vm(mod)["rx_func"](a, b, c).numpy(), a + b - c, rtol=1e-6)


def test_multiple_outputs_and_a_scalar_argument():
    m = tir.Var("m", "int64")
    a = relax.Var("a", relax.TensorStructInfo((m,), "float32"))
    s = relax.Var("s", relax.PrimStructInfo("float32"))

    def two(A, scale):
        return te.compute(A.shape, lambda i: (A[i] + 1.0, A[i] * scale), name="B")

    bb = relax.BlockBuilder()
    with bb.function("main", [a, s]):
        t = bb.emit_te(two, a, s)
        bb.emit_func_output(relax.Tuple([relax.TupleGetItem(t, 1), relax.TupleGetItem(t, 0)]))
    mod = bb.get()
    call = mod["main"].body.blocks[0].bindings[0].value
    assert_structural_equal(call.sinfo_args[0], relax.TupleStructInfo(
        [relax.TensorStructInfo((m,), "float32")] * 2))
    assert [p.dtype for p in mod["two"].params] == ["handle", "float32", "handle", "handle"]
    scaled, plus_one = _vm(mod)["main"](np.arange(3, dtype="float32"), 2.5)
    np.testing.assert_allclose(scaled.numpy(), [0.0, 2.5, 5.0])
    np.testing.assert_allclose(plus_one.numpy(), [1.0, 2.0, 3.0])


@I.ir_module
class WithPackedRelu:
    @R.function
    def main(x: R.Tensor((2, 3), "float32")):
        with R.dataflow():
            lv = R.call_dps_packed("my.relu", (x,), out_sinfo=R.Tensor((2, 3), "float32"))
            gv = R.call_dps_packed("my.relu", (lv,), out_sinfo=R.Tensor((2, 3), "float32"))
            R.output(gv)
        return gv


@I.ir_module
class LoweredRelu:
    @T.prim_func(private=True)
    def te_relu(x: T.Buffer((T.int64(2), T.int64(3)), "float32"),
                relu: T.Buffer((T.int64(2), T.int64(3)), "float32")):
        T.func_attr({"tir.noalias": True})
        for i0, i1 in T.grid(T.int64(2), T.int64(3)):
            with T.block("relu"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                relu[v_i0, v_i1] = T.max(x[v_i0, v_i1], T.float32(0.0))

    @R.function
    def main(x: R.Tensor((2, 3), "float32")):
        cls = LoweredRelu
        with R.dataflow():
            lv = R.call_tir(cls.te_relu, (x,), out_sinfo=R.Tensor((2, 3), "float32"))
            gv = R.call_tir(cls.te_relu, (lv,), out_sinfo=R.Tensor((2, 3), "float32"))
            R.output(gv)
        return gv


def test_mutator_lowers_calls_with_builder_call_te_as_the_course_does():
    @relax.expr_functor.mutator
    class LowerToTensorIR(relax.PyExprMutator):
        def __init__(self, mod):
            super().__init__()
            self.mod_ = mod

        def visit_call_(self, call):
            call = self.visit_expr_post_order(call)
            if (call.op == mlckit.ir.Op.get("relax.call_dps_packed")
                    and call.args[0].global_symbol == "my.relu"):
                return self.builder_.call_te(te_relu, call.args[1].fields[0])
            return call

        def transform(self):
            for global_var, func in self.mod_.functions.items():
                if isinstance(func, relax.Function):
                    self.builder_.update_func(global_var, self.visit_expr(func))
            return self.builder_.get()

    mod = LowerToTensorIR(WithPackedRelu).transform()
    # both calls make the same PrimFunc up to names (parameter "x", then "lv"): one is kept
    assert_structural_equal(mod, LoweredRelu)
    x = np.array([[-1, 2, -3], [4, -5, 6]], "float32")
    np.testing.assert_allclose(_vm(mod)["main"](x).numpy(), np.maximum(x, 0))


def test_emit_te_errors_say_what_and_why():
    x = relax.Var("x", relax.TensorStructInfo(ndim=2, dtype="float32"))
    y = relax.Var("y", relax.TensorStructInfo((2, 2), "float32"))
    bb = relax.BlockBuilder()
    with pytest.raises(mlckit.TVMError, match=r"emit_te needs tensors of known shape, but "
                                              r"argument 'x' has struct info "
                                              r"R.Tensor\(\"float32\", ndim=2\)"):
        with bb.function("main", [x]):
            bb.emit_te(te_relu, x)
    with pytest.raises(mlckit.TVMError, match=r"not_a_tensor must return a te.Tensor or a "
                                              r"list of them, got int"):
        with bb.function("main", [y]):
            def not_a_tensor(A):
                return 3

            bb.emit_te(not_a_tensor, y)
    with pytest.raises(mlckit.TVMError, match=r"cannot pass 'y' with struct info R.Object"):
        with bb.function("main", [y]):
            bb.emit_te(te_relu, relax.Var("y", relax.ObjectStructInfo()))
