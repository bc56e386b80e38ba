"""LegalizeOps: high-level operator calls become R.call_tir of TVM's PrimFuncs, chosen by the
operator strategy (logged on ``mlckit.strategy``)."""

import logging

import numpy as np
import pytest

import mlckit
from mlckit import relax, topi
from mlckit.ir import assert_structural_equal
from mlckit.relax import strategy
from mlckit.relax.transform import LegalizeOps
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T
from mlckit.target import Target


def run(mod, *args, target="llvm"):
    ex = relax.build(mod, target)
    vm = relax.VirtualMachine(ex, mlckit.cpu())
    return vm["main"](*[mlckit.nd.array(a) for a in args]).numpy()


@I.ir_module
class Add:
    @R.function
    def main(x: R.Tensor((1, 2, 3), "float32"), y: R.Tensor((4, 3, 2, 1), "float32")):
        gv: R.Tensor((4, 3, 2, 3), "float32") = R.add(x, y)
        return gv


def test_add_becomes_call_tir_of_topi_add():
    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((1, 2, 3), "float32"), y: R.Tensor((4, 3, 2, 1), "float32")):
            gv = R.call_tir(Expected.add, (x, y), R.Tensor((4, 3, 2, 3), dtype="float32"))
            return gv

        @T.prim_func(private=True)
        def add(rxplaceholder: T.Buffer((T.int64(1), T.int64(2), T.int64(3)), "float32"),
                rxplaceholder_1: T.Buffer((T.int64(4), T.int64(3), T.int64(2), T.int64(1)), "float32"),
                T_add: T.Buffer((T.int64(4), T.int64(3), T.int64(2), T.int64(3)), "float32")):
            T.func_attr({"tir.noalias": True})
            for i0, i1, i2, i3 in T.grid(T.int64(4), T.int64(3), T.int64(2), T.int64(3)):
                with T.block("T_add"):
                    ax0, ax1, ax2, ax3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                    T.reads(rxplaceholder[T.int64(0), ax2, ax3], rxplaceholder_1[ax0, ax1, ax2, T.int64(0)])
                    T.writes(T_add[ax0, ax1, ax2, ax3])
                    T_add[ax0, ax1, ax2, ax3] = rxplaceholder[T.int64(0), ax2, ax3] + rxplaceholder_1[ax0, ax1, ax2, T.int64(0)]

    assert_structural_equal(LegalizeOps()(Add), Expected)


def test_unlegalized_module_builds_and_runs():
    a = np.random.rand(1, 2, 3).astype("float32")
    b = np.random.rand(4, 3, 2, 1).astype("float32")
    np.testing.assert_allclose(run(Add, a, b), a + b, rtol=1e-6)
    np.testing.assert_allclose(run(Add, a, b, target="lnumpy"), a + b, rtol=1e-6)


def test_the_choice_is_logged(caplog):
    with caplog.at_level(logging.INFO, logger="mlckit.strategy"):
        LegalizeOps()(Add)
    assert "relax.add -> add.generic (level 10) for target llvm" in caplog.text


def test_exp_becomes_tir_exp():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((2, 3), "float32")) -> R.Tensor((2, 3), "float32"):
            gv: R.Tensor((2, 3), "float32") = R.exp(x)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((2, 3), "float32")) -> R.Tensor((2, 3), "float32"):
            gv = R.call_tir(Expected.tir_exp, (x,), R.Tensor((2, 3), dtype="float32"))
            return gv

        @T.prim_func(private=True)
        def tir_exp(rxplaceholder: T.Buffer((T.int64(2), T.int64(3)), "float32"),
                    compute: T.Buffer((T.int64(2), T.int64(3)), "float32")):
            T.func_attr({"tir.noalias": True})
            for i0, i1 in T.grid(T.int64(2), T.int64(3)):
                with T.block("compute"):
                    i0_1, i1_1 = T.axis.remap("SS", [i0, i1])
                    T.reads(rxplaceholder[i0_1, i1_1])
                    T.writes(compute[i0_1, i1_1])
                    compute[i0_1, i1_1] = T.exp(rxplaceholder[i0_1, i1_1])

    assert_structural_equal(LegalizeOps()(Before), Expected)


