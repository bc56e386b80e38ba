"""FuseOpsByPattern: the matches of library patterns become Composite functions (wrapped in a
Codegen function with annotate_codegen), structurally as TVM 0.27 produces them; matches
whose intermediate values escape, or that a check rejects, stay as they are."""

import numpy as np
import pytest

from mlckit.error import TVMError
from mlckit.ir import assert_structural_equal
from mlckit.relax.backend.patterns import make_matmul_pattern
from mlckit.relax.transform import FuseOpsByPattern, FusionPattern
from mlckit.script import ir as I
from mlckit.script import relax as R


@I.ir_module
class Linear:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), w: R.Tensor((4, 3), "float32"),
             b: R.Tensor((4,), "float32")):
        with R.dataflow():
            lv = R.permute_dims(w)
            lv1 = R.matmul(x, lv)
            lv2 = R.add(lv1, b)
            lv3 = R.nn.relu(lv2)
            gv = R.multiply(lv3, lv3)
            R.output(gv)
        return gv


def _pattern(name="numpy.matmul_transposed_bias_relu"):
    pat, ann = make_matmul_pattern(True, "relax.nn.relu", transposed_rhs=True)
    return FusionPattern(name, pat, ann)


def test_a_match_becomes_a_private_composite_function():
    # TVM 0.27 prints the same module (out_dtype=None there)
    @I.ir_module
    class Expected:
        @R.function(private=True)
        def fused_relax_permute_dims_relax_matmul_relax_add_relax_nn_relu(
                w: R.Tensor((4, 3), dtype="float32"), x: R.Tensor((2, 3), dtype="float32"),
                b: R.Tensor((4,), dtype="float32")) -> R.Tensor((2, 4), dtype="float32"):
            R.func_attr({"Composite": "numpy.matmul_transposed_bias_relu", "Primitive": True})
            with R.dataflow():
                lv: R.Tensor((3, 4), dtype="float32") = R.permute_dims(w, axes=None)
                lv1: R.Tensor((2, 4), dtype="float32") = R.matmul(x, lv)
                lv2: R.Tensor((2, 4), dtype="float32") = R.add(lv1, b)
                gv: R.Tensor((2, 4), dtype="float32") = R.nn.relu(lv2)
                R.output(gv)
            return gv

        @R.function
        def main(x: R.Tensor((2, 3), dtype="float32"), w: R.Tensor((4, 3), dtype="float32"),
                 b: R.Tensor((4,), dtype="float32")) -> R.Tensor((2, 4), dtype="float32"):
            cls = Expected
            with R.dataflow():
                lv: R.Tensor((2, 4), dtype="float32") = \
                    cls.fused_relax_permute_dims_relax_matmul_relax_add_relax_nn_relu(w, x, b)
                gv: R.Tensor((2, 4), dtype="float32") = R.multiply(lv, lv)
                R.output(gv)
            return gv

    assert_structural_equal(FuseOpsByPattern([_pattern()])(Linear), Expected)


