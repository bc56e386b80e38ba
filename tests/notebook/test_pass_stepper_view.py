"""The PassStepper's ipywidgets view, driven without a browser: it only reads the model."""

from mlckit import relax
from mlckit.notebook import PassStepper
from mlckit.transform import module_pass


@module_pass(opt_level=0, name="Identity")
def identity(mod, ctx):
    return mod


def stepper_of(mod):
    return PassStepper(mod, [relax.transform.ToNonDataflow(), identity,
                             relax.transform.CallTIRRewrite()])


def test_the_list_marks_passes_that_changed_the_ir(mlp):
    view = stepper_of(mlp).view()
    labels = [label for label, _ in view.select.options]
    assert [label.split()[:3] for label in labels] == [
        ["●", "0", "ToNonDataflow"], ["○", "1", "Identity"], ["●", "2", "CallTIRRewrite"]]
    assert all(label.endswith(" ms)") for label in labels)


def test_selecting_a_pass_shows_its_name_time_and_unified_diff(mlp):
    stepper = stepper_of(mlp)
    view = stepper.view()
    view.show(2)
    assert view.slider.value == 2
    assert "<b>2: CallTIRRewrite</b> changed the IR" in view.title.value
    assert view.title.value.endswith(" ms")
    assert view.diff.value == stepper.diff_html(2, "unified")
    assert "+        cls.linear0(x, w0, b0, alloc)" in view.diff.value


def test_the_slider_steps_the_selection(mlp):
    view = stepper_of(mlp).view()
    view.slider.value = 1
    assert view.current == 1 and "left the IR unchanged" in view.title.value
    assert "(no change)" in view.diff.value


def test_only_passes_that_changed_filters_the_list_and_the_slider(mlp):
    view = stepper_of(mlp).view()
    view.only_changed.value = True
    assert [i for _, i in view.select.options] == [0, 2]
    assert view.slider.max == 1
    view.slider.value = 1
    assert view.current == 2


def test_side_by_side_mode_renders_two_columns(mlp):
    stepper = stepper_of(mlp)
    view = stepper.view()
    view.show(2)
    view.mode.value = "side_by_side"
    assert view.diff.value == stepper.diff_html(2, "side_by_side")
    assert view.diff.value.count('class="mlckit-column"') == 2


def test_the_view_leaves_the_ir_unchanged(mlp):
    stepper = stepper_of(mlp)
    texts = [(s.before, s.after) for s in stepper.steps]
    view = stepper.view()
    for i in range(3):
        view.show(i)
    view.mode.value = "side_by_side"
    assert [(s.module_before.script(), s.module_after.script()) for s in stepper.steps] == texts


def test_displaying_the_stepper_gives_the_widget_and_its_text_form(mlp):
    stepper = stepper_of(mlp)
    bundle = stepper._repr_mimebundle_()
    assert bundle["text/plain"] == repr(stepper)
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == \
        stepper.view().widget.model_id


def test_the_widget_is_marked_as_a_pass_stepper(mlp):
    """Pages (and the browser tests) find each stepper by its class."""
    assert "mlckit-pass-stepper" in stepper_of(mlp).view().widget._dom_classes


def test_the_function_list_offers_the_whole_module_first_then_each_function(mlp):
    view = stepper_of(mlp).view()
    assert view.function.options[0] == ("whole module", "")
    assert [name for _, name in view.function.options[1:]] == ["linear0", "relu0", "linear1",
                                                               "main"]
    assert view.function_name is None
    view.select_function("main")
    assert view.function_name == "main"
    view.select_function(None)
    assert view.function.value == "" and view.function_name is None


def test_a_folding_stepper_starts_with_only_the_passes_that_changed():
    from tests.tir.transform._mm import mm_relu

    stepper = PassStepper(mm_relu, pipeline="tir")
    view = stepper.view()
    assert view.only_changed.value
    assert [i for _, i in view.select.options] == [s.index for s in stepper.changed_steps]
    assert view.mimebundle()["text/plain"] == stepper.summary(fold=True)


def test_the_picture_of_a_folding_stepper_folds_each_run_of_unchanged_passes():
    from tests.tir.transform._mm import mm_relu

    view = PassStepper(mm_relu, pipeline="tir").view()
    picture = view.picture()
    assert "(3 unchanged: CompactBufferAllocation, LowerMatchBuffer, Simplify)" in picture
    assert "(5 unchanged: VectorizeLoop, StorageRewrite, UnrollLoop, Simplify, RemoveNoOp)" in picture
    assert "(1 unchanged: PlanAndUpdateBufferAllocationLocation)" in picture
    assert picture.count("<tr") == len(view.stepper.changed_steps) + 3  # one row per folded run
    view.only_changed.value = False
    assert "unchanged:" not in view.picture()
    assert view.picture().count("<tr") == len(view.stepper.steps)