def test_symbolic_add_gets_a_dynamic_prim_func():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((1, "c", "d"), "float32"), y: R.Tensor(("a", "b", "c", 1), "float32")):
            a = T.int64()
            b = T.int64()
            c = T.int64()
            d = T.int64()
            gv: R.Tensor((a, b, c, d), "float32") = R.add(x, y)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((1, "c", "d"), "float32"), y: R.Tensor(("a", "b", "c", 1), "float32")):
            a = T.int64()
            b = T.int64()
            c = T.int64()
            d = T.int64()
            gv = R.call_tir(Expected.add, (x, y), R.Tensor((a, b, c, d), dtype="float32"))
            return gv

        @T.prim_func(private=True)
        def add(var_rxplaceholder: T.handle, var_rxplaceholder_1: T.handle, var_T_add: T.handle):
            T.func_attr({"tir.noalias": True})
            a = T.int64()
            b = T.int64()
            c = T.int64()
            d = T.int64()
            rxplaceholder = T.match_buffer(var_rxplaceholder, [T.int64(1), c, d], dtype="float32")
            rxplaceholder_1 = T.match_buffer(var_rxplaceholder_1, [a, b, c, T.int64(1)], dtype="float32")
            T_add = T.match_buffer(var_T_add, [a, b, c, d], dtype="float32")
            for i0, i1, i2, i3 in T.grid(a, b, c, d):
                with T.block("T_add"):
                    ax0, ax1, ax2, ax3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                    T.reads(rxplaceholder[T.int64(0), ax2, ax3], rxplaceholder_1[ax0, ax1, ax2, T.int64(0)])
                    T.writes(T_add[ax0, ax1, ax2, ax3])
                    T_add[ax0, ax1, ax2, ax3] = rxplaceholder[T.int64(0), ax2, ax3] + rxplaceholder_1[ax0, ax1, ax2, T.int64(0)]

    assert_structural_equal(LegalizeOps()(Before), Expected)


def test_astype_becomes_topi_cast_and_a_constant_is_folded():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((2, 3, 4), "float32")):
            gv: R.Tensor((2, 3, 4), "int32") = R.astype(x, "int32")
            c: R.Tensor((), "int32") = R.astype(R.const(1.5, "float32"), "int32")
            return (gv, c)

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((2, 3, 4), "float32")):
            gv = R.call_tir(Expected.cast, (x,), R.Tensor((2, 3, 4), dtype="int32"))
            c: R.Tensor((), "int32") = R.const(1, "int32")
            return (gv, c)

        @T.prim_func(private=True)
        def cast(rxplaceholder: T.Buffer((T.int64(2), T.int64(3), T.int64(4)), "float32"),
                 compute: T.Buffer((T.int64(2), T.int64(3), T.int64(4)), "int32")):
            T.func_attr({"tir.noalias": True})
            for i0, i1, i2 in T.grid(T.int64(2), T.int64(3), T.int64(4)):
                with T.block("compute"):
                    i0_1, i1_1, i2_1 = T.axis.remap("SSS", [i0, i1, i2])
                    T.reads(rxplaceholder[i0_1, i1_1, i2_1])
                    T.writes(compute[i0_1, i1_1, i2_1])
                    compute[i0_1, i1_1, i2_1] = T.Cast("int32", rxplaceholder[i0_1, i1_1, i2_1])

    assert_structural_equal(LegalizeOps()(Before), Expected)


def test_dataflow_blocks_stay_dataflow_and_equal_kernels_are_shared():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")):
            with R.dataflow():
                a = R.add(x, y)
                b = R.add(a, y)
                R.output(b)
            return b

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")):
            with R.dataflow():
                a = R.call_tir(Expected.add, (x, y), R.Tensor((4,), dtype="float32"))
                b = R.call_tir(Expected.add, (a, y), R.Tensor((4,), dtype="float32"))
                R.output(b)
            return b

        @T.prim_func(private=True)
        def add(x: T.Buffer((T.int64(4),), "float32"), y: T.Buffer((T.int64(4),), "float32"),
                T_add: T.Buffer((T.int64(4),), "float32")):
            T.func_attr({"tir.noalias": True})
            for ax0 in range(T.int64(4)):
                with T.block("T_add"):
                    v_ax0 = T.axis.spatial(T.int64(4), ax0)
                    T.reads(x[v_ax0], y[v_ax0])
                    T.writes(T_add[v_ax0])
                    T_add[v_ax0] = x[v_ax0] + y[v_ax0]

    assert_structural_equal(LegalizeOps()(Before), Expected)


# -- what is left alone --------------------------------------------------------------------------
@I.ir_module
class Unknown:
    @R.function
    def main(x: R.Tensor("float32", ndim=2), y: R.Tensor((4,), "float32")):
        z = R.add(x, y)
        w = R.exp(y)
        return (z, w)


