"""FuseOps: groups by post-dominators, fused functions as TVM builds them, same results."""

import numpy as np
import pytest

import mlckit
from mlckit import relax, tir, topi
from mlckit.ir import assert_structural_equal
from mlckit.ir.transform import PassContext
from mlckit.relax.transform import AnnotateTIROpPattern, FuseOps

R = relax  # TVM's tests spell struct infos R.Tensor; here TensorStructInfo


def _fuse(mod, **ctx):
    with PassContext(**ctx):
        return FuseOps()(AnnotateTIROpPattern()(mod))


def _check(before, expected):
    assert_structural_equal(_fuse(before), AnnotateTIROpPattern()(expected))


def _tensor(shape, dtype="float32"):
    return relax.TensorStructInfo(shape, dtype)


def _run(mod, *args, target="llvm"):
    vm = relax.VirtualMachine(relax.build(mod, target), mlckit.cpu())
    return vm["main"](*args).numpy()


# -- element-wise chains ---------------------------------------------------------------------------
def _add_exp_squeeze():
    bb = relax.BlockBuilder()
    x = relax.Var("x", _tensor((10, 20)))
    with bb.function("main", [x]):
        with bb.dataflow():
            lv0 = bb.emit_te(topi.add, x, relax.const(1, "float32"))
            lv1 = bb.emit_te(topi.exp, lv0)
            gv = bb.emit_output(bb.call_te(topi.squeeze, lv1))
        bb.emit_func_output(gv)
    return bb.get()


def test_elementwise_chain_becomes_one_function():
    bb = relax.BlockBuilder()
    x = relax.Var("x", _tensor((10, 20)))
    p0 = relax.Var("p0", _tensor(()))
    with bb.function("fused_add_exp_squeeze", [x, p0], attrs={"Primitive": True}, private=True):
        with bb.dataflow():
            lv0 = bb.emit_te(topi.add, x, p0)
            lv1 = bb.emit_te(topi.exp, lv0)
            gv = bb.emit_output(bb.call_te(topi.squeeze, lv1))
        bb.emit_func_output(gv)
    fused = bb.get().get_global_var("fused_add_exp_squeeze")
    x = relax.Var("x", _tensor((10, 20)))
    with bb.function("main", [x]):
        with bb.dataflow():
            gv = bb.emit_output(relax.Call(fused, [x, relax.const(1, "float32")]))
        bb.emit_func_output(gv)
    _check(_add_exp_squeeze(), bb.get())


def test_fused_module_prints_as_tvm():
    text = _fuse(_add_exp_squeeze()).script()
    assert '''    @R.function(private=True)
    def fused_add_exp_squeeze(x: R.Tensor((10, 20), dtype="float32"), param_0: R.Tensor((), dtype="float32")) -> R.Tensor((10, 20), dtype="float32"):
        R.func_attr({"Primitive": True})
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.add, (x, param_0), out_sinfo=R.Tensor((10, 20), dtype="float32"))
            lv1 = R.call_tir(cls.exp, (lv,), out_sinfo=R.Tensor((10, 20), dtype="float32"))
            gv = R.call_tir(cls.squeeze, (lv1,), out_sinfo=R.Tensor((10, 20), dtype="float32"))
            R.output(gv)
        return gv''' in text
    assert '''        with R.dataflow():
            gv: R.Tensor((10, 20), dtype="float32") = cls.fused_add_exp_squeeze(x, R.const(1.0, "float32"))
            R.output(gv)''' in text


@pytest.mark.parametrize("target", ["llvm", "lnumpy"])
def test_fused_module_computes_the_same(target):
    x = np.random.default_rng(1).standard_normal((10, 20)).astype("float32")
    np.testing.assert_allclose(_run(_fuse(_add_exp_squeeze()), x, target=target),
                               np.exp(x + 1), rtol=1e-5)


def test_opt_level_zero_fuses_nothing():
    mod = AnnotateTIROpPattern()(_add_exp_squeeze())
    assert_structural_equal(_fuse(mod, opt_level=0), mod)
    assert_structural_equal(FuseOps(fuse_opt_level=0)(mod), mod)


def test_max_depth_bounds_a_group():
    def fused_names(depth):
        fused = _fuse(_add_exp_squeeze(), config={"relax.FuseOps.max_depth": depth})
        return sorted(gv.name_hint for gv in fused.functions if gv.name_hint.startswith("fused"))

    # add joins exp (2 nodes); the group of 2 cannot take squeeze as well
    assert fused_names(2) == ["fused_add_exp"]
    assert fused_names(1) == []


