"""DecomposeOpsForInference: batch_norm becomes element-wise arithmetic, with NumPy's result.

The operators it needs (``relax.nn.batch_norm``, ``expand_dims``, ``add`` …) are TVM's; where
mlckit does not define one yet, this test registers a small local version (struct info and a
topi legalization) and removes it afterwards."""

import numpy as np
import pytest

import mlckit
from mlckit import relax, topi
from mlckit.ir import assert_structural_equal
from mlckit.ir.op import _OPS, Op, register_op
from mlckit.relax.transform import DecomposeOpsForInference

F32 = "float32"


def _tensor(shape):
    return relax.TensorStructInfo(list(shape), F32)


def _shape(expr):
    return [int(d.value) for d in expr.struct_info.dims]


def _binary(name, te_op):
    def ctor(a, b):
        return relax.Call(Op.get(f"relax.{name}"), [a, b])

    info = {"FInferStructInfo": lambda call: _tensor(np.broadcast_shapes(
                *[_shape(a) for a in call.args])),
            "FLegalize": lambda bb, call: bb.call_te(te_op, *call.args)}
    return ctor, info


def _expand_dims_shape(shape, axes):
    out = list(shape)
    for a in sorted(axes):
        out.insert(a, 1)
    return out


def _legalize_expand_dims(bb, call):
    def f(x):
        for a in sorted(call.attrs["axis"]):
            x = topi.expand_dims(x, a)
        return x

    return bb.call_te(f, call.args[0], primfunc_name_hint="expand_dims")


LOCAL_OPS = {
    "add": _binary("add", topi.add),
    "subtract": _binary("subtract", topi.subtract),
    "divide": _binary("divide", topi.divide),
    "multiply": _binary("multiply", topi.multiply),
    "sqrt": (lambda x: relax.Call(Op.get("relax.sqrt"), [x]),
             {"FInferStructInfo": lambda call: call.args[0].struct_info,
              "FLegalize": lambda bb, call: bb.call_te(topi.sqrt, call.args[0])}),
    "expand_dims": (lambda x, axis: relax.Call(Op.get("relax.expand_dims"), [x],
                                               {"axis": list(axis)}),
                    {"FInferStructInfo": lambda call: _tensor(_expand_dims_shape(
                        _shape(call.args[0]), call.attrs["axis"])),
                     "FLegalize": _legalize_expand_dims}),
}


@pytest.fixture
def ops(monkeypatch):
    """The operators the decomposition uses: mlckit's where they exist, local ones else."""
    added = []
    for name, (ctor, attrs) in LOCAL_OPS.items():
        if f"relax.{name}" not in _OPS:
            register_op(f"relax.{name}", FPurity=True, **attrs)
            added.append(f"relax.{name}")
        if not hasattr(relax.op, name):
            monkeypatch.setattr(relax.op, name, ctor, raising=False)
    if "relax.nn.batch_norm" not in _OPS:
        register_op("relax.nn.batch_norm", FPurity=True, FInferStructInfo=lambda call:
                    relax.TupleStructInfo([call.args[0].struct_info, call.args[3].struct_info,
                                           call.args[4].struct_info]))
        added.append("relax.nn.batch_norm")
    yield
    for name in added:
        del _OPS[name]


def _batch_norm(x, gamma, beta, mean, var, axis, epsilon):
    nn = getattr(relax.op, "nn", None)
    if nn is not None and hasattr(nn, "batch_norm"):
        return nn.batch_norm(x, gamma, beta, mean, var, axis=axis, epsilon=epsilon)
    return relax.Call(Op.get("relax.nn.batch_norm"), [x, gamma, beta, mean, var],
                      {"axis": axis, "epsilon": epsilon, "center": True, "scale": True})


def _params():
    return [relax.Var(n, _tensor(s)) for n, s in
            [("x", (2, 3, 4)), ("gamma", (3,)), ("beta", (3,)), ("mean", (3,)), ("var", (3,))]]


def _module(body):
    bb = relax.BlockBuilder()
    params = _params()
    with bb.function("main", params):
        with bb.dataflow():
            bn = bb.emit(body(*params))
            gv = bb.emit_output(relax.TupleGetItem(bn, 0))
        bb.emit_func_output(gv)
    return bb.get()


def _legalize(mod):
    """Lower the operators through their FLegalize (and LegalizeOps, once mlckit has it)."""

    @relax.expr_functor.mutator
    class Legalizer(relax.PyExprMutator):
        def visit_call_(self, call):
            call = self.visit_expr_post_order(call)
            legalize = call.op.get_attr("FLegalize") if isinstance(call.op, Op) else None
            return legalize(self.builder_, call) if legalize is not None else call

    legalizer = Legalizer(mod)
    legalizer.builder_.update_func(mod.get_global_var("main"), legalizer.visit_expr(mod["main"]))
    out = legalizer.builder_.get()
    legalize_ops = getattr(relax.transform, "LegalizeOps", None)
    return legalize_ops()(out) if legalize_ops is not None else out


def test_batch_norm_becomes_arithmetic(ops):
    before = _module(lambda x, g, b, m, v: _batch_norm(x, g, b, m, v, axis=1, epsilon=1e-5))
    op = relax.op

    def decomposed(x, g, b, m, v):
        out = op.divide(op.subtract(x, op.expand_dims(m, [0, 2])),
                        op.sqrt(op.add(op.expand_dims(v, [0, 2]), relax.const(1e-5, F32))))
        out = op.multiply(out, op.expand_dims(g, [0, 2]))
        out = op.add(out, op.expand_dims(b, [0, 2]))
        return relax.Tuple([out, m, v])

    assert_structural_equal(DecomposeOpsForInference()(before), _module(decomposed))


def test_decomposed_batch_norm_equals_numpy(ops):
    before = _module(lambda x, g, b, m, v: _batch_norm(x, g, b, m, v, axis=1, epsilon=1e-5))
    lowered = _legalize(DecomposeOpsForInference("main")(before))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4)).astype(F32)
    gamma, beta, mean = (rng.standard_normal(3).astype(F32) for _ in range(3))
    var = rng.random(3).astype(F32) + 0.5
    vm = relax.VirtualMachine(relax.build(lowered, "llvm"), mlckit.cpu())
    out = vm["main"](x, gamma, beta, mean, var).numpy()

    def col(a):
        return a.reshape(1, 3, 1)

    expected = (x - col(mean)) / np.sqrt(col(var) + 1e-5) * col(gamma) + col(beta)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_modules_without_batch_norm_are_unchanged():
    bb = relax.BlockBuilder()
    x = relax.Var("x", _tensor((4,)))
    with bb.function("main", [x]):
        with bb.dataflow():
            gv = bb.emit_output(bb.call_te(topi.exp, x))
        bb.emit_func_output(gv)
    mod = bb.get()
    assert_structural_equal(DecomposeOpsForInference()(mod), mod)