def test_calls_with_unknown_shapes_are_left_alone_with_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="mlckit.strategy"):
        out = LegalizeOps(enable_warning=True)(Unknown)
    assert "R.add(x, y)" in out.script()
    assert "R.exp" not in out.script()
    assert "Cannot legalize relax.add: the shapes of its arguments and result must be known" \
        in caplog.text


def test_skip_ops_are_left_alone():
    out = LegalizeOps(skip_ops=["relax.exp"])(Unknown)
    assert "R.exp(y)" in out.script()


def test_pass_context_option_turns_it_off():
    with mlckit.transform.PassContext(config={"relax.transform.apply_legalize_ops": False}):
        out = LegalizeOps()(Add)
    assert_structural_equal(out, Add)


def test_customize_legalize_map_overrides_the_strategy():
    def my_add(bb, call):
        return bb.call_te(topi.subtract, *call.args, primfunc_name_hint="my_add")

    out = LegalizeOps({"relax.add": my_add})(Add)
    assert "cls.my_add" in out.script()
    a = np.ones((1, 2, 3), "float32")
    b = np.full((4, 3, 2, 1), 2, "float32")
    ex = relax.build(out, "llvm")
    got = relax.VirtualMachine(ex, mlckit.cpu())["main"](mlckit.nd.array(a), mlckit.nd.array(b))
    np.testing.assert_allclose(got.numpy(), a - b)


def test_tvm_compile_legalizes_too():
    ex = mlckit.compile(Add, target="llvm")
    a = np.random.rand(1, 2, 3).astype("float32")
    b = np.random.rand(4, 3, 2, 1).astype("float32")
    got = relax.VirtualMachine(ex, mlckit.cpu())["main"](mlckit.nd.array(a), mlckit.nd.array(b))
    np.testing.assert_allclose(got.numpy(), a + b, rtol=1e-6)


# -- the strategy: user implementations, levels, conditions, targets ------------------------------
@pytest.fixture
def registered():
    """Implementations registered by a test, removed after it."""
    added = []

    def register(op_name, name, **options):
        added.append((op_name, name))
        return strategy.register(op_name, name, **options)

    yield register
    for op_name, name in added:
        strategy.unregister(op_name, name)


@I.ir_module
class Exp2D:
    @R.function
    def main(x: R.Tensor((4, 8), "float32")):
        with R.dataflow():
            y = R.exp(x)
            R.output(y)
        return y


def test_a_higher_level_implementation_wins_and_is_logged(registered, caplog):
    @registered("relax.exp", "exp.mine", level=20)
    def exp_mine(bb, call):
        return bb.call_te(topi.exp, call.args[0], primfunc_name_hint="my_exp")

    with caplog.at_level(logging.INFO, logger="mlckit.strategy"):
        out = LegalizeOps()(Exp2D)
    assert "cls.my_exp" in out.script()
    assert "relax.exp -> exp.mine (level 20) for target llvm" in caplog.text
    assert "lower: exp.generic (level 10)" in caplog.text
    x = np.random.rand(4, 8).astype("float32")
    np.testing.assert_allclose(run(Exp2D, x), np.exp(x), rtol=1e-6)


def test_a_lower_level_implementation_does_not_win(registered):
    registered("relax.exp", "exp.low", level=5)(
        lambda bb, call: bb.call_te(topi.exp, call.args[0], primfunc_name_hint="low_exp"))
    assert "cls.tir_exp" in LegalizeOps()(Exp2D).script()


def test_a_false_condition_skips_the_implementation(registered, caplog):
    registered("relax.add", "add.two_d", level=20,
               condition=lambda call: call.struct_info.ndim == 2)(
        lambda bb, call: bb.call_te(topi.add, *call.args, primfunc_name_hint="add_2d"))
    with caplog.at_level(logging.INFO, logger="mlckit.strategy"):
        out = LegalizeOps()(Add)  # a 4-D add
    assert "cls.add_2d" not in out.script() and "cls.add" in out.script()
    assert "skipped add.two_d (level 20) (condition is false for this call)" in caplog.text


def test_implementations_serve_their_targets(registered):
    registered("relax.exp", "exp.lnumpy_only", level=20, targets=["lnumpy"])(
        lambda bb, call: bb.call_te(topi.exp, call.args[0], primfunc_name_hint="ref_exp"))
    assert "cls.tir_exp" in LegalizeOps()(Exp2D).script()           # default: llvm
    with Target("lnumpy"):
        assert "cls.ref_exp" in LegalizeOps()(Exp2D).script()
    x = np.random.rand(4, 8).astype("float32")
    ex = relax.build(Exp2D, "lnumpy")                                  # build sets the target
    assert "ref_exp" in ex.mod.script()
    np.testing.assert_allclose(run(Exp2D, x, target="lnumpy"), np.exp(x), rtol=1e-6)