# -- the course's MLP -------------------------------------------------------------------------------
def _mlp(x_shape=(1, 784)):
    rng = np.random.default_rng(0)
    w0, b0 = rng.standard_normal((128, 784)), rng.standard_normal((128,))
    w1, b1 = rng.standard_normal((10, 128)), rng.standard_normal((10,))
    consts = [relax.const(a, "float32") for a in (w0, b0, w1, b1)]
    bb = relax.BlockBuilder()
    x = relax.Var("x", _tensor(x_shape))
    with bb.function("main", [x]):
        with bb.dataflow():
            lv0 = bb.emit_te(topi.nn.dense, x, consts[0])
            lv1 = bb.emit_te(topi.add, lv0, consts[1])
            lv2 = bb.emit_te(topi.nn.relu, lv1)
            lv3 = bb.emit_te(topi.nn.dense, lv2, consts[2])
            lv4 = bb.emit_te(topi.add, lv3, consts[3])
            gv = bb.emit_output(lv4)
        bb.emit_func_output(gv)
    return bb.get(), [c.data for c in consts]


def test_mlp_gives_dense_add_relu_and_dense_add():
    before, (w0, b0, w1, b1) = _mlp()
    consts = [relax.const(a) for a in (w0, b0, w1, b1)]
    bb = relax.BlockBuilder()
    x, p0, p1 = (relax.Var(n, s) for n, s in [("x", _tensor((1, 784))),
                                              ("param_0", _tensor((128, 784))),
                                              ("param_1", _tensor((128,)))])
    with bb.function("fused_dense_add_relu", [x, p0, p1], {"Primitive": True}, private=True):
        with bb.dataflow():
            lv = bb.emit_te(topi.nn.dense, x, p0, primfunc_name_hint="dense")
            lv = bb.emit_te(topi.add, lv, p1, primfunc_name_hint="add")
            gv = bb.emit_output(bb.call_te(topi.nn.relu, lv, primfunc_name_hint="relu"))
        bb.emit_func_output(gv)
    y, q0, q1 = (relax.Var(n, s) for n, s in [("lv2", _tensor((1, 128))),
                                              ("param_0", _tensor((10, 128))),
                                              ("param_1", _tensor((10,)))])
    with bb.function("fused_dense1_add1", [y, q0, q1], {"Primitive": True}, private=True):
        with bb.dataflow():
            lv = bb.emit_te(topi.nn.dense, y, q0, primfunc_name_hint="dense1")
            gv = bb.emit_output(bb.call_te(topi.add, lv, q1, primfunc_name_hint="add1"))
        bb.emit_func_output(gv)
    mod = bb.get()
    f1, f2 = mod.get_global_var("fused_dense_add_relu"), mod.get_global_var("fused_dense1_add1")
    x = relax.Var("x", _tensor((1, 784)))
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit(relax.Call(f1, [x, consts[0], consts[1]]))
            lv1 = bb.emit(relax.Call(f2, [lv, consts[2], consts[3]]))
            gv = bb.emit_output(lv1)
        bb.emit_func_output(gv)
    _check(before, bb.get())


@pytest.mark.parametrize("target", ["llvm", "lnumpy"])
def test_mlp_results_are_unchanged(target):
    mod, (w0, b0, w1, b1) = _mlp()
    x = np.random.default_rng(2).standard_normal((1, 784)).astype("float32")
    expected = np.maximum(x @ w0.T + b0, 0) @ w1.T + b1
    np.testing.assert_allclose(_run(_fuse(mod), x, target=target), expected, rtol=1e-4,
                               atol=1e-4)


