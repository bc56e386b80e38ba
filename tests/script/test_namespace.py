"""TVMScript under TVM's spellings: ``@tvm.script.ir_module``, ``tvm.script.from_source``,
``tvm.script.parser.{ir, tir, relax}``, ``tvm.script.tirx`` — the same parser and printer."""

import numpy as np

import mlckit as tvm
from mlckit import relax
from mlckit.ir import assert_structural_equal
from mlckit.script import ir as I  # noqa: N812
from mlckit.script import relax as R
from mlckit.script import tir as T


@tvm.script.ir_module
class CourseStyle:
    @T.prim_func
    def add_one(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        T.func_attr({"global_symbol": "add_one", "tir.noalias": True})
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] + T.float32(1)

    @R.function
    def main(x: R.Tensor((8,), "float32")):
        cls = CourseStyle
        with R.dataflow():
            y = R.call_tir(cls.add_one, (x,), out_sinfo=R.Tensor((8,), "float32"))
            R.output(y)
        return y


def test_tvm_script_ir_module_is_i_ir_module():
    assert tvm.script.ir_module is I.ir_module
    assert isinstance(CourseStyle, tvm.IRModule)
    assert [gv.name_hint for gv in CourseStyle.functions] == ["add_one", "main"]


def test_a_course_style_module_prints_round_trips_builds_and_runs():
    text = CourseStyle.script()
    assert text.splitlines()[:5] == ["# from tvm.script import ir as I",
                                     "# from tvm.script import tir as T",
                                     "# from tvm.script import relax as R", "", "@I.ir_module"]
    assert_structural_equal(tvm.script.from_source(text), CourseStyle)
    x = np.arange(8, dtype="float32")
    vm = relax.VirtualMachine(tvm.compile(CourseStyle, target="llvm"), tvm.cpu())
    np.testing.assert_array_equal(vm["main"](tvm.runtime.tensor(x)).numpy(), x + 1)
    b = np.empty(8, "float32")
    tvm.compile(CourseStyle["add_one"], "llvm")["add_one"](x, b)
    np.testing.assert_array_equal(b, x + 1)


def test_parser_namespaces_are_the_script_namespaces():
    from mlckit.script.parser import ir as pI  # noqa: N812
    from mlckit.script.parser import relax as pR  # noqa: N812
    from mlckit.script.parser import tir as pT  # noqa: N812

    assert (pI, pT, pR) == (I, T, R)
    assert tvm.script.tir is T and tvm.script.relax is R
    from mlckit.script import tirx as Tx  # noqa: N812 - TVM >= 0.24's T (tests/script/test_tirx.py)

    assert tvm.script.tirx is Tx and tvm.script.parser.tirx is Tx


class PlainClass:
    """Not an IRModule: each @T.prim_func in it is parsed on its own, as TVM does."""

    @T.prim_func
    def double(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block(""):
                vi = T.axis.spatial(4, i)
                B[vi] = A[vi] * T.float32(2)


def test_prim_func_in_a_plain_class_is_parsed_and_runs():
    assert isinstance(PlainClass.double, tvm.tir.PrimFunc)
    a, b = np.arange(4, dtype="float32"), np.empty(4, "float32")
    tvm.build(PlainClass.double, target="lnumpy")(a, b)
    np.testing.assert_array_equal(b, a * 2)


def test_a_block_may_have_an_empty_name_and_prints_so():
    text = PlainClass.double.script()
    assert 'with T.block(""):' in text
    assert_structural_equal(tvm.script.from_source(text), PlainClass.double)
