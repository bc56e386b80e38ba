"""The explorer's ipywidgets view, driven as a learner would, without a browser: it offers
only the legal primitives, applies through the model, and renders what the model holds."""

import html
import re
import threading

import pytest

from mlckit.ir import assert_structural_equal
from mlckit.notebook import ScheduleExplorer
from mlckit.notebook.explorer_widget import history_svg
from tests.kernels import mm_relu


@pytest.fixture
def view():
    return ScheduleExplorer(mm_relu, measure=False).view()


def text_of(markup: str) -> str:
    """What an HTML widget reads as, without its tags."""
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def shown(view) -> list[str]:
    return [name for name, row in view.rows.items() if row.layout.display != "none"]


def test_the_view_opens_on_the_first_block_and_its_outermost_loop(view):
    assert view.block.options == ("Y", "C")
    assert (view.block.value, view.loop.value) == ("Y", "i")
    assert view.loop.options == (("i", "i"), ("j", "j"), ("k", "k"),
                                 ("i  (above C)", ("C", "i")), ("j  (above C)", ("C", "j")))


def test_only_the_legal_primitives_are_shown_and_the_others_say_why(view):
    view.pick("Y", "k")
    assert shown(view) == view.explorer.legal_primitives("Y", "k")
    assert "<b>fuse</b>: loop `k` is the innermost above block `Y`" in view.not_here.value
    assert "<b>compute_inline</b>: ScheduleError: compute_inline: block `Y` is a reduction" \
        in view.not_here.value
    view.pick("Y", ("C", "j"))
    assert shown(view) == ["compute_at", "reverse_compute_at", "cache_read", "cache_write"]


def test_the_inputs_propose_parameters_for_the_picked_loop(view):
    view.pick("Y", "j")
    assert view.inputs["split"]["factors"].value == "None, 4"
    assert view.inputs["fuse"]["loops"].value == "j, k"
    assert view.inputs["reorder"]["loops"].value == "k, j"


def test_clicking_a_primitive_applies_it_and_every_view_follows(view):
    view.pick("Y", "j")
    view.inputs["split"]["factors"].value = "None, 8"
    view.click("split")
    ex = view.explorer
    assert ex.current.call == 'split(block="Y", loop="j", factors=[None, 8])'
    assert "j_0" in view.script.value and "j_1" in view.script.value
    assert "for j_1 in range(8):" in text_of(view.lnumpy.value)
    assert "for i, j_0, j_1, k in T.grid(128, 16, 8, 128):" in text_of(view.script.value)
    assert "l4, l5 = sch.split(loop=l2, factors=[None, 8]" in view.trace.value
    assert "+++ step 1" in view.diff.value
    assert "step 1 of 1: split(block=&quot;Y&quot;, loop=&quot;j&quot;" in view.header.value
    assert view.loop.options[:4] == (("i", "i"), ("j_0", "j_0"), ("j_1", "j_1"), ("k", "k"))
    assert view.block.value == "Y"


def test_a_refused_click_shows_the_error_inline_and_keeps_what_was_typed(view):
    view.pick("Y", "k")
    view.inputs["split"]["factors"].value = "3, 4"
    view.click("split")
    assert "the product of the factors (3 * 4 = 12) is smaller than the extent 128" \
        in view.error.value
    assert view.explorer.current.index == 0
    assert view.inputs["split"]["factors"].value == "3, 4"
    view.inputs["split"]["factors"].value = "None, 16"
    view.click("split")
    assert view.error.value == ""
    assert view.explorer.current.new_names == ["k_0", "k_1"]


def test_a_pick_proposes_parameters_only_for_the_inputs_the_learner_did_not_edit(view):
    view.pick("Y", "i")
    view.inputs["reorder"]["loops"].value = "k, i"
    view.pick("Y", "j")
    assert view.inputs["fuse"]["loops"].value == "j, k"      # proposed for j
    assert view.inputs["reorder"]["loops"].value == "k, i"   # as typed
    view.click("reorder")
    assert view.explorer.current.call == 'reorder(block="Y", loops=["k", "i"])'
    assert view.inputs["reorder"]["loops"].value == "i, j"   # a new step (k, j, i): all proposed