# -- diamonds ---------------------------------------------------------------------------------------
def test_diamond_fuses_dense_into_its_post_dominator():
    """TVM's conv2d test with dense: lv1 feeds lv2 and lv3, which meet again at lv3; of the
    two denses meeting at gv only the first joins it (a group takes one anchor)."""

    def params():
        return (relax.Var("x", _tensor((4, 16))), relax.Var("w1", _tensor((16, 16))),
                relax.Var("w2", _tensor((8, 16))), relax.Var("w3", _tensor((8, 16))))

    def before():
        bb = relax.BlockBuilder()
        x, w1, w2, w3 = params()
        with bb.function("main", [x, w1, w2, w3]):
            with bb.dataflow():
                lv0 = bb.emit_te(topi.add, x, relax.const(1, "float32"))
                lv1 = bb.emit_te(topi.nn.dense, lv0, w1)
                lv2 = bb.emit_te(topi.add, relax.const(1, "float32"), lv1)
                lv3 = bb.emit_te(topi.add, lv1, lv2)
                lv4 = bb.emit_te(topi.nn.dense, lv3, w2)
                lv5 = bb.emit_te(topi.nn.dense, lv3, w3)
                gv = bb.emit_output(bb.call_te(topi.add, lv4, lv5))
            bb.emit_func_output(gv)
        return bb.get()

    def expected():
        bb = relax.BlockBuilder()
        x, w, p0 = (relax.Var("x", _tensor((4, 16))), relax.Var("w", _tensor((16, 16))),
                    relax.Var("p0", _tensor(())))
        with bb.function("fused_dense_add1_add2", [x, w, p0], {"Primitive": True},
                         private=True):
            with bb.dataflow():
                lv0 = bb.emit_te(topi.nn.dense, x, w, primfunc_name_hint="dense")
                lv1 = bb.emit_te(topi.add, p0, lv0, primfunc_name_hint="add1")
                gv = bb.emit_output(bb.call_te(topi.add, lv0, lv1, primfunc_name_hint="add2"))
            bb.emit_func_output(gv)
        x, w, y = (relax.Var("x", _tensor((4, 16))), relax.Var("w", _tensor((8, 16))),
                   relax.Var("y", _tensor((4, 8))))
        with bb.function("fused_dense1_add3", [x, w, y], {"Primitive": True}, private=True):
            with bb.dataflow():
                lv0 = bb.emit_te(topi.nn.dense, x, w, primfunc_name_hint="dense1")
                gv = bb.emit_output(bb.call_te(topi.add, lv0, y, primfunc_name_hint="add3"))
            bb.emit_func_output(gv)
        mod = bb.get()
        f1, f2 = mod.get_global_var("fused_dense_add1_add2"), mod.get_global_var(
            "fused_dense1_add3")
        x, w1, w2, w3 = params()
        with bb.function("main", [x, w1, w2, w3]):
            with bb.dataflow():
                lv0 = bb.emit_te(topi.add, x, relax.const(1, "float32"), primfunc_name_hint="add")
                lv1 = bb.emit(relax.Call(f1, [lv0, w1, relax.const(1, "float32")]))
                lv2 = bb.emit_te(topi.nn.dense, lv1, w3, primfunc_name_hint="dense1")
                gv = bb.emit_output(relax.Call(f2, [lv1, w2, lv2]))
            bb.emit_func_output(gv)
        return bb.get()

    _check(before(), expected())
    rng = np.random.default_rng(3)
    x, w1, w2, w3 = (rng.standard_normal(s).astype("float32")
                     for s in [(4, 16), (16, 16), (8, 16), (8, 16)])
    lv1 = (x + 1) @ w1.T
    lv3 = lv1 + (1 + lv1)
    np.testing.assert_allclose(_run(_fuse(before()), x, w1, w2, w3),
                               lv3 @ w2.T + lv3 @ w3.T, rtol=1e-4, atol=1e-4)


def test_two_functions_share_one_fused_function():
    bb = relax.BlockBuilder()
    for name in ("func1", "main"):
        x = relax.Var("x", _tensor((10, 20)))
        with bb.function(name, [x]):
            with bb.dataflow():
                lv0 = bb.emit_te(topi.add, x, relax.const(1, "float32"))
                lv1 = bb.emit_te(topi.exp, lv0)
                gv = bb.emit_output(lv1)
            bb.emit_func_output(gv)
    fused = _fuse(bb.get())
    names = sorted(gv.name_hint for gv, f in fused.functions.items()
                   if isinstance(f, relax.Function))
    # both bodies fuse to structurally equal functions: the module keeps one
    assert names == ["func1", "fused_add_exp", "main"]
    for name in ("func1", "main"):
        call = fused[name].body.blocks[0].bindings[0].value
        assert call.op.name_hint == "fused_add_exp"


def test_primitive_functions_and_dps_packed_calls_are_left_alone():
    bb = relax.BlockBuilder()
    x = relax.Var("x", _tensor((10, 20)))
    with bb.function("main", [x]):
        with bb.dataflow():
            lv0 = bb.emit_te(topi.exp, x)
            lv1 = bb.emit(relax.op.call_dps_packed("my_exp", [lv0], _tensor((10, 20))))
            gv = bb.emit_output(bb.call_te(topi.exp, lv1))
        bb.emit_func_output(gv)
    mod = AnnotateTIROpPattern()(bb.get())
    assert_structural_equal(_fuse(mod), mod)
    fused_once = _fuse(_add_exp_squeeze())
    assert_structural_equal(_fuse(fused_once), fused_once)


