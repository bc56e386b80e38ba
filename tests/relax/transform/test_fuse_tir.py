"""FuseTIR: each primitive function becomes one PrimFunc, equal to the te composition of its
kernels (as TVM's tests check it), with the same results."""

import numpy as np
import pytest

import mlckit
from mlckit import relax, tir, topi
from mlckit.error import TVMError
from mlckit.ir import assert_structural_equal
from mlckit.relax.transform import AnnotateTIROpPattern, FuseOps, FuseTIR
from mlckit.relax.transform.fuse_tir import FuseTIRError
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T


def _tensor(shape, dtype="float32"):
    return relax.TensorStructInfo(shape, dtype)


def _run(mod, *args, target="llvm"):
    vm = relax.VirtualMachine(relax.build(mod, target), mlckit.cpu())
    return vm["main"](*args)


def _primitive(bb, name, params, body_fn, private=True):
    with bb.function(name, params, attrs={"Primitive": True}, private=private):
        with bb.dataflow():
            gv = bb.emit_output(body_fn(*params))
        bb.emit_func_output(gv)
    return bb.get().get_global_var(name)


def _calling_main(bb, fused, shape=(4,)):
    """Add ``main(x) = fused(x)`` (private functions nothing calls are dead code)."""
    x = relax.Var("x", _tensor(shape))
    with bb.function("main", [x]):
        with bb.dataflow():
            gv = bb.emit_output(relax.Call(fused, [x]))
        bb.emit_func_output(gv)
    return bb.get()


# -- one function, three kernels ------------------------------------------------------------------
def _add_exp_squeeze_before():
    bb = relax.BlockBuilder()
    x, p0 = relax.Var("x", _tensor((10, 20))), relax.Var("p0", _tensor(()))

    def body(x, p0):
        lv0 = bb.emit_te(topi.add, x, p0)
        lv1 = bb.emit_te(topi.exp, lv0)
        return bb.call_te(topi.squeeze, lv1)

    fused = _primitive(bb, "fused_add_exp_squeeze", [x, p0], body)
    x, p0 = relax.Var("x", _tensor((10, 20))), relax.Var("p0", _tensor(()))
    with bb.function("main", [x, p0]):
        with bb.dataflow():
            gv = bb.emit_output(relax.Call(fused, [x, p0]))
        bb.emit_func_output(gv)
    return bb.get().with_attr("foo", "bar")


def fused_add_exp_squeeze(x, p0):
    return topi.squeeze(topi.exp(topi.add(x, p0)))


def test_three_kernels_become_their_te_composition():
    bb = relax.BlockBuilder()
    x, p0 = relax.Var("x", _tensor((10, 20))), relax.Var("p0", _tensor(()))
    with bb.function("main", [x, p0]):
        with bb.dataflow():
            gv = bb.emit_output(bb.call_te(fused_add_exp_squeeze, x, p0))
        bb.emit_func_output(gv)
    expected = bb.get().with_attr("foo", "bar")
    assert_structural_equal(FuseTIR()(_add_exp_squeeze_before()), expected)


def test_fused_kernel_prints_as_tvm():
    text = FuseTIR()(_add_exp_squeeze_before()).script()
    assert '''    @T.prim_func(private=True)
    def fused_add_exp_squeeze(x: T.Buffer((T.int64(10), T.int64(20)), "float32"), p0: T.Buffer((), "float32"), T_squeeze_intermediate: T.Buffer((T.int64(10), T.int64(20)), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        T_add_intermediate = T.alloc_buffer((T.int64(10), T.int64(20)))
        compute_intermediate = T.alloc_buffer((T.int64(10), T.int64(20)))
        for ax0, ax1 in T.grid(T.int64(10), T.int64(20)):
            with T.block("T_add"):''' in text
    assert '''            gv1 = R.call_tir(cls.fused_add_exp_squeeze, (x, p0), out_sinfo=R.Tensor((10, 20), dtype="float32"))''' in text
    # the kernels nothing calls any more are gone
    assert "def add(" not in text and "def exp(" not in text


