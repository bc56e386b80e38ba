"""meta_schedule.relax_integration.extract_tasks: one task per distinct PrimFunc that a Relax
program calls, weighted by its call sites."""

import pytest

import mlckit
from mlckit import relax
from mlckit.ir import assert_structural_equal
from mlckit.meta_schedule.relax_integration import ExtractedTask, extract_tasks
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T


@I.ir_module
class TwoKernels:
    @T.prim_func
    def add_one(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = A[vi] + T.float32(1)

    @T.prim_func
    def add_one_again(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = A[vi] + T.float32(1)

    @T.prim_func
    def double(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = A[vi] * T.float32(2)

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        cls = TwoKernels
        with R.dataflow():
            a = R.call_tir(cls.double, (x,), out_sinfo=R.Tensor((4,), "float32"))
            b = R.call_tir(cls.add_one, (a,), out_sinfo=R.Tensor((4,), "float32"))
            c = R.call_tir(cls.add_one_again, (b,), out_sinfo=R.Tensor((4,), "float32"))
            d = R.call_tir(cls.add_one, (c,), out_sinfo=R.Tensor((4,), "float32"))
            R.output(d)
        return d


def test_equal_kernels_make_one_task_weighted_by_their_call_sites():
    tasks = extract_tasks(TwoKernels, "llvm")
    assert [(t.task_name, t.weight) for t in tasks] == [("double", 1), ("add_one", 3)]
    assert all(isinstance(t, ExtractedTask) and t.target.kind.name == "llvm" for t in tasks)


def test_a_task_is_its_prim_func_as_main():
    task = extract_tasks(TwoKernels, {"kind": "llvm", "num-cores": 1})[1]
    assert [gv.name_hint for gv in task.mod.functions] == ["main"]
    assert_structural_equal(task.mod["main"].body, TwoKernels["add_one"].body)
    assert task.dispatched == [task.mod]


def test_the_tasks_of_a_legalized_model():
    @I.ir_module
    class Model:
        @R.function
        def main(x: R.Tensor((4, 8), "float32"), w: R.Tensor((8, 8), "float32")):
            with R.dataflow():
                y = R.nn.relu(R.matmul(x, w))
                R.output(y)
            return y

    target = mlckit.target.Target("llvm")
    with target:
        legalized = relax.get_pipeline("zero")(Model)
    tasks = extract_tasks(legalized, target)
    assert [(t.task_name, t.weight) for t in tasks] == [("fused_matmul_relu", 1)]


def test_a_relax_function_alone_and_refusals():
    assert extract_tasks(TwoKernels["main"], "llvm") == []  # its callees are not in it
    with pytest.raises(mlckit.TVMError, match="expects an IRModule or a relax.Function, got int"):
        extract_tasks(3, "llvm")
