"""Notebook 11 (lowering) in a real JupyterLab, in Chromium: run it, and step its TIR pass
stepper, which starts with the passes that changed nothing folded away.
Screenshots: test-artifacts/browser/lowering_*.png."""

from __future__ import annotations

import re
import shutil

import pytest

from .conftest import REPO, Lab
from .test_notebook_in_browser import open_notebook, run_all, stepper_of

pytestmark = pytest.mark.browser

LOWERING = "11_lowering.ipynb"


@pytest.fixture(scope="module")
def lowering(browser, tmp_path_factory, artifacts):
    """Notebook 11, a temporary copy, opened with a kernel and run from top to bottom."""
    root = tmp_path_factory.mktemp("lowering-root")
    shutil.copy(REPO / "notebooks" / LOWERING, root / LOWERING)
    server = Lab(root, tmp_path_factory.mktemp("lowering-home"))
    server.start()
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(60_000)
    page = context.new_page()
    try:
        open_notebook(page, server, LOWERING)
        run_all(page)
        yield page
    finally:
        context.close()
        server.stop()


def test_the_tir_stepper_lists_only_the_passes_that_changed_until_asked(lowering, artifacts):
    passes, stepper = stepper_of(lowering)
    stepper.scroll_into_view_if_needed()
    total, changed = map(int, re.search(r"PassStepper: (\d+) pass\(es\), (\d+) changed",
                                        stepper.inner_text()).groups())
    assert changed < total
    labels = passes.locator("option").all_inner_texts()
    assert len(labels) == changed and all(label.lstrip().startswith("●") for label in labels)
    stepper.get_by_text("only passes that changed").click()  # untick: every pass listed
    lowering.wait_for_function("([el, n]) => el.options.length === n",
                               arg=[passes.element_handle(), total])
    labels = passes.locator("option").all_inner_texts()
    assert any(label.lstrip().startswith("○") for label in labels)


def test_the_flatten_buffer_step_shows_the_flat_index(lowering, artifacts):
    passes, stepper = stepper_of(lowering)
    names = passes.locator("option").all_inner_texts()
    passes.select_option(index=next(i for i, t in enumerate(names) if "FlattenBuffer" in t))
    stepper.get_by_text("FlattenBuffer", exact=False).first.wait_for()
    diff = stepper.locator("pre.mlckit-diff")
    diff.get_by_text("A_1[i * 128 + k]").first.wait_for()
    stepper.screenshot(path=str(artifacts / "lowering_tir_pass_stepper.png"))