@pytest.mark.parametrize("target", ["llvm", "lnumpy"])
def test_fused_kernel_computes_the_same(target):
    x = np.random.default_rng(0).standard_normal((10, 20)).astype("float32")
    p0 = np.array(0.5, "float32")
    np.testing.assert_allclose(_run(FuseTIR()(_add_exp_squeeze_before()), x, p0,
                                    target=target).numpy(), np.exp(x + 0.5), rtol=1e-5)


def test_a_kernel_called_twice_gets_two_copies():
    bb = relax.BlockBuilder()
    x = relax.Var("x", _tensor((10, 20)))

    def body(x):
        lv1 = bb.emit_te(topi.exp, x)
        lv2 = bb.emit_te(topi.exp, lv1)
        return bb.call_te(topi.squeeze, lv2)

    fused = _primitive(bb, "fused_exp_exp_squeeze", [x], body)
    x = relax.Var("x", _tensor((10, 20)))
    with bb.function("main", [x]):
        with bb.dataflow():
            gv = bb.emit_output(relax.Call(fused, [x]))
        bb.emit_func_output(gv)
    before = bb.get()

    def fused_exp_exp_squeeze(x):
        return topi.squeeze(topi.exp(topi.exp(x)))

    bb = relax.BlockBuilder()
    x = relax.Var("x", _tensor((10, 20)))
    with bb.function("main", [x]):
        with bb.dataflow():
            gv = bb.emit_output(bb.call_te(fused_exp_exp_squeeze, x))
        bb.emit_func_output(gv)
    after = FuseTIR()(before)
    assert_structural_equal(after, bb.get())
    # the second copy's block is renamed as TVM's FuseTIR does (block names are hints:
    # structural equality ignores them, and te names the second block compute_1)
    assert 'T.block("compute1")' in after.script()
    x_np = np.random.default_rng(1).random((10, 20)).astype("float32")
    np.testing.assert_allclose(_run(after, x_np).numpy(), np.exp(np.exp(x_np)), rtol=1e-5)


def test_constant_argument_stays_an_argument():
    bb = relax.BlockBuilder()
    x1, x2 = relax.Var("x1", _tensor((10, 20))), relax.Var("x2", _tensor(()))

    def body(x1, x2):
        lv0 = bb.emit_te(topi.add, x1, x2)
        lv1 = bb.emit_te(topi.exp, lv0)
        return bb.call_te(topi.squeeze, lv1)

    fused = _primitive(bb, "fused_add_exp_squeeze", [x1, x2], body)
    x = relax.Var("x", _tensor((10, 20)))
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit(relax.Call(fused, [x, relax.const(1, "float32")]))
            gv = bb.emit_output(lv)
        bb.emit_func_output(gv)

    expected_bb = relax.BlockBuilder()
    x = relax.Var("x", _tensor((10, 20)))
    with expected_bb.function("main", [x]):
        with expected_bb.dataflow():
            lv = expected_bb.emit_te(fused_add_exp_squeeze, x, relax.const(1, "float32"))
            gv = expected_bb.emit_output(lv)
        expected_bb.emit_func_output(gv)
    # CanonicalizeBindings (inside FuseTIR's sequence) folds `gv = lv` as TVM does
    after = FuseTIR()(bb.get())
    expected = relax.transform.CanonicalizeBindings()(expected_bb.get())
    assert_structural_equal(after, expected)


