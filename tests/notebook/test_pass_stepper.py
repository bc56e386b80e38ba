"""PassStepper: a pipeline run once under a recording instrument, then stepped through."""

import difflib

import pytest

from mlckit import relax
from mlckit.error import TVMIndexError, TVMTypeError, TVMValueError
from mlckit.instrument import PassTimingInstrument
from mlckit.ir import IRModule, assert_structural_equal
from mlckit.notebook import PassStepper
from mlckit.transform import PassContext, Sequential, module_pass


@module_pass(opt_level=0, name="Identity")
def identity(mod, ctx):
    return mod


def counting_pass(counter):
    @module_pass(opt_level=0, name="Count")
    def count(mod, ctx):
        counter.append(1)
        return mod.with_attr("counted", len(counter))

    return count


def test_default_passes_are_the_build_pipeline_in_order(mlp):
    stepper = PassStepper(mlp)
    assert [s.name for s in stepper.steps] == [p.info.name for p in relax.vm_lowering_pipeline()]
    assert [s.index for s in stepper.steps] == list(range(len(stepper.steps)))


def test_the_result_is_what_the_pipeline_produces(mlp):
    stepper = PassStepper(mlp)
    assert_structural_equal(stepper.result, relax.vm_lowering_pipeline()(mlp))


def test_steps_hold_the_tvmscript_before_and_after_each_pass_chained(mlp):
    stepper = PassStepper(mlp)
    assert stepper.steps[0].before == mlp.script()
    assert stepper.steps[-1].after == stepper.result.script()
    for prev, nxt in zip(stepper.steps, stepper.steps[1:]):
        assert prev.after == nxt.before
    for step in stepper.steps:
        assert step.module_after.script() == step.after


def test_call_tir_rewrite_step_shows_call_tir_replaced_by_an_allocation_and_a_call(mlp):
    stepper = PassStepper(mlp)
    step = stepper[[s.name for s in stepper.steps].index("CallTIRRewrite")]
    assert step.changed
    assert "R.call_tir(cls.linear0" in step.before and "R.call_tir" not in step.after
    assert "cls.linear0(x, w0, b0, alloc)" in step.after


def test_diff_is_the_unified_diff_of_the_step(mlp):
    stepper = PassStepper(mlp)
    i = [s.name for s in stepper.steps].index("CallTIRRewrite")
    step = stepper.steps[i]
    expected = "\n".join(difflib.unified_diff(
        step.before.splitlines(), step.after.splitlines(), "before CallTIRRewrite",
        "after CallTIRRewrite", lineterm=""))
    assert stepper.diff(i) == expected
    lines = stepper.diff(i).splitlines()
    assert lines[:2] == ["--- before CallTIRRewrite", "+++ after CallTIRRewrite"]
    assert ("-        lv0 = R.call_tir(cls.linear0, (x, w0, b0), "
            'out_sinfo=R.Tensor((n, 128), dtype="float32"))') in lines
    assert "+        cls.linear0(x, w0, b0, alloc)" in lines


def test_a_pass_that_changes_nothing_is_unmarked_with_an_empty_diff(mlp):
    stepper = PassStepper(mlp, [relax.transform.ToNonDataflow(), identity])
    assert [(s.name, s.changed) for s in stepper.steps] == [("ToNonDataflow", True),
                                                            ("Identity", False)]
    assert stepper.diff(1) == ""
    assert [s.name for s in stepper.changed_steps] == ["ToNonDataflow"]


def test_nested_sequentials_are_flattened_to_the_passes_that_do_the_work(mlp):
    inner = Sequential([relax.transform.ToNonDataflow(), identity], name="inner")
    stepper = PassStepper(mlp, Sequential([inner, relax.transform.CallTIRRewrite()]))
    assert [s.name for s in stepper.steps] == ["ToNonDataflow", "Identity", "CallTIRRewrite"]


def test_stepping_reads_the_record_and_never_reruns_a_pass(mlp):
    counter = []
    stepper = PassStepper(mlp, [counting_pass(counter)])
    for _ in range(3):
        stepper.diff(0), stepper.steps[0].after, stepper.diff_html(0, "side_by_side")
    stepper.view().show(0)
    assert counter == [1]


def test_the_outer_pass_context_settings_and_instruments_still_apply(mlp):
    timing = PassTimingInstrument()
    with PassContext(disabled_pass=["Identity"], instruments=[timing]):
        stepper = PassStepper(mlp, [identity, relax.transform.ToNonDataflow()])
    assert [s.name for s in stepper.steps] == ["ToNonDataflow"]
    assert [name for name, _ in timing.timings][-2:] == ["ToNonDataflow", "PassStepper"]


def test_each_step_records_the_seconds_its_pass_took(mlp):
    stepper = PassStepper(mlp)
    assert all(isinstance(s.seconds, float) and s.seconds > 0 for s in stepper.steps)
    assert stepper.total_seconds == pytest.approx(sum(s.seconds for s in stepper.steps))


