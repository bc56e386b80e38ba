"""Arrays given to the compiler are copied once, as TVM copies them: changing the caller's
array after ``relax.const``, ``R.const`` or ``BindParams`` does not change what the built
function computes."""

import numpy as np

import mlckit
from mlckit import relax
from mlckit.script import ir as I
from mlckit.script import relax as R


@I.ir_module
class AddW:
    @R.function
    def main(x: R.Tensor((4,), "float32"), w: R.Tensor((4,), "float32")):
        with R.dataflow():
            z = R.add(x, w)
            R.output(z)
        return z


X = np.arange(4, dtype="float32")


def _run(mod, *args):
    ex = relax.build(relax.transform.LegalizeOps()(mod), "llvm")
    return relax.VirtualMachine(ex, mlckit.cpu())["main"](*args).numpy()


def test_bind_params_keeps_its_own_copy_of_a_numpy_array():
    w = np.ones(4, "float32")
    mod = relax.transform.BindParams("main", {"w": w})(AddW)
    w[:] = 100  # after binding, before building
    np.testing.assert_array_equal(_run(mod, X), X + 1)


def test_bind_params_keeps_its_own_copy_of_an_nd_array():
    w = mlckit.nd.array(np.ones(4, "float32"))
    mod = relax.transform.BindParams("main", {"w": w})(AddW)
    w.copyfrom(np.full(4, 100, "float32"))
    np.testing.assert_array_equal(_run(mod, X), X + 1)


def test_a_built_function_does_not_see_later_changes_to_a_bound_array():
    w = np.ones(4, "float32")
    mod = relax.transform.BindParams("main", {"w": w})(AddW)
    ex = relax.build(relax.transform.LegalizeOps()(mod), "llvm")
    vm = relax.VirtualMachine(ex, mlckit.cpu())
    w[:] = 100  # after building
    np.testing.assert_array_equal(vm["main"](X).numpy(), X + 1)


def test_relax_const_keeps_its_own_copy():
    w = np.ones(4, "float32")
    c = relax.const(w)
    w[:] = 100
    np.testing.assert_array_equal(c.data, np.ones(4, "float32"))
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((4,), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            z = bb.emit_output(relax.op.add(x, c))
        bb.emit_func_output(z)
    mod = bb.get()
    w[:] = 7
    np.testing.assert_array_equal(_run(mod, X), X + 1)


def test_relax_const_of_a_view_is_a_compact_copy():
    wide = np.arange(8, dtype="float32")
    c = relax.const(wide[::-2])
    assert c.data.flags.c_contiguous
    wide[:] = 0
    np.testing.assert_array_equal(c.data, [7, 5, 3, 1])


def test_a_constant_rebuilt_by_a_pass_is_not_copied_again():
    c = relax.const(np.ones(4, "float32"))
    assert relax.Constant(c.data).data is c.data
    assert relax.const(c.data).data is c.data
