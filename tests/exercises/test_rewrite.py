"""Graph rewriting with PyExprMutator: wrong answers and the feedback naming them."""

from mlckit import exercises
from mlckit.exercises.source import run_source


def answer(name, old, new):
    ex = exercises.get(name)
    assert old in ex.solution
    return ex, run_source(ex.solution.replace(old, new), f"wrong {name}")["rewrite"]


def test_forgetting_remove_all_unused_leaves_the_multiply():
    ex, rewrite = answer("rewrite.ewise_fma",
                         "    func = relax.analysis.remove_all_unused(func)\n", "")
    fb = ex.check(rewrite)
    assert fb.sections[0].ok
    assert fb.sections[1].lines == ["`main` still calls relax.multiply"]


def test_swapped_fma_arguments_give_wrong_numbers():
    ex, rewrite = answer("rewrite.ewise_fma",
                         "ewise_fma(value.args[0], value.args[1], call.args[1])",
                         "ewise_fma(value.args[0], call.args[1], value.args[1])")
    fb = ex.check(rewrite)
    assert "output `gv0` differs at index (0, 0): expected 0.426573, got 0.778022" in str(fb)
    assert "inputs: x (3, 4), y (3, 4), z (3, 4), float32, random seed 0" in str(fb)


def test_a_fused_function_without_the_primitive_attribute_is_named():
    ex, rewrite = answer("rewrite.fuse_matmul_add", '.with_attr("Primitive", 1)', "")
    fb = ex.check(rewrite)
    assert "the module has 0 functions marked Primitive (none), expected 2" in str(fb)


def test_lowering_every_call_to_relu_is_wrong_and_named():
    ex, rewrite = answer("rewrite.lower_relu",
                         '        if call.op == tvm.ir.Op.get("relax.nn.relu"):\n            return',
                         "        return")
    fb = ex.check(rewrite)
    assert "output `gv` differs at index (0, 0)" in str(fb)
    assert "`main` never calls relax.add" in str(fb)


def test_a_pipeline_without_the_pattern_annotation_fuses_nothing_and_says_which_pass_idled():
    from mlckit import relax

    T = relax.transform
    fb = exercises.get("rewrite.fusion_pipeline").check(
        [T.LegalizeOps(), T.FuseOps(), T.FuseTIR()])
    assert fb.sections[0].ok  # the passes keep the numbers; they just do not fuse
    assert fb.sections[1].lines == ["`main` calls relax.call_tir 3 times, expected 1",
                                    "`FuseOps` (step 1) changed nothing",
                                    "`FuseTIRInner` (step 7) changed nothing"]


def test_a_pipeline_fusing_before_legalizing_is_named_by_the_stepper():
    from mlckit import relax

    T = relax.transform
    fb = exercises.get("rewrite.fusion_pipeline").check(
        [T.FuseOps(), T.LegalizeOps(), T.AnnotateTIROpPattern(), T.FuseTIR()])
    assert "`FuseOps` (step 0) changed nothing" in str(fb)


def test_a_pass_class_instead_of_a_pass_is_named():
    from mlckit import relax

    T = relax.transform
    fb = exercises.get("rewrite.fusion_pipeline").check(
        [T.LegalizeOps, T.AnnotateTIROpPattern(), T.FuseOps(), T.FuseTIR()])
    assert "item 0 of the pipeline is function, not a pass: write " \
           "relax.transform.LegalizeOps() (with the ())" in str(fb)