def test_a_relax_function_is_stepped_as_the_main_of_a_module(mlp):
    stepper = PassStepper(mlp["main"].with_attr("global_symbol", "main"),
                          [relax.transform.ToNonDataflow()])
    assert isinstance(stepper.module, IRModule) and "main" in stepper.module


def test_text_form_lists_each_pass_with_its_mark_and_time(mlp):
    stepper = PassStepper(mlp, [relax.transform.ToNonDataflow(), identity])
    lines = repr(stepper).splitlines()
    assert lines[0].startswith("PassStepper: 2 pass(es), 1 changed the IR, ")
    assert lines[1].split()[:3] == ["*", "0", "ToNonDataflow"] and lines[1].endswith(" ms")
    assert lines[2].split()[:2] == ["1", "Identity"]


def test_a_step_out_of_range_is_a_tvm_index_error(mlp):
    stepper = PassStepper(mlp, [identity])
    with pytest.raises(TVMIndexError, match="step 5 is out of range: the pipeline ran 1 pass"):
        stepper.diff(5)


def test_wrong_inputs_are_tvm_type_errors(mlp):
    with pytest.raises(TVMTypeError, match="expects an IRModule"):
        PassStepper("not a module")
    with pytest.raises(TVMTypeError, match="a pass, a list of passes or None"):
        PassStepper(mlp, 42)


# -- the TIR lowering pipeline ------------------------------------------------------------------
def test_tir_pipeline_steps_through_the_lowering_passes_of_a_prim_func():
    from tests.tir.transform._mm import mm_relu

    stepper = PassStepper(mm_relu, pipeline="tir")
    assert [s.name for s in stepper.steps] == [
        "LowerInitBlock", "PlanAndUpdateBufferAllocationLocation", "ConvertBlocksToOpaque",
        "CompactBufferAllocation", "LowerMatchBuffer", "Simplify",
        "LowerOpaqueBlock", "FlattenBuffer", "VectorizeLoop", "StorageRewrite", "UnrollLoop", "Simplify",
        "RemoveNoOp"]
    init = stepper.steps[0].diff()
    assert "-                with T.init():\n+                if vk == 0:\n" in init
    assert "T.block" not in stepper.steps[-1].after


def test_tir_summary_folds_the_passes_that_changed_nothing():
    from tests.tir.transform._mm import mm_relu

    folded = PassStepper(mm_relu, pipeline="tir").summary(fold=True).splitlines()
    # mm_relu's Y is used whole at the root, no views: nothing to move, compact, simplify...
    assert folded[1:] == [
        folded[1],
        "        (1 unchanged: PlanAndUpdateBufferAllocationLocation)",
        folded[3],
        "        (3 unchanged: CompactBufferAllocation, LowerMatchBuffer, Simplify)",
        folded[5], folded[6],
        "        (5 unchanged: VectorizeLoop, StorageRewrite, UnrollLoop, Simplify, RemoveNoOp)"]
    assert "LowerInitBlock" in folded[1] and "FlattenBuffer" in folded[6]


def test_unknown_pipeline_name_is_rejected():
    from tests.tir.transform._mm import mm_relu

    with pytest.raises(TVMValueError, match='"relax" or "tir"'):
        PassStepper(mm_relu, pipeline="llvm")


def test_tir_stepper_folds_unchanged_passes_by_default_the_relax_one_does_not(mlp):
    from tests.tir.transform._mm import mm_relu

    tir_stepper = PassStepper(mm_relu, pipeline="tir")
    assert tir_stepper.fold and repr(tir_stepper) == tir_stepper.summary(fold=True)
    assert "(5 unchanged: VectorizeLoop, StorageRewrite, UnrollLoop, Simplify, RemoveNoOp)" in repr(
        tir_stepper)
    relax_stepper = PassStepper(mlp)
    assert not relax_stepper.fold and repr(relax_stepper) == relax_stepper.summary()


def test_fold_can_be_chosen_either_way():
    from tests.tir.transform._mm import mm_relu

    unfolded = PassStepper(mm_relu, pipeline="tir", fold=False)
    assert repr(unfolded) == unfolded.summary() and "unchanged" not in repr(unfolded)
    assert len(repr(unfolded).splitlines()) == 1 + len(unfolded.steps)


def test_flatten_buffer_step_shows_the_flat_index_with_constant_strides():
    from tests.tir.transform._mm import mm_relu

    stepper = PassStepper(mm_relu, pipeline="tir")
    diff = stepper.diff([s.name for s in stepper.steps].index("FlattenBuffer")).splitlines()
    assert "-            Y[i, j] = Y[i, j] + A[i, k] * B[k, j]" in diff
    assert "+            Y_1[i * 128 + j] = Y_1[i * 128 + j] + A_1[i * 128 + k] * B_1[k * 128 + j]" in diff
