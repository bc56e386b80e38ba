"""gpu_view's HTML in a real JupyterLab, in Chromium, as the stored output of an *untrusted*
notebook: JupyterLab sanitizes it (no script, styles filtered) and it must still show its
coloured grids, race outlines and lists, inside its own scrolling box.
Screenshot: test-artifacts/browser/gpu_view_untrusted.png."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mlckit.notebook.gpu_view import _colour, gpu_view

from ..backend.numba_cuda import access_kernels as K
from .conftest import Lab

pytestmark = pytest.mark.browser

NAME = "gpu_view_untrusted.ipynb"


def stored_view_notebook() -> dict:
    """A notebook whose one code cell holds gpu_view's output, as nbconvert would store it
    (and unsigned: JupyterLab treats its outputs as untrusted)."""
    a = np.random.default_rng(0).uniform(-1, 1, 259).astype("float32")
    view = gpu_view(K.window_sum_no_barrier, a, np.zeros(256, "float32"), sync=False)
    output = {"output_type": "execute_result", "execution_count": 1, "metadata": {},
              "data": {"text/html": view._repr_html_(), "text/plain": repr(view)}}
    cell = {"cell_type": "code", "execution_count": 1, "id": "view", "metadata": {},
            "outputs": [output],
            "source": "gpu_view(window_sum_no_barrier, a, b, sync=False)"}
    return {"cells": [cell], "metadata": {"kernelspec": {"display_name": "Python 3",
                                                         "language": "python", "name": "python3"}},
            "nbformat": 4, "nbformat_minor": 5}


@pytest.fixture(scope="module")
def gpu_lab(tmp_path_factory, sync_playwright):
    root = tmp_path_factory.mktemp("gpu-view-root")
    (root / NAME).write_text(json.dumps(stored_view_notebook()))
    server = Lab(root, tmp_path_factory.mktemp("gpu-view-home"))
    server.start()
    yield server
    server.stop()


def rgb(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[k:k + 2], 16) for k in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


def test_the_view_renders_in_an_untrusted_notebook(page, gpu_lab, artifacts):
    page.goto(gpu_lab.url(NAME))
    output = page.locator(".jp-OutputArea-output[data-mime-type='text/html']")
    output.wait_for()
    # the race on A_shared[64]: written by thread 0, read by 62 and 63, outlined in red
    cell = output.locator('span[title^="A_shared[64];"]')
    assert cell.get_attribute("title") == \
        "A_shared[64]; written by thread 0; read by thread 62, 63; RACE"
    style = cell.evaluate("el => { const s = getComputedStyle(el); return [s.backgroundColor,"
                          " s.outlineColor, s.outlineStyle, s.display, s.width]; }")
    assert style == [rgb(_colour(0, 64)), "rgb(221, 0, 0)", "solid", "inline-block", "18px"]
    # 32 elements a row: A_shared[1] beside A_shared[0], A_shared[32] below it
    boxes = {k: output.locator(f'span[title^="A_shared[{k}];"]').bounding_box() for k in (0, 1, 32)}
    assert boxes[1]["y"] == boxes[0]["y"] and boxes[1]["x"] > boxes[0]["x"]
    assert boxes[32]["y"] > boxes[0]["y"] and boxes[32]["x"] == boxes[0]["x"]
    text = output.inner_text()
    assert "races: 260" in text and "race on A_shared[1] (shared)" in text
    # its own box: never wider than the output area, scrolling inside
    box = output.locator("div").first
    overflow, width = box.evaluate("el => [getComputedStyle(el).overflow, el.clientWidth]")
    assert overflow == "auto" and width <= output.bounding_box()["width"]
    assert output.locator("script, style").count() == 0
    page.screenshot(path=str(artifacts / "gpu_view_untrusted.png"))