# -- tuples ---------------------------------------------------------------------------------------
def test_tuple_output_and_tuple_parameter():
    """A primitive function taking a tuple (expanded field by field) and returning two
    tensors (the fused kernel gets two output buffers)."""
    t_sinfo = relax.TupleStructInfo([_tensor((4,)), _tensor((4,))])
    bb = relax.BlockBuilder()
    t = relax.Var("t", t_sinfo)
    with bb.function("fused_pair", [t], attrs={"Primitive": True}, private=True):
        with bb.dataflow():
            a = bb.emit(relax.TupleGetItem(t, 0))
            b = bb.emit(relax.TupleGetItem(t, 1))
            s = bb.emit_output(bb.call_te(topi.add, a, b))
            e = bb.emit_output(bb.call_te(topi.exp, s))
        bb.emit_func_output(relax.Tuple([s, e]))
    fused = bb.get().get_global_var("fused_pair")
    x, y = relax.Var("x", _tensor((4,))), relax.Var("y", _tensor((4,)))
    with bb.function("main", [x, y]):
        with bb.dataflow():
            tup = bb.emit(relax.Tuple([x, y]))
            out = bb.emit(relax.Call(fused, [tup]))
            gv = bb.emit_output(out)
        bb.emit_func_output(gv)
    after = FuseTIR()(bb.get())
    prim = after["fused_pair"]
    assert isinstance(prim, tir.PrimFunc)
    assert [b.name for b in prim.buffer_map.values()] == [
        "t_0", "t_1", "T_add_intermediate", "compute_intermediate"]
    call = after["main"].body.blocks[0].bindings[0].value
    assert [a.name_hint for a in call.args[1].fields] == ["x", "y"]
    x_np, y_np = np.arange(4, dtype="float32"), np.ones(4, "float32")
    s_out, e_out = _run(after, x_np, y_np)
    np.testing.assert_allclose(s_out.numpy(), x_np + 1)
    np.testing.assert_allclose(e_out.numpy(), np.exp(x_np + 1), rtol=1e-6)