def test_a_pick_handled_after_the_typing_that_followed_it_keeps_what_was_typed(view):
    # JupyterLab 4.6 + ipykernel 7 may handle the loop's message after the text's
    view.pick("Y", "j")
    view.inputs["split"]["factors"].value = "1, 2"
    view.pick("Y", "k")
    view.click("split")
    assert "the product of the factors (1 * 2 = 2) is smaller than the extent 128 of loop `k`" \
        in view.error.value
    assert view.explorer.current.index == 0 and view.explorer.steps == view.explorer.history


def test_events_from_another_thread_wait_for_the_step_in_progress(view):
    ex = view.explorer
    with ex.lock:  # a step being applied (a cell, or a click on the main shell)
        pick = threading.Thread(target=view.pick, args=("Y", "k"))
        pick.start()
        pick.join(timeout=0.5)
        assert pick.is_alive()  # the pick's handler waits: the rows are still those of i
        assert shown(view) == ex.legal_primitives("Y", "i")
        click = threading.Thread(target=view.click, args=("split",))
        click.start()
        click.join(timeout=0.5)
        assert click.is_alive() and ex.current.index == 0
    pick.join()
    click.join()
    assert ex.current.call == 'split(block="Y", loop="k", factors=[None, 4])'


def test_a_malformed_parameter_is_shown_inline_and_nothing_is_applied(view):
    view.pick("Y", "j")
    view.inputs["split"]["factors"].value = "4 32"
    view.click("split")
    assert "factors: expected integers separated by commas" in view.error.value
    assert view.explorer.current.index == 0


def test_undo_and_redo_buttons_move_the_model_and_are_enabled_only_when_they_can(view):
    ex = view.explorer
    assert view.undo_button.disabled and view.redo_button.disabled
    view.pick("Y", "j")
    view.click("split")
    after_split = ex.sch.mod
    assert not view.undo_button.disabled
    view.undo_button.click()
    assert ex.current.index == 0 and "j_0" not in view.script.value
    assert view.undo_button.disabled and not view.redo_button.disabled
    view.redo_button.click()
    assert ex.current.index == 1 and "j_0" in view.script.value
    assert_structural_equal(ex.sch.mod, after_split)


def test_steps_applied_through_the_model_show_in_the_view(view):
    ex = view.explorer
    view.pick("C", "j")
    ex.apply("split", block="Y", loop="j", factors=[None, 4])
    assert "j_0" in view.script.value
    assert (view.block.value, view.loop.value) == ("C", "j")


def test_fuse_and_reorder_take_their_loops_from_the_input(view):
    view.pick("Y", "i")
    view.inputs["reorder"]["loops"].value = "k, i"
    view.click("reorder")
    assert view.explorer.current.call == 'reorder(block="Y", loops=["k", "i"])'
    assert view.explorer.loops("Y") == ["k", "j", "i"]


def test_the_display_data_is_the_widget_with_the_text_form_as_plain_text(view):
    bundle = view.explorer._repr_mimebundle_()
    assert bundle["text/plain"] == view.explorer.text()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == view.widget.model_id
    assert view.explorer.view() is view


def test_run_times_show_as_a_table_and_a_plot():
    ex = ScheduleExplorer(mm_relu)
    view = ex.view()
    ex.apply("split", block="Y", loop="j", factors=[None, 4])
    timing = view.timing.value
    assert "<svg" in timing and timing.count("<tr") == 2
    assert f"<td>{ex.history[1].time_text}</td><td>✓</td>" in timing
    assert "same results as step 0" in view.header.value


def test_without_measuring_the_timing_panel_says_so(view):
    assert view.timing.value == "<b>run time</b>: not measured"


def test_the_history_plot_is_deterministic_svg():
    ex = ScheduleExplorer(mm_relu, measure=False)
    steps = ex.history
    steps[0].seconds = 0.002
    first, second = history_svg(steps), history_svg(steps)
    assert first == second and first.startswith("<svg")
    assert ">step<" in first and ">ms<" in first
