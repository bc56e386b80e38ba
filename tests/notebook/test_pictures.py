"""Static pictures of the widgets: the text/html beside the live widget in their display
data, shown where no widget can run (an untrusted notebook, GitHub, nbviewer, a static
site), and kept in step with the model while cells run."""

import html
import re

import pytest

from mlckit import relax
from mlckit.notebook import PassStepper, ScheduleExplorer, pictures
from mlckit.notebook.pictures import LiveDisplay, explorer_picture, pass_stepper_picture
from tests.kernels import mm_relu

from .sanitizer import dropped

WIDGET = "application/vnd.jupyter.widget-view+json"


def text_of(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


@pytest.fixture
def explorer():
    ex = ScheduleExplorer(mm_relu, measure=False)
    ex.apply("split", block="Y", loop="j", factors=[None, 4])
    return ex


def test_the_explorer_s_display_data_holds_the_widget_and_its_picture(explorer):
    bundle = explorer._repr_mimebundle_()
    assert bundle[WIDGET]["model_id"] == explorer.view().widget.model_id
    assert bundle["text/html"] == explorer_picture(explorer)
    assert bundle["text/plain"] == explorer.text()


def test_the_explorer_s_picture_shows_its_step_script_twin_diff_and_trace(explorer):
    picture = explorer_picture(explorer)
    assert dropped(picture) == []
    seen = text_of(picture)
    assert 'ScheduleExplorer · main · step 1 of 1: split(block="Y", loop="j", ' \
           "factors=[None, 4]) → j_0, j_1" in seen
    assert "for i, j_0, j_1, k in T.grid(128, 32, 4, 128):" in seen   # TVMScript
    assert "def main(A, B, C):" in seen                                # lnumpy, folded
    assert "+        for i, j_0, j_1, k in T.grid(128, 32, 4, 128):" in seen  # the diff
    assert 'b0 = sch.get_block(name="Y", func_name="main")' in seen  # the trace
    assert "<svg" not in picture  # sanitizers drop inline SVG


def test_a_refused_step_shows_in_the_picture(explorer):
    explorer.apply("vectorize", block="Y", loop="k")
    assert "ScheduleError: vectorize:" in text_of(explorer_picture(explorer))


def test_the_pass_stepper_s_picture_lists_the_passes_and_the_selected_diff(mlp):
    stepper = PassStepper(mlp, [relax.transform.ToNonDataflow(),
                                relax.transform.CallTIRRewrite()])
    view = stepper.view()
    view.show(1)
    bundle = stepper._repr_mimebundle_()
    assert bundle["text/html"] == pass_stepper_picture(stepper, 1, "unified", None)
    assert bundle[WIDGET]["model_id"] == view.widget.model_id
    picture = bundle["text/html"]
    assert dropped(picture) == []
    seen = text_of(picture)
    assert "PassStepper: 2 pass(es), 2 changed the IR" in seen
    assert "1: CallTIRRewrite changed the IR" in seen
    assert "+        cls.linear0(x, w0, b0, alloc)" in seen
    assert re.search(r'font-weight:bold;background:#ddf4ff;"><td[^>]*>●</td><td[^>]*>1</td>',
                     picture)


def test_the_pass_stepper_filters_by_function(mlp):
    stepper = PassStepper(mlp, [relax.transform.LegalizeOps(),
                                relax.transform.CallTIRRewrite()])
    assert stepper.functions[:4] == ["linear0", "relu0", "linear1", "main"]
    whole = stepper.diff(1)
    only_main = stepper.diff(1, func="main")
    assert "+        linear0(x, w0, b0, alloc)" in only_main.splitlines()
    assert only_main != whole and "def linear0" not in only_main
    assert stepper.diff(1, func="linear0") == ""  # CallTIRRewrite leaves the kernels alone
    view = stepper.view()
    view.show(1)
    view.select_function("linear0")
    assert "(no change)" in view.diff.value


def test_the_graph_mode_draws_the_function_before_and_after_the_pass(mlp):
    stepper = PassStepper(mlp, [relax.transform.CallTIRRewrite()])
    out = stepper.view_html(0, "graph", "main")
    assert out == stepper.graph_html(0)  # main by default
    assert dropped(out) == []
    assert out.count('src="data:image/svg+xml;base64,') == 2
    assert "before CallTIRRewrite" in out and "after CallTIRRewrite" in out
    assert "no function nope here" in stepper.graph_html(0, "nope")


class FakeHandle:
    def __init__(self, shown):
        self.shown = shown

    def update(self, bundle, raw):
        self.shown.append(("update", bundle))


def test_live_display_updates_the_picture_only_while_a_cell_runs(monkeypatch):
    import IPython.display

    shown, state = [], {"n": 0}

    def fake_display(bundle, raw, display_id):
        shown.append(("display", bundle))
        return FakeHandle(shown)

    monkeypatch.setattr(IPython.display, "display", fake_display)
    live = LiveDisplay(lambda: {"text/html": f"state {state['n']}"})
    live.display()
    state["n"] = 1
    monkeypatch.setattr(pictures, "_running_a_cell", lambda: False)  # a click in the widget
    live.changed()
    monkeypatch.setattr(pictures, "_running_a_cell", lambda: True)   # code in a cell
    state["n"] = 2
    live.changed()
    assert shown == [("display", {"text/html": "state 0"}), ("update", {"text/html": "state 2"})]
