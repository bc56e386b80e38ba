"""relax.call_tir / relax.call_dps_packed / relax.call_pure_packed: the Python constructors
under tvm.relax, as TVM's tutorials build cross-level modules with the BlockBuilder."""

import numpy as np

import mlckit
from mlckit import relax
from mlckit.ir import assert_structural_equal
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T


@T.prim_func
def add_one(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)


@mlckit.register_func("test.relax.twice", override=True)
def twice(x, out):
    np.multiply(np.asarray(x), 2, out=np.asarray(out))


def _built_with_the_block_builder():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((4, 4), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            lv0 = bb.emit(relax.call_dps_packed(
                "test.relax.twice", [x], out_sinfo=relax.TensorStructInfo((4, 4), "float32")))
            gv_add = bb.add_func(add_one, "add_one")
            gv = bb.emit_output(relax.call_tir(
                gv_add, [lv0], relax.TensorStructInfo((4, 4), "float32")))
        bb.emit_func_output(gv)
    return bb.get()


def test_the_constructors_are_relax_op_ones():
    assert relax.call_dps_packed is relax.op.call_dps_packed
    assert relax.call_tir is relax.op.call_tir
    assert relax.call_pure_packed is relax.op.call_pure_packed


def test_a_cross_level_module_from_the_block_builder_is_the_script_one():
    @I.ir_module
    class Expected:
        @T.prim_func
        def add_one(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
            for i, j in T.grid(4, 4):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] + T.float32(1)

        @R.function
        def main(x: R.Tensor((4, 4), "float32")) -> R.Tensor((4, 4), "float32"):
            cls = Expected
            with R.dataflow():
                lv = R.call_dps_packed("test.relax.twice", (x,),
                                       out_sinfo=R.Tensor((4, 4), "float32"))
                gv = R.call_tir(cls.add_one, (lv,), out_sinfo=R.Tensor((4, 4), "float32"))
                R.output(gv)
            return gv

    assert_structural_equal(_built_with_the_block_builder(), Expected)


def test_the_cross_level_module_runs():
    ex = relax.build(_built_with_the_block_builder(), target="llvm")
    vm = relax.VirtualMachine(ex, mlckit.cpu())
    x = np.arange(16, dtype="float32").reshape(4, 4)
    np.testing.assert_allclose(vm["main"](x).numpy(), 2 * x + 1)


def test_tvm_026_type_names_are_the_struct_infos():
    n = T.int64()
    assert relax.TensorType is relax.TensorStructInfo and relax.Type is relax.StructInfo
    assert relax.TupleType is relax.TupleStructInfo and relax.ShapeType is relax.ShapeStructInfo
    assert relax.FuncType is relax.FuncStructInfo and relax.ObjectType is relax.ObjectStructInfo
    assert_structural_equal(relax.TensorType((n, 128), "float32"),
                            relax.TensorStructInfo((n, 128), "float32"), map_free_vars=True)
    call = relax.call_dps_packed("test.relax.twice", [relax.Var("x", R.Tensor((4, 4)))],
                                 relax.TensorType((4, 4), "float32"))
    assert_structural_equal(call.sinfo_args, [relax.TensorStructInfo((4, 4), "float32")])