def test_no_applicable_implementation_names_the_op_and_the_target(registered):
    strategy.unregister("relax.exp", "exp.generic")
    try:
        registered("relax.exp", "exp.gpu", targets=["cuda"])(lambda bb, call: call)
        with pytest.raises(strategy.NoApplicableImplementation,
                           match=r"relax.exp: no implementation applies to this call on target "
                                 r"'llvm'; rejected: exp.gpu \(level 10\) \(targets cuda\)"):
            LegalizeOps()(Exp2D)
    finally:
        from mlckit.relax.op import unary

        unary.exp.legalize(strategy.te_compute(topi.exp, "tir_exp"))


def test_the_error_is_a_tvm_error():
    assert issubclass(strategy.NoApplicableImplementation, mlckit.TVMError)


def test_a_schedule_is_applied_to_the_created_prim_func(registered):
    def parallel_outer(sch):
        sch.parallel(sch.get_loops("compute")[0])

    registered("relax.exp", "exp.parallel", level=20, targets="llvm", schedule=parallel_outer)(
        lambda bb, call: bb.call_te(topi.exp, call.args[0], primfunc_name_hint="tir_exp"))
    out = LegalizeOps()(Exp2D)
    assert "for i0 in T.parallel(T.int64(4)):" in out["tir_exp"].script()
    x = np.random.rand(4, 8).astype("float32")
    np.testing.assert_allclose(run(Exp2D, x), np.exp(x), rtol=1e-6)


def test_a_library_implementation_calls_a_registered_python_function(registered):
    calls = []

    def numpy_add(a, b, out):
        calls.append(a.shape)
        out.copyfrom(np.add(a.numpy(), b.numpy()))

    strategy.register_library("relax.add", "numpy_add", numpy_add, level=30)
    try:
        out = LegalizeOps()(Add)
        assert 'R.call_dps_packed("mlckit.lib.numpy_add", (x, y)' in out.script()
        a = np.random.rand(1, 2, 3).astype("float32")
        b = np.random.rand(4, 3, 2, 1).astype("float32")
        np.testing.assert_allclose(run(Add, a, b), a + b, rtol=1e-6)
        assert calls == [(1, 2, 3)]
    finally:
        strategy.unregister("relax.add", "numpy_add")


def test_what_an_implementation_emits_is_legalized_again(registered):
    @registered("relax.subtract", "subtract.via_add", level=20)
    def subtract_via_add(bb, call):
        x, y = call.args
        return relax.op.add(x, bb.emit(relax.op.negative(y)))

    @I.ir_module
    class Sub:
        @R.function
        def main(x: R.Tensor((3,), "float32"), y: R.Tensor((3,), "float32")):
            z = R.subtract(x, y)
            return z

    out = LegalizeOps()(Sub)
    text = out.script()
    assert "cls.tir_negative" in text and "cls.add" in text and "R.add" not in text
    x, y = np.random.rand(3).astype("float32"), np.random.rand(3).astype("float32")
    np.testing.assert_allclose(run(Sub, x, y), x - y, rtol=1e-6)


def test_a_prim_value_operand_becomes_a_scalar_parameter():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor([64, 32, 16], "float32"), y: R.Prim("float32")):
            gv = R.add(x, y)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor([64, 32, 16], "float32"), y: R.Prim("float32")):
            cls = Expected
            gv = R.call_tir(cls.add, (x, y), R.Tensor([64, 32, 16], dtype="float32"))
            return gv

        @T.prim_func(private=True)
        def add(lhs: T.Buffer([T.int64(64), T.int64(32), T.int64(16)], "float32"), rhs: T.float32,
                output: T.Buffer([T.int64(64), T.int64(32), T.int64(16)], "float32")):
            T.func_attr({"tir.noalias": True})
            for i, j, k in T.grid(*lhs.shape):
                with T.block("T_add"):
                    vi, vj, vk = T.axis.remap("SSS", [i, j, k])
                    T.reads(lhs[vi, vj, vk])
                    T.writes(output[vi, vj, vk])
                    output[vi, vj, vk] = lhs[vi, vj, vk] + rhs

    assert_structural_equal(LegalizeOps()(Before), Expected)
    x = np.random.rand(64, 32, 16).astype("float32")
    ex = relax.build(Before, "llvm")
    got = relax.VirtualMachine(ex, mlckit.cpu())["main"](mlckit.nd.array(x), 2.5)
    np.testing.assert_allclose(got.numpy(), x + np.float32(2.5), rtol=1e-6)
