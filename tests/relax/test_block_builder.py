"""relax.BlockBuilder: functions, dataflow blocks, naming, normalization, the module.

Each built module is compared with the TVMScript it should equal, and run where it computes.
"""

import numpy as np
import pytest

import mlckit
from mlckit import relax, tir
from mlckit.ir import assert_structural_equal
from mlckit.relax.analysis import well_formed
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T

F32_4x4 = relax.TensorStructInfo((4, 4), "float32")


@T.prim_func
def mul(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"),
        C: T.Buffer((4, 4), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] * B[vi, vj]


@T.prim_func
def add(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"),
        C: T.Buffer((4, 4), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + B[vi, vj]


mul_gv = relax.BlockBuilder().add_func(mul, "mul")  # a GlobalVar "mul" for standalone scripts


def _vars():
    return relax.Var("x", F32_4x4), relax.Var("y", F32_4x4)


def _run(mod, *args):
    vm = relax.VirtualMachine(relax.build(mod, target="llvm"), mlckit.cpu())
    return vm["main"](*args).numpy()


def _data(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((4, 4)).astype("float32") for _ in range(2)]


# -- functions and blocks ------------------------------------------------------------------------
def test_dataflow_function_with_call_tir_equals_script_and_runs():
    bb = relax.BlockBuilder()
    x, y = _vars()
    gv_mul = bb.add_func(mul, "mul")
    gv_add = bb.add_func(add, "add")
    with bb.function("main", [x, y]):
        with bb.dataflow():
            lv = bb.emit(relax.op.call_tir(gv_mul, [x, y], F32_4x4))
            lv1 = bb.emit(relax.op.call_tir(gv_add, [lv, y], F32_4x4))
            gv = bb.emit_output(lv1)
        bb.emit_func_output(gv)

    @I.ir_module
    class Expected:
        mul = mul  # the kernel above

        add = add  # the kernel above

        @R.function
        def main(x: R.Tensor((4, 4), "float32"), y: R.Tensor((4, 4), "float32")):
            cls = Expected
            with R.dataflow():
                lv = R.call_tir(cls.mul, (x, y), out_sinfo=R.Tensor((4, 4), "float32"))
                lv1 = R.call_tir(cls.add, (lv, y), out_sinfo=R.Tensor((4, 4), "float32"))
                gv = lv1
                R.output(gv)
            return gv

    mod = bb.get()
    assert_structural_equal(mod, Expected)
    assert well_formed(mod)
    a, b = _data()
    np.testing.assert_allclose(_run(mod, a, b), a * b + b, rtol=1e-6)


def test_names_are_lv_inside_dataflow_and_gv_outside_as_tvm():
    bb = relax.BlockBuilder()
    x, y = _vars()
    gv_mul = bb.add_func(mul, "mul")
    with bb.function("func", [x, y]):
        with bb.dataflow():
            lv0 = bb.emit(relax.op.call_tir(gv_mul, [x, y], F32_4x4))
            lv1 = bb.emit(relax.op.call_tir(gv_mul, [lv0, y], F32_4x4))
            gv0 = bb.emit_output(lv1)
        gv1 = bb.emit(relax.op.call_tir(gv_mul, [gv0, gv0], F32_4x4))
        with bb.dataflow():
            lv2 = bb.emit(relax.op.call_tir(gv_mul, [gv1, gv1], F32_4x4))
            gv2 = bb.emit_output(lv2)
        bb.emit_func_output(gv2)
    assert [v.name_hint for v in (lv0, lv1, gv0, gv1, lv2, gv2)] == \
        ["lv", "lv1", "gv", "gv1", "lv2", "gv2"]
    assert [type(v) for v in (lv0, gv0, gv1)] == [relax.DataflowVar, relax.Var, relax.Var]
    func = bb.get()["func"]
    assert [len(b.bindings) for b in func.body.blocks] == [3, 1, 2]
    assert func.body.body is gv2
    text = bb.get().script()
    assert "lv1 = R.call_tir(cls.mul, (lv, y)" in text
    assert "gv1 = R.call_tir(cls.mul, (gv, gv)" in text


def test_name_supply_is_shared_by_the_functions_of_one_builder():
    bb = relax.BlockBuilder()
    gv_mul = bb.add_func(mul, "mul")
    names = []
    for fname in ("func1", "func2"):
        x, y = _vars()
        with bb.function(fname, [x, y]):
            with bb.dataflow():
                lv = bb.emit(relax.op.call_tir(gv_mul, [x, y], F32_4x4))
                gv = bb.emit_output(lv, name_hint="out")
            bb.emit_func_output(gv)
        names += [lv.name_hint, gv.name_hint]
    assert names == ["lv", "out", "lv1", "out1"]
    assert bb.get_unique_name("out") == "out2"
    assert bb.get_unique_name("fused.add") == "fused_add"


def test_params_given_to_emit_func_output_as_the_course_does():
    x, y = _vars()

    def build(params_first: bool):
        bb = relax.BlockBuilder()
        gv_mul = bb.add_func(mul, "mul")
        with bb.function("main", [x, y] if params_first else None):
            with bb.dataflow():
                lv = bb.emit(relax.op.call_tir(gv_mul, [x, y], F32_4x4))
                out = bb.emit_output(lv)
            if params_first:
                bb.emit_func_output(out)
            else:
                bb.emit_func_output(out, params=[x, y])
        return bb.get()

    first, last = build(True), build(False)
    assert_structural_equal(first, last)
    assert last["main"].params == [x, y]
    assert last["main"].attrs == {"global_symbol": "main"}


def test_emit_binds_nested_calls_first():
    bb = relax.BlockBuilder()
    x, y = _vars()
    gv_mul = bb.add_func(mul, "mul")
    with bb.function("main", [x, y]):
        with bb.dataflow():
            inner = relax.op.call_tir(gv_mul, [x, y], F32_4x4)
            lv = bb.emit(relax.op.call_tir(gv_mul, [inner, y], F32_4x4), "outer")
            gv = bb.emit_output(lv)
        bb.emit_func_output(gv)

    @I.ir_module
    class Expected:
        mul = mul  # the kernel above

        @R.function
        def main(x: R.Tensor((4, 4), "float32"), y: R.Tensor((4, 4), "float32")):
            cls = Expected
            with R.dataflow():
                lv = R.call_tir(cls.mul, (x, y), out_sinfo=R.Tensor((4, 4), "float32"))
                outer = R.call_tir(cls.mul, (lv, y), out_sinfo=R.Tensor((4, 4), "float32"))
                gv = outer
                R.output(gv)
            return gv

    mod = bb.get()
    assert_structural_equal(mod, Expected)
    assert [b.var.name_hint for b in mod["main"].body.blocks[0].bindings] == ["lv", "outer", "gv"]
    a, b = _data(1)
    np.testing.assert_allclose(_run(mod, a, b), a * b * b, rtol=1e-6)


def test_function_output_that_is_a_call_gets_a_gv_binding():
    bb = relax.BlockBuilder()
    x, y = _vars()
    gv_add = bb.add_func(add, "add")
    with bb.function("main", [x, y]):
        gv = bb.emit(relax.op.call_tir(gv_add, [x, y], F32_4x4))
        bb.emit_func_output(relax.op.call_tir(gv_add, [gv, x], F32_4x4))

    @I.ir_module
    class Expected:
        add = add  # the kernel above

        @R.function
        def main(x: R.Tensor((4, 4), "float32"), y: R.Tensor((4, 4), "float32")):
            cls = Expected
            gv = R.call_tir(cls.add, (x, y), out_sinfo=R.Tensor((4, 4), "float32"))
            gv1 = R.call_tir(cls.add, (gv, x), out_sinfo=R.Tensor((4, 4), "float32"))
            return gv1

    mod = bb.get()
    assert_structural_equal(mod, Expected)
    assert len(mod["main"].body.blocks) == 1  # the output binding joins the open block
    assert mod["main"].body.body.name_hint == "gv1"
    a, b = _data(2)
    np.testing.assert_allclose(_run(mod, a, b), a + b + a, rtol=1e-6)


def test_tuple_output_and_match_cast_with_a_symbolic_dim():
    n = tir.Var("n", "int64")
    x = relax.Var("x", relax.TensorStructInfo(ndim=2, dtype="float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.match_cast(x, relax.TensorStructInfo((n, 4), "float32"))
            assert isinstance(lv, relax.DataflowVar)
            gv = bb.emit_output(relax.op.shape_of(lv))
        bb.emit_func_output([gv, x])

    @R.function
    def expected(x: R.Tensor(ndim=2, dtype="float32")):
        n = T.int64()
        with R.dataflow():
            lv = R.match_cast(x, R.Tensor((n, 4), "float32"))
            gv = R.shape_of(lv)
            R.output(gv)
        return (gv, x)

    func = bb.get()["main"]
    assert_structural_equal(func.without_attr("global_symbol"),
                            expected.without_attr("global_symbol"))
    assert func.ret_struct_info.fields[0].ndim == 2 and func.ret_struct_info.fields[0].values is None


def test_emit_outside_a_dataflow_block_binds_vars():
    bb = relax.BlockBuilder()
    x, y = _vars()
    gv_mul = bb.add_func(mul, "mul")
    with bb.function("main", [x, y]):
        gv = bb.emit(relax.op.call_tir(gv_mul, [x, y], F32_4x4))
        assert type(gv) is relax.Var and gv.name_hint == "gv"
        assert not bb.current_block_is_dataflow()
        assert bb.lookup_binding(gv).args[0] is gv_mul
        assert bb.lookup_binding(x) is None
        assert relax.BlockBuilder.current() is bb
        bb.emit_func_output(gv)
    assert relax.BlockBuilder.current() is None


def test_nested_seq_expr_is_flattened_into_the_block():
    bb = relax.BlockBuilder()
    x, y = _vars()
    gv_mul = bb.add_func(mul, "mul")
    with bb.function("inner", [x, y]):
        a = bb.emit(relax.op.call_tir(gv_mul, [x, y], F32_4x4), "a")
        bb.emit_func_output(a)
    seq = bb.get()["inner"].body
    with bb.function("main", [x, y]):
        e = bb.emit(seq, "e")
        out = bb.emit(relax.op.call_tir(gv_mul, [e, e], F32_4x4), "f")
        bb.emit_func_output(out)

    @R.function
    def expected(x: R.Tensor((4, 4), "float32"), y: R.Tensor((4, 4), "float32")):
        a = R.call_tir(mul_gv, (x, y), out_sinfo=R.Tensor((4, 4), "float32"))
        e = a
        f = R.call_tir(mul_gv, (e, e), out_sinfo=R.Tensor((4, 4), "float32"))
        return f

    func = bb.get()["main"]
    assert [b.var.name_hint for b in func.body.blocks[0].bindings] == ["a", "e", "f"]
    assert_structural_equal(func.without_attr("global_symbol"),
                            expected.without_attr("global_symbol"))


def test_get_is_a_snapshot_and_the_input_module_is_not_changed():
    @I.ir_module
    class Start:
        mul = mul  # the kernel above

    bb = relax.BlockBuilder(Start)
    before = bb.get()
    gv = bb.add_func(add, "add")
    assert gv.name_hint == "add" and "add" in bb.get() and "add" not in before
    assert len(Start.functions) == 1


# -- add_func / update_func ----------------------------------------------------------------------
def test_add_func_reuses_a_structurally_equal_function_and_keeps_names_unique():
    @T.prim_func
    def mul_again(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"),
                  C: T.Buffer((4, 4), "float32")):
        for i, j in T.grid(4, 4):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] * B[vi, vj]

    bb = relax.BlockBuilder()
    gv1 = bb.add_func(mul.without_attr("global_symbol"), "mul")
    # equal (both private, as emit_te makes them): deduplicated
    assert bb.add_func(mul_again.without_attr("global_symbol"), "other_name") is gv1
    assert bb.add_func(mul_again, "mul_again").name_hint == "mul_again"  # public: differs
    gv2 = bb.add_func(add, "mul")  # a different function under a taken name
    assert (gv1.name_hint, gv2.name_hint) == ("mul", "mul1")
    assert sorted(gv.name_hint for gv in bb.get().get_global_vars()) == ["mul", "mul1",
                                                                          "mul_again"]


def test_add_func_dedups_against_the_module_given_to_the_builder():
    mod = relax.BlockBuilder()
    gv = mod.add_func(mul, "kernel")
    start = mod.get()
    bb = relax.BlockBuilder(start)
    assert bb.add_func(mul, "anything") is gv
    assert bb.add_func(add, "kernel").name_hint == "kernel1"


def test_update_func_replaces_and_adds():
    bb = relax.BlockBuilder()
    gv = bb.add_func(mul, "kernel")
    bb.update_func(gv, add)
    assert bb.get()[gv] is add
    assert bb.add_func(add, "again") is gv  # the dedup table follows the update
    assert bb.add_func(mul, "mul").name_hint == "mul"
    new_gv = relax.BlockBuilder().add_func(mul, "elsewhere")
    bb.update_func(new_gv, mul)  # a GlobalVar the module does not have yet: added
    assert bb.get()["elsewhere"] is mul


def test_finalize_names_public_functions_after_their_global_symbol():
    bb = relax.BlockBuilder()
    x, y = _vars()
    # a private PrimFunc (as emit_te adds them) takes the name "main" first
    kernel = bb.add_func(mul.without_attr("global_symbol"), "main")
    with bb.function("main", [x, y]):
        gv = bb.emit(relax.op.call_tir(kernel, [x, y], F32_4x4))
        main_gv = bb.emit_func_output(gv)
    assert main_gv.name_hint == "main1"
    assert bb.get()["main1"].attrs["global_symbol"] == "main"
    mod = bb.finalize()
    assert sorted(g.name_hint for g in mod.get_global_vars()) == ["main", "main1"]
    assert isinstance(mod["main"], relax.Function)
    assert isinstance(mod["main1"], tir.PrimFunc)
    assert well_formed(mod)
    a, b = _data(3)
    np.testing.assert_allclose(_run(mod, a, b), a * b, rtol=1e-6)


# -- relax.const and relax.Var -------------------------------------------------------------------
@pytest.mark.parametrize("value, dtype, expected", [
    (1, None, np.array(1, "int32")),
    (1.5, None, np.array(1.5, "float32")),
    (True, None, np.array(True)),
    ([1, 2], None, np.array([1, 2], "int32")),
    (3, "int64", np.array(3, "int64")),
    (np.arange(4.0), None, np.arange(4.0, dtype="float32")),
    (np.arange(4), "float32", np.arange(4, dtype="float32")),
    (np.arange(4, dtype="int8"), None, np.arange(4, dtype="int8")),
])
def test_const_dtypes_follow_tvm(value, dtype, expected):
    c = relax.const(value, dtype)
    assert isinstance(c, relax.Constant)
    assert c.data.dtype == expected.dtype
    np.testing.assert_array_equal(c.data, expected)
    assert c.struct_info.dtype == expected.dtype.name


def test_const_of_an_ndarray_and_its_struct_info():
    w = np.random.default_rng(0).standard_normal((128, 784)).astype("float32")
    c = relax.const(mlckit.nd.array(w), "float32")
    np.testing.assert_array_equal(c.data, w)
    assert_structural_equal(c.struct_info, relax.TensorStructInfo((128, 784), "float32"))
    assert relax.const(mlckit.nd.array(w), "float16").data.dtype == np.float16


def test_var_takes_a_struct_info_or_an_annotation():
    a = relax.Var("A", relax.TensorStructInfo((128, 128), "float32"))
    b = relax.Var("B", R.Tensor((128, 128), "float32"))
    assert_structural_equal(a.struct_info, b.struct_info)
    assert [int(d.value) for d in a.struct_info.shape.values] == [128, 128]
    assert a.struct_info.shape.values[0].dtype == "int64"
    assert a.vid is a.vid and a.vid.name_hint == "A"


# -- running a whole model built with the builder ---------------------------------------------------
def test_mlp_with_constant_weights_runs_like_numpy():
    from mlckit.models import fashion_mlp
    from tests.runtime.vm.mlp_modules import linear0, linear1, relu0

    params = fashion_mlp()
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((1, 784), "float32"))
    k0, k1, k2 = (bb.add_func(f, name) for f, name in
                  ((linear0, "linear0"), (relu0, "relu0"), (linear1, "linear1")))
    with bb.function("main", [x]):
        with bb.dataflow():
            lv0 = bb.emit(relax.op.call_tir(k0, [x, relax.const(params["w0"]),
                                                 relax.const(params["b0"])],
                                            relax.TensorStructInfo((1, 128), "float32")))
            lv1 = bb.emit(relax.op.call_tir(k1, [lv0], relax.TensorStructInfo((1, 128), "float32")))
            out = bb.emit(relax.op.call_tir(k2, [lv1, relax.const(params["w1"]),
                                                 relax.const(params["b1"])],
                                            relax.TensorStructInfo((1, 10), "float32")))
            gv = bb.emit_output(out)
        bb.emit_func_output(gv)
    mod = bb.get()
    assert well_formed(mod)
    img = np.random.default_rng(5).random((1, 784)).astype("float32")
    want = np.maximum(img @ params["w0"].T + params["b0"], 0) @ params["w1"].T + params["b1"]
    np.testing.assert_allclose(_run(mod, img), want, rtol=1e-5, atol=1e-5)