# -- symbolic shapes and tuples ----------------------------------------------------------------------
def test_symbolic_shapes_get_fresh_variables():
    def module(with_fusion: bool):
        n, m = tir.Var("n", "int64"), tir.Var("m", "int64")
        bb = relax.BlockBuilder()
        if with_fusion:
            fn, fm = tir.Var("n", "int64"), tir.Var("m", "int64")
            x, p0 = relax.Var("x", _tensor((fn, fm))), relax.Var("p", _tensor(()))
            with bb.function("fused_add_exp", [x, p0], {"Primitive": True}, private=True):
                with bb.dataflow():
                    lv = bb.emit_te(topi.add, x, p0)
                    gv = bb.emit_output(bb.call_te(topi.exp, lv))
                bb.emit_func_output(gv)
            fused = bb.get().get_global_var("fused_add_exp")
        x = relax.Var("x", _tensor((n, m)))
        with bb.function("main", [x]):
            with bb.dataflow():
                if with_fusion:
                    gv = bb.emit_output(relax.Call(fused, [x, relax.const(1, "float32")]))
                else:
                    lv = bb.emit_te(topi.add, x, relax.const(1, "float32"))
                    gv = bb.emit_output(bb.call_te(topi.exp, lv))
            bb.emit_func_output(gv)
        return bb.get()

    _check(module(False), module(True))
    x = np.random.default_rng(4).standard_normal((3, 5)).astype("float32")
    np.testing.assert_allclose(_run(_fuse(module(False)), x), np.exp(x + 1), rtol=1e-5)


def test_tuple_parameter_read_by_field_is_passed_by_field():
    t_sinfo = relax.TupleStructInfo([_tensor((2,)), _tensor((2,)), _tensor((2,))])

    def before():
        bb = relax.BlockBuilder()
        x = relax.Var("x", t_sinfo)
        with bb.function("main", [x]):
            with bb.dataflow():
                x0 = bb.emit(relax.TupleGetItem(x, 0))
                y0 = bb.emit_te(topi.add, x0, relax.const(1, "float32"))
                y1 = bb.emit_te(topi.divide, y0, relax.const(2, "float32"))
                gv = bb.emit_output(y1)
            bb.emit_func_output(gv)
        return bb.get()

    def expected():
        bb = relax.BlockBuilder()
        x0, p0, p1 = (relax.Var("x_0", _tensor((2,))), relax.Var("param_0", _tensor(())),
                      relax.Var("param_1", _tensor(())))
        with bb.function("fused_add_divide", [x0, p0, p1], {"Primitive": True}, private=True):
            with bb.dataflow():
                y0 = bb.emit_te(topi.add, x0, p0)
                gv = bb.emit_output(bb.call_te(topi.divide, y0, p1))
            bb.emit_func_output(gv)
        fused = bb.get().get_global_var("fused_add_divide")
        x = relax.Var("x", t_sinfo)
        with bb.function("main", [x]):
            with bb.dataflow():
                lv = bb.emit(relax.TupleGetItem(x, 0))
                lv1 = bb.emit(relax.Call(fused, [lv, relax.const(1, "float32"),
                                                 relax.const(2, "float32")]))
                gv = bb.emit_output(lv1)
            bb.emit_func_output(gv)
        return bb.get()

    _check(before(), expected())


def test_group_with_two_outputs_returns_a_tuple():
    """lv1 is read by the group and, as the block output gv1, after it."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", _tensor((4,)))
    with bb.function("main", [x]):
        with bb.dataflow():
            lv0 = bb.emit_te(topi.exp, x)
            gv1 = bb.emit_output(bb.call_te(topi.add, lv0, relax.const(1, "float32")))
            gv2 = bb.emit_output(bb.call_te(topi.exp, lv0))
        bb.emit_func_output(relax.Tuple([gv1, gv2]))
    mod = bb.get()
    fused = _fuse(mod)
    x_np = np.arange(4, dtype="float32") / 4
    out = relax.VirtualMachine(relax.build(fused, "llvm"), mlckit.cpu())["main"](x_np)
    np.testing.assert_allclose(out[0].numpy(), np.exp(x_np) + 1, rtol=1e-6)
    np.testing.assert_allclose(out[1].numpy(), np.exp(np.exp(x_np)), rtol=1e-6)