# -- symbolic shapes --------------------------------------------------------------------------------
def test_symbolic_shapes_are_matched_through_the_kernels():
    @I.ir_module
    class Before:
        @T.prim_func(private=True)
        def exp(var_a: T.handle, var_b: T.handle):
            n, m = T.int64(), T.int64()
            A = T.match_buffer(var_a, (n, m))
            B = T.match_buffer(var_b, (n, m))
            for i, j in T.grid(n, m):
                with T.block("exp"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = T.exp(A[vi, vj])

        @R.function(private=True)
        def fused_exp_exp(x: R.Tensor(("a", "b"), "float32")) -> R.Tensor(("a", "b"), "float32"):
            a, b = T.int64(), T.int64()
            R.func_attr({"Primitive": True})
            cls = Before
            with R.dataflow():
                lv = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((a, b), "float32"))
                gv = R.call_tir(cls.exp, (lv,), out_sinfo=R.Tensor((a, b), "float32"))
                R.output(gv)
            return gv

        @R.function
        def main(x: R.Tensor(("n", "m"), "float32")) -> R.Tensor(("n", "m"), "float32"):
            cls = Before
            with R.dataflow():
                gv = cls.fused_exp_exp(x)
                R.output(gv)
            return gv

    @I.ir_module
    class Expected:
        @T.prim_func(private=True)
        def fused_exp_exp(p_x: T.handle, p_output0: T.handle):
            T.func_attr({"tir.noalias": True})
            a, b = T.int64(), T.int64()
            x = T.match_buffer(p_x, (a, b))
            B_intermediate = T.match_buffer(p_output0, (a, b))
            B_intermediate_1 = T.alloc_buffer((a, b))
            for i, j in T.grid(a, b):
                with T.block("exp"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(x[vi, vj])
                    T.writes(B_intermediate_1[vi, vj])
                    B_intermediate_1[vi, vj] = T.exp(x[vi, vj])
            for i, j in T.grid(a, b):
                with T.block("exp_1"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(B_intermediate_1[vi, vj])
                    T.writes(B_intermediate[vi, vj])
                    B_intermediate[vi, vj] = T.exp(B_intermediate_1[vi, vj])

        @R.function
        def main(x: R.Tensor(("n", "m"), "float32")) -> R.Tensor(("n", "m"), "float32"):
            n, m = T.int64(), T.int64()
            cls = Expected
            with R.dataflow():
                gv = R.call_tir(cls.fused_exp_exp, (x,), out_sinfo=R.Tensor((n, m), "float32"))
                R.output(gv)
            return gv

    after = FuseTIR()(Before)
    assert_structural_equal(after, Expected)
    x = np.random.default_rng(2).random((3, 5)).astype("float32")
    np.testing.assert_allclose(_run(after, x).numpy(), np.exp(np.exp(x)), rtol=1e-5)


# -- the MLP, end to end ---------------------------------------------------------------------------
@I.ir_module
class ExpectedMLPKernels:
    @T.prim_func(private=True)
    def fused_dense_add_relu(x: T.Buffer((T.int64(1), T.int64(8)), "float32"),
                             param_0: T.Buffer((T.int64(4), T.int64(8)), "float32"),
                             param_1: T.Buffer((T.int64(4),), "float32"),
                             compute_intermediate: T.Buffer((T.int64(1), T.int64(4)), "float32")):
        T.func_attr({"tir.noalias": True})
        T_matmul_NT_intermediate = T.alloc_buffer((T.int64(1), T.int64(4)))
        T_add_intermediate = T.alloc_buffer((T.int64(1), T.int64(4)))
        for i0, i1, k in T.grid(T.int64(1), T.int64(4), T.int64(8)):
            with T.block("T_matmul_NT"):
                v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
                T.reads(x[v_i0, v_k], param_0[v_i1, v_k])
                T.writes(T_matmul_NT_intermediate[v_i0, v_i1])
                with T.init():
                    T_matmul_NT_intermediate[v_i0, v_i1] = T.float32(0.0)
                T_matmul_NT_intermediate[v_i0, v_i1] = (T_matmul_NT_intermediate[v_i0, v_i1]
                                                        + x[v_i0, v_k] * param_0[v_i1, v_k])
        for ax0, ax1 in T.grid(T.int64(1), T.int64(4)):
            with T.block("T_add"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(T_matmul_NT_intermediate[v_ax0, v_ax1], param_1[v_ax1])
                T.writes(T_add_intermediate[v_ax0, v_ax1])
                T_add_intermediate[v_ax0, v_ax1] = (T_matmul_NT_intermediate[v_ax0, v_ax1]
                                                    + param_1[v_ax1])
        for i0, i1 in T.grid(T.int64(1), T.int64(4)):
            with T.block("compute"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(T_add_intermediate[v_i0, v_i1])
                T.writes(compute_intermediate[v_i0, v_i1])
                compute_intermediate[v_i0, v_i1] = T.max(T_add_intermediate[v_i0, v_i1],
                                                         T.float32(0.0))


def test_small_mlp_fuses_into_the_written_out_kernel():
    rng = np.random.default_rng(3)
    w0, b0 = rng.standard_normal((4, 8)).astype("float32"), rng.standard_normal(4).astype("float32")
    w1, b1 = rng.standard_normal((2, 4)).astype("float32"), rng.standard_normal(2).astype("float32")
    bb = relax.BlockBuilder()
    x = relax.Var("x", _tensor((1, 8)))
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit_te(topi.nn.dense, x, relax.const(w0))
            lv = bb.emit_te(topi.add, lv, relax.const(b0))
            lv = bb.emit_te(topi.nn.relu, lv)
            lv = bb.emit_te(topi.nn.dense, lv, relax.const(w1))
            gv = bb.emit_output(bb.call_te(topi.add, lv, relax.const(b1)))
        bb.emit_func_output(gv)
    after = FuseTIR()(FuseOps()(AnnotateTIROpPattern()(bb.get())))
    assert sorted(gv.name_hint for gv in after.functions) == [
        "fused_dense1_add1", "fused_dense_add_relu", "main"]
    assert_structural_equal(after["fused_dense_add_relu"],
                            ExpectedMLPKernels["fused_dense_add_relu"])
    x_np = rng.standard_normal((1, 8)).astype("float32")
    np.testing.assert_allclose(_run(after, x_np).numpy(),
                               np.maximum(x_np @ w0.T + b0, 0) @ w1.T + b1, rtol=1e-5, atol=1e-5)


def test_course_style_hand_fused_function_with_primitive_one():
    """The course marks its own fused functions ``Primitive: 1`` (public ones)."""
    bb = relax.BlockBuilder()
    x, w, b = (relax.Var("x", _tensor((1, 8))), relax.Var("w", _tensor((8, 4))),
               relax.Var("b", _tensor((4,))))
    with bb.function("fused_matmul_add0", [x, w, b]):
        with bb.dataflow():
            lv0 = bb.emit_te(topi.nn.matmul, x, w)
            gv = bb.emit_output(bb.call_te(topi.add, lv0, b))
        bb.emit_func_output(gv)
    mod = bb.get()
    mod["fused_matmul_add0"] = mod["fused_matmul_add0"].with_attr("Primitive", 1)
    fused = mod.get_global_var("fused_matmul_add0")
    bb = relax.BlockBuilder(mod)
    x = relax.Var("x", _tensor((1, 8)))
    w_np = np.arange(32, dtype="float32").reshape(8, 4) / 32
    b_np = np.ones(4, "float32")
    with bb.function("main", [x]):
        with bb.dataflow():
            gv = bb.emit_output(relax.Call(fused, [x, relax.const(w_np), relax.const(b_np)]))
        bb.emit_func_output(gv)
    after = FuseTIR()(bb.get())
    assert isinstance(after["fused_matmul_add0"], tir.PrimFunc)
    x_np = np.arange(8, dtype="float32").reshape(1, 8)
    np.testing.assert_allclose(_run(after, x_np).numpy(), x_np @ w_np + b_np, rtol=1e-6)


# -- what cannot be fused ---------------------------------------------------------------------------
def test_constant_inside_a_primitive_function_is_refused():
    bb = relax.BlockBuilder()
    x = relax.Var("x", _tensor((4,)))
    fused = _primitive(bb, "fused_bad", [x],
                       lambda x: bb.call_te(topi.add, x, relax.const(np.ones(4, "float32"))))
    with pytest.raises(FuseTIRError, match="relax.Constant inside the primitive function "
                                           "'fused_bad'"):
        FuseTIR()(_calling_main(bb, fused))


def test_non_call_tir_inside_a_primitive_function_is_refused():
    bb = relax.BlockBuilder()
    x = relax.Var("x", _tensor((4,)))
    fused = _primitive(bb, "fused_bad", [x],
                       lambda x: relax.op.call_dps_packed("my_func", [x], _tensor((4,))))
    with pytest.raises(TVMError, match="only R.call_tir is supported in the primitive function "
                                       "'fused_bad', got a call of relax.call_dps_packed"):
        FuseTIR()(_calling_main(bb, fused))


def test_module_without_primitive_functions_is_unchanged():
    bb = relax.BlockBuilder()
    x = relax.Var("x", _tensor((4,)))
    with bb.function("main", [x]):
        with bb.dataflow():
            gv = bb.emit_output(bb.call_te(topi.exp, x))
        bb.emit_func_output(gv)
    mod = bb.get()
    assert_structural_equal(FuseTIR()(mod), mod)


def test_symbolic_argument_of_a_kernel_becomes_a_shape_parameter():
    """``first(x, m)`` makes an output of length m, which no input shape defines: the kernel
    gets m as a scalar (``tir_vars``); FuseOps passes it on as a shape argument, FuseTIR as
    the fused kernel's last parameter."""
    from mlckit import te

    n, m = tir.Var("n", "int64"), tir.Var("m", "int64")
    bb = relax.BlockBuilder()
    x, y = relax.Var("x", _tensor((n,))), relax.Var("y", _tensor((m,)))

    def first(a, size):
        return te.compute((size,), lambda i: a[0], name="first")

    with bb.function("main", [x, y]):
        with bb.dataflow():
            lv = bb.emit_te(first, x, m)
            gv = bb.emit_output(bb.call_te(topi.exp, lv))
        bb.emit_func_output(gv)
    before = bb.get()
    fused = FuseOps()(AnnotateTIROpPattern()(before))
    params = fused["fused_first_exp"].params
    assert [p.name_hint for p in params] == ["x", "tir_vars"]
    after = FuseTIR()(fused)
    prim = after["fused_first_exp"]
    assert [p.dtype for p in prim.params] == ["handle", "handle", "int64"]
    x_np, y_np = np.array([0.5, 2.0, 3.0], "float32"), np.zeros(4, "float32")
    for mod in (before, fused, after):
        out = _run(mod, x_np, y_np).numpy()
        np.testing.assert_allclose(out, np.full(4, np.exp(0.5), "float32"), rtol=1e-6)
