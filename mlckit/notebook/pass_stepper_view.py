"""The ipywidgets view of a :class:`~mlckit.notebook.PassStepper` (it only reads the model).

A list of the passes (``●`` changed the IR, ``○`` did not, with the time of each), a slider
(arrow keys step it, as they step the list), "only passes that changed", a unified or
side-by-side diff or the graph before and after, of the whole module or of one function.

Example::

    view = PassStepper(MyModule).view()
    view.show(2)            # select pass 2, as clicking it would
    view.widget             # the ipywidgets.VBox to display
"""

from __future__ import annotations

import html

import ipywidgets as W

from .diff import DIFF_MODES
from .pictures import LiveDisplay, pass_stepper_picture

__all__ = ["PassStepperView"]


def step_label(step) -> str:
    """The list entry of a step: changed mark, index, name, time."""
    mark = "●" if step.changed else "○"
    return f"{mark} {step.index:>2} {step.name}  ({step.seconds * 1e3:.2f} ms)"


class PassStepperView:
    """Widgets over a PassStepper: ``select`` (the passes), ``slider``, ``only_changed``,
    ``mode`` ("unified" / "side_by_side"), ``diff`` (HTML) and ``widget`` (all of them)."""

    def __init__(self, stepper):
        self.stepper = stepper
        self.header = W.HTML(self._header_html())
        self.only_changed = W.Checkbox(value=stepper.fold,
                                       description="only passes that changed", indent=False)
        self.mode = W.ToggleButtons(options=[("unified", "unified"),
                                             ("side by side", "side_by_side"),
                                             ("graph", "graph")],
                                    value=DIFF_MODES[0], style={"button_width": "auto"})
        # "" (not None, which a dropdown shows as no choice at all): the whole module
        self.function = W.Dropdown(options=[("whole module", "")]
                                   + [(name, name) for name in stepper.functions],
                                   value="", description="function",
                                   layout=W.Layout(width="100%"),
                                   style={"description_width": "4.5em"})
        self.select = W.Select(rows=min(max(len(stepper.steps), 2), 12),
                               layout=W.Layout(width="100%"))
        self.slider = W.IntSlider(min=0, max=0, value=0, description="step",
                                  continuous_update=True, readout=False,
                                  layout=W.Layout(width="100%"),
                                  style={"description_width": "3em"})
        self.title = W.HTML()
        self.diff = W.HTML()
        self._syncing = False
        self._refresh_options()
        self.select.observe(self._on_select, names="value")
        self.slider.observe(self._on_slider, names="value")
        self.only_changed.observe(lambda _: self._refresh_options(), names="value")
        self.mode.observe(lambda _: self._render(), names="value")
        self.function.observe(lambda _: self._render(), names="value")
        self.live = LiveDisplay(self.mimebundle)
        # the pass list keeps its width (labels readable); the diff takes the rest and
        # scrolls sideways instead of squeezing the controls
        controls = W.VBox([self.only_changed, self.select, self.slider, self.mode,
                           self.function],
                          layout=W.Layout(flex="0 0 26em", width="26em"))
        self.diff.layout = W.Layout(overflow="auto", max_height="40em")
        right = W.VBox([self.title, self.diff],
                       layout=W.Layout(flex="1 1 auto", min_width="0", margin="0 0 0 1em"))
        self.widget = W.VBox([self.header, W.HBox([controls, right],
                                                  layout=W.Layout(width="100%"))])
        self.widget.add_class("mlckit-pass-stepper")
        self._render()

    # -- what is shown --------------------------------------------------------------------
    @property
    def visible(self) -> list[int]:
        """The indices of the steps listed (all, or only those that changed the IR)."""
        steps = self.stepper.changed_steps if self.only_changed.value else self.stepper.steps
        return [s.index for s in steps]

    @property
    def current(self) -> int | None:
        """The index of the selected step (None when the list is empty)."""
        return self.select.value

    def show(self, index: int) -> None:
        """Select step ``index`` (as a click on the list would)."""
        if index not in self.visible:
            self.only_changed.value = False
        self.select.value = index

    def _header_html(self) -> str:
        s = self.stepper
        return (f"<b>PassStepper</b>: {len(s.steps)} pass(es), {len(s.changed_steps)} changed "
                f"the IR, {s.total_seconds * 1e3:.2f} ms in all")

    def _refresh_options(self) -> None:
        keep = self.select.value
        visible = self.visible
        self._syncing = True
        try:
            self.select.options = [(step_label(self.stepper.steps[i]), i) for i in visible]
            self.slider.max = max(len(visible) - 1, 0)
            self.slider.disabled = len(visible) <= 1
            value = keep if keep in visible else (visible[0] if visible else None)
            self.select.value = value
            self.slider.value = visible.index(value) if value is not None else 0
        finally:
            self._syncing = False
        self._render()

    def _on_select(self, change) -> None:
        if self._syncing:
            return
        if change["new"] is not None:
            self._syncing = True
            try:
                self.slider.value = self.visible.index(change["new"])
            finally:
                self._syncing = False
        self._render()

    def _on_slider(self, change) -> None:
        if self._syncing:
            return
        visible = self.visible
        if visible:
            self.select.value = visible[change["new"]]

    def _render(self) -> None:
        i = self.current
        if i is None:
            self.title.value = "<i>no pass changed the IR</i>"
            self.diff.value = ""
            return
        step = self.stepper.steps[i]
        state = "changed the IR" if step.changed else "left the IR unchanged"
        self.title.value = (f"<b>{step.index}: {html.escape(step.name)}</b> {state} "
                            f"&mdash; {step.seconds * 1e3:.3f} ms")
        self.diff.value = self.stepper.view_html(i, self.mode.value, self.function_name)
        if hasattr(self, "live"):
            self.live.changed()

    def select_function(self, name: str | None) -> None:
        """Show only function ``name`` (None: the whole module), as the dropdown does."""
        self.function.value = name or ""

    @property
    def function_name(self) -> str | None:
        """The function shown alone (None: the whole module)."""
        return self.function.value or None

    # -- display --------------------------------------------------------------------------
    def picture(self) -> str:
        """The static picture of the view as it stands (:mod:`.pictures`)."""
        return pass_stepper_picture(self.stepper, self.current, self.mode.value,
                                    self.function_name, fold=self.only_changed.value)

    def mimebundle(self, include=None, exclude=None) -> dict:
        """The widget's display data, its picture as ``text/html`` and the summary as
        ``text/plain``."""
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude) or {}
        bundle["text/html"] = self.picture()
        bundle["text/plain"] = self.stepper.summary(self.only_changed.value)
        return bundle