def test_annotate_codegen_wraps_the_composite_in_a_codegen_function():
    # as TVM 0.27 prints it: the outer function public, its global_symbol its name
    @I.ir_module
    class Expected:
        @R.function
        def fused_relax_permute_dims_relax_matmul_relax_add_relax_nn_relu_numpy(
                w: R.Tensor((4, 3), dtype="float32"), x: R.Tensor((2, 3), dtype="float32"),
                b: R.Tensor((4,), dtype="float32")) -> R.Tensor((2, 4), dtype="float32"):
            R.func_attr({"Codegen": "numpy"})

            @R.function
            def local_func(w_1: R.Tensor((4, 3), dtype="float32"),
                           x_1: R.Tensor((2, 3), dtype="float32"),
                           b_1: R.Tensor((4,), dtype="float32")
                           ) -> R.Tensor((2, 4), dtype="float32"):
                R.func_attr({"Composite": "numpy.matmul_transposed_bias_relu"})
                with R.dataflow():
                    lv: R.Tensor((3, 4), dtype="float32") = R.permute_dims(w_1, axes=None)
                    lv1: R.Tensor((2, 4), dtype="float32") = R.matmul(x_1, lv)
                    lv2: R.Tensor((2, 4), dtype="float32") = R.add(lv1, b_1)
                    gv: R.Tensor((2, 4), dtype="float32") = R.nn.relu(lv2)
                    R.output(gv)
                return gv

            output: R.Tensor((2, 4), dtype="float32") = local_func(w, x, b)
            return output

        @R.function
        def main(x: R.Tensor((2, 3), dtype="float32"), w: R.Tensor((4, 3), dtype="float32"),
                 b: R.Tensor((4,), dtype="float32")) -> R.Tensor((2, 4), dtype="float32"):
            cls = Expected
            with R.dataflow():
                lv: R.Tensor((2, 4), dtype="float32") = \
                    cls.fused_relax_permute_dims_relax_matmul_relax_add_relax_nn_relu_numpy(
                        w, x, b)
                gv: R.Tensor((2, 4), dtype="float32") = R.multiply(lv, lv)
                R.output(gv)
            return gv

    out = FuseOpsByPattern([_pattern()], annotate_codegen=True)(Linear)
    assert_structural_equal(out, Expected)
    name = "fused_relax_permute_dims_relax_matmul_relax_add_relax_nn_relu_numpy"
    assert out[name].attrs == {"Codegen": "numpy", "global_symbol": name}


def test_the_first_pattern_has_priority():
    small = FusionPattern("numpy.matmul_transposed",
                          *make_matmul_pattern(transposed_rhs=True))
    out = FuseOpsByPattern([_pattern(), small])(Linear)
    assert [f.attrs["Composite"] for f in out.functions.values() if "Composite" in f.attrs] \
        == ["numpy.matmul_transposed_bias_relu"]
    out = FuseOpsByPattern([small, _pattern()])(Linear)
    assert [f.attrs["Composite"] for f in out.functions.values() if "Composite" in f.attrs] \
        == ["numpy.matmul_transposed"]


@I.ir_module
class Escaping:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), w: R.Tensor((3, 4), "float32"),
             b: R.Tensor((4,), "float32")):
        with R.dataflow():
            lv = R.matmul(x, w)
            lv1 = R.add(lv, b)
            gv = R.multiply(lv1, lv)  # lv is needed after the matmul + add
            R.output(gv)
        return gv


def test_a_match_whose_intermediate_value_is_used_outside_stays():
    pat, ann = make_matmul_pattern(with_bias=True)
    assert_structural_equal(FuseOpsByPattern([("numpy.matmul_bias", pat, ann)])(Escaping),
                            Escaping)


def test_a_check_can_reject_a_match():
    pat, ann = make_matmul_pattern(True, "relax.nn.relu", transposed_rhs=True)
    seen = []

    def check(ctx):
        seen.append((ctx.annotated_expr["lhs"], ctx.matched_expr.op.name))
        return False

    out = FuseOpsByPattern([("numpy.m", pat, ann, check)])(Linear)
    assert_structural_equal(out, Linear)
    assert seen == [(Linear["main"].params[0], "relax.nn.relu")]


def test_constants_stay_inside_with_bind_constants():
    @I.ir_module
    class WithConst:
        @R.function
        def main(x: R.Tensor((2, 3), "float32")):
            with R.dataflow():
                lv = R.matmul(x, R.const(np.ones((3, 4), "float32")))
                gv = R.add(lv, lv)
                R.output(gv)
            return gv

    pat, ann = make_matmul_pattern()
    bound = FuseOpsByPattern([("numpy.matmul", pat, ann)])(WithConst)
    lifted = FuseOpsByPattern([("numpy.matmul", pat, ann)], bind_constants=False)(WithConst)
    assert [p.name_hint for p in bound["fused_relax_matmul"].params] == ["x"]
    assert [p.name_hint for p in lifted["fused_relax_matmul"].params] == ["x", "param_0"]


def test_a_pattern_must_be_a_fusion_pattern_or_a_tuple():
    with pytest.raises(TVMError, match="FusionPattern or a tuple"):
        FuseOpsByPattern(["numpy.matmul"])
