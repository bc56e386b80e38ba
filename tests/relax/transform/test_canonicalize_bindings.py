"""CanonicalizeBindings: trivial bindings folded, symbolic variables pinned, as TVM."""

import numpy as np
import pytest

import mlckit
from mlckit import relax
from mlckit.error import TVMValueError
from mlckit.ir import assert_structural_equal
from mlckit.relax.transform import CanonicalizeBindings
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T


def verify(before, expected):
    assert_structural_equal(CanonicalizeBindings()(before), expected)


def test_chain_of_assignments_becomes_its_source():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            y = x
            z = y
            q = z
            return q

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            return x

    verify(Before, Expected)


def test_dataflow_chain_binds_the_output_directly():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            with R.dataflow():
                y = R.const(1, "float32")
                z = y
                o = z
                n = o
                R.output(n)
            return n

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            with R.dataflow():
                n = R.const(1, "float32")
                R.output(n)
            return n

    verify(Before, Expected)


def test_assignments_of_a_parameter_vanish_with_their_block():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            with R.dataflow():
                y = x
                z = y
                n = z
                R.output(n)
            return n

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            return x

    verify(Before, Expected)


def test_match_cast_to_the_same_struct_info_is_a_trivial_binding():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((16,), "float32")):
            with R.dataflow():
                y = R.match_cast(x, R.Tensor((16,), "float32"))
                gv = R.call_pure_packed("f", y, sinfo_args=R.Tensor((16,), "float32"))
                R.output(gv)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((16,), "float32")):
            with R.dataflow():
                gv = R.call_pure_packed("f", x, sinfo_args=R.Tensor((16,), "float32"))
                R.output(gv)
            return gv

    verify(Before, Expected)


def test_symbolic_variable_pinned_by_match_cast_is_replaced():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((16,), "float32")):
            n = T.int64()
            with R.dataflow():
                y = R.match_cast(x, R.Tensor((n,), "float32"))
                z = R.call_pure_packed("f", y, sinfo_args=R.Tensor((n * 2,), "float32"))
                gv = z
                R.output(gv)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((16,), "float32")):
            with R.dataflow():
                gv = R.call_pure_packed("f", x, sinfo_args=R.Tensor((32,), "float32"))
                R.output(gv)
            return gv

    after = CanonicalizeBindings()(Before)
    # the return annotation keeps what the input had (n is not known outside the body)
    assert_structural_equal(after["main"].ret_struct_info, Before["main"].ret_struct_info)
    assert_structural_equal(after["main"].body, Expected["main"].body, map_free_vars=True)


def test_inconsistent_match_casts_are_refused():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((16,), "float32"), y: R.Tensor((8,), "float32")):
            n = T.int64()
            a = R.match_cast(x, R.Tensor((n,), "float32"))
            b = R.match_cast(y, R.Tensor((n,), "float32"))
            return (a, b)

    with pytest.raises(TVMValueError, match="give the symbolic variable n the values"):
        CanonicalizeBindings()(Before)


def test_var_used_only_in_its_dataflow_block_becomes_a_dataflow_var():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((16,), "float32")):
            with R.dataflow():
                y = R.call_pure_packed("f", x, sinfo_args=R.Tensor((16,), "float32"))
                z = R.call_pure_packed("f", y, sinfo_args=R.Tensor((16,), "float32"))
                R.output(y, z)
            return z

    out = CanonicalizeBindings()(Before)
    bindings = out["main"].body.blocks[0].bindings
    assert [type(b.var).__name__ for b in bindings] == ["DataflowVar", "Var"]


def test_tuple_item_of_a_tuple_built_in_place_is_the_field():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")):
            t = (x, y)
            a = t[1]
            return a

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")):
            t = (x, y)
            return y

    verify(Before, Expected)


def test_results_are_unchanged():
    @I.ir_module
    class Before:
        @T.prim_func
        def exp(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
            for i in range(16):
                with T.block("B"):
                    vi = T.axis.spatial(16, i)
                    B[vi] = T.exp(A[vi])

        @R.function
        def main(x: R.Tensor((16,), "float32")):
            cls = Before
            with R.dataflow():
                a = x
                y = R.call_tir(cls.exp, (a,), out_sinfo=R.Tensor((16,), "float32"))
                z = y
                gv = z
                R.output(gv)
            return gv

    after = CanonicalizeBindings()(Before)
    assert len(after["main"].body.blocks[0].bindings) == 1
    x = np.linspace(0, 1, 16).astype("float32")
    vm = relax.VirtualMachine(relax.build(after, "llvm"), mlckit.cpu())
    np.testing.assert_allclose(vm["main"](x).numpy(), np.exp(x), rtol=1e-6)
