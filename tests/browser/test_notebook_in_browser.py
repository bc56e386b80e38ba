"""Notebook 05 in a real JupyterLab, in Chromium: run all of it, click a primitive in the
schedule explorer and see the TVMScript and the trace change, step the pass stepper, and
open the saved notebook, whose widgets show before anything runs.  Screenshots: test-artifacts/browser/."""

from __future__ import annotations

import re
import time

import pytest

from .conftest import NOTEBOOK, SAVED

pytestmark = pytest.mark.browser

RUN_TIMEOUT = 120_000  # ms: the notebook builds kernels with Numba


def open_notebook(page, lab, name: str) -> None:
    """Open ``name`` and wait for its kernel to be idle (answering JupyterLab's kernel
    dialog, should it ask, with its proposal)."""
    page.goto(lab.url(name))
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell")
    dialog = page.locator(".jp-Dialog", has_text="Select Kernel")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if dialog.is_visible():
            dialog.locator("button.jp-mod-accept").click()
        sessions = [s for s in lab.get("sessions") if s["path"] == name and s["kernel"]]
        if sessions and sessions[0]["kernel"]["execution_state"] == "idle":
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']")
            return
        page.wait_for_timeout(300)
    raise AssertionError(f"no idle kernel for {name}: sessions {lab.get('sessions')}")


def run_all(page) -> None:
    """Run > Run All Cells, then wait until every code cell has an execution count."""
    page.locator("li.lm-MenuBar-item", has_text="Run").click()
    page.locator("li.lm-Menu-item[data-command='runmenu:run-all']").click()
    page.wait_for_function(
        """() => {
            const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')];
            return prompts.length > 0 && prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
        }""", timeout=RUN_TIMEOUT)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']")


@pytest.fixture(scope="module")
def notebook(browser, lab, artifacts):
    """Notebook 05 opened with a kernel and run from top to bottom (one page for the tests
    of this module, in order)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(60_000)
    page = context.new_page()
    open_notebook(page, lab, NOTEBOOK)
    run_all(page)
    page.screenshot(path=str(artifacts / "01_run_all.png"))
    yield page
    context.close()


def explorer(page):
    return page.locator(".mlckit-explorer").first


def test_run_all_runs_every_cell_and_only_the_broken_tvmscript_fails(notebook):
    errors = notebook.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    assert errors.count() == 1
    text = errors.first.inner_text()
    assert "error: undefined variable 'k'" in text and "Traceback" not in text
    diff = notebook.locator(".jp-CodeCell", has_text="print(stepper.diff(step.index))")
    assert "CallTIRRewrite" in diff.locator(".jp-OutputArea").inner_text()
    last = notebook.locator(".jp-CodeCell").last
    assert "fused_matmul_add_relu" in last.locator(".jp-OutputArea").inner_text()


def test_the_explorer_shows_the_steps_the_notebook_applied(notebook):
    ex = explorer(notebook)
    ex.locator(".mlckit-explorer-script").wait_for()
    assert "step 4 of 4: decompose_reduction" in ex.inner_text()
    assert "Y_init" in ex.locator(".mlckit-explorer-script").inner_text()
    assert ex.locator(".mlckit-explorer-timing svg").count() == 1


def test_clicking_a_primitive_changes_the_tvmscript_and_the_trace(notebook, artifacts):
    ex = explorer(notebook)
    script, trace = ex.locator(".mlckit-explorer-script"), ex.locator(".mlckit-explorer-trace")
    splits_before = trace.inner_text().count("sch.split(")
    assert "ax0_0" not in script.inner_text()
    ex.locator("select").nth(0).select_option(label="C")
    ex.locator("select").nth(1).select_option(label="ax0")
    split = ex.locator("button.mlckit-primitive-split")
    split.wait_for(state="visible")
    split.click()
    # the widgets update one by one, the trace after the script: wait for both
    notebook.wait_for_function(
        "([s, t, n]) => s.innerText.includes('ax0_0')"
        " && t.innerText.split('sch.split(').length > n + 1",
        arg=[script.element_handle(), trace.element_handle(), splits_before], timeout=RUN_TIMEOUT)
    assert "for ax0_0, ax0_1 in T.grid(1, 4):" in script.inner_text()
    assert trace.inner_text().count("sch.split(") == splits_before + 1
    assert re.search(r"step 5 of 5: split\(block=\"C\", loop=\"ax0\", factors=\[None, 4\]\) "
                     r"→ ax0_0, ax0_1", ex.inner_text())
    ex.screenshot(path=str(artifacts / "02_explorer_after_split.png"))


def test_a_refused_step_shows_its_error_inline_and_changes_nothing(notebook, artifacts):
    ex = explorer(notebook)
    row = ex.locator(".widget-hbox:has(> button.mlckit-primitive-split)")
    ex.locator("select").nth(1).select_option(label="ax0_1")
    factors = row.locator("input[type='text']")
    factors.fill("1, 2")
    factors.press("Enter")
    ex.locator("button.mlckit-primitive-split").click()
    error = ex.locator(".mlckit-explorer-error")
    error.get_by_text("smaller than the extent 4").wait_for(timeout=RUN_TIMEOUT)
    assert "ScheduleError: split: the product of the factors (1 * 2 = 2)" in error.inner_text()
    assert "step 5 of 5" in ex.inner_text()
    ex.screenshot(path=str(artifacts / "03_explorer_refused.png"))


def test_undo_goes_back_a_step(notebook):
    ex = explorer(notebook)
    script = ex.locator(".mlckit-explorer-script")
    ex.locator("button", has_text="undo").click()
    notebook.wait_for_function(
        "el => !el.innerText.includes('ax0_0')", arg=script.element_handle(), timeout=RUN_TIMEOUT)
    assert "step 4 of 5" in ex.inner_text()
    assert ex.locator(".mlckit-explorer-error").inner_text() == ""


def stepper_of(page, k: int = 0):
    """The pass list and the whole of the ``k``-th PassStepper widget of the page."""
    stepper = page.locator(".mlckit-pass-stepper").nth(k)
    return stepper.locator(".widget-select select"), stepper


def test_the_pass_stepper_steps_through_the_passes(notebook, artifacts):
    passes, stepper = stepper_of(notebook)
    names = [re.sub(r"\s+", " ", label).split(" ")[2] for label in
             passes.locator("option").all_inner_texts()]  # "● 1 CallTIRRewrite (0.24 ms)"
    assert f"0: {names[0]}" in stepper.inner_text()
    k = names.index("CallTIRRewrite")
    passes.select_option(index=k)  # a click on CallTIRRewrite in the list
    stepper.get_by_text(f"{k}: CallTIRRewrite").wait_for()
    stepper.locator("pre.mlckit-diff").get_by_text("R.builtin.alloc_tensor").first.wait_for()
    stepper.locator(".widget-slider .noUi-handle").focus()
    notebook.keyboard.press("ArrowRight")  # the slider steps on to the next pass
    stepper.get_by_text(f"{k + 1}: {names[k + 1]}").wait_for()
    stepper.get_by_text("side by side").click()
    stepper.locator(".mlckit-diff.mlckit-columns").wait_for()
    columns = stepper.locator(".mlckit-diff .mlckit-column")
    box = stepper.bounding_box()
    for k in range(2):  # before and after both in sight, sharing the width
        col = columns.nth(k).bounding_box()
        assert col["x"] >= box["x"] and col["x"] + col["width"] <= box["x"] + box["width"] + 1
    stepper.screenshot(path=str(artifacts / "04_pass_stepper.png"))


def test_the_zero_pipeline_stepper_shows_main_s_graph_before_and_after_each_pass(notebook,
                                                                                 artifacts):
    passes, stepper = stepper_of(notebook, 1)
    stepper.scroll_into_view_if_needed()
    assert "FuseOps" in stepper.locator(".widget-html", has_text="FuseOps").first.inner_text()
    graphs = stepper.locator(".mlckit-graphs img.mlckit-graph")
    graphs.first.wait_for()
    assert graphs.count() == 2
    for k in range(2):
        assert graphs.nth(k).evaluate("el => el.decode().then(() => el.naturalWidth)") > 20
    stepper.screenshot(path=str(artifacts / "06_zero_pipeline_graphs.png"))
    stepper.locator("select").last.select_option(label="fused_matmul_add_relu")
    stepper.get_by_text("no function fused_matmul_add_relu here").wait_for()  # before FuseTIR
    names = passes.locator("option").all_inner_texts()
    passes.select_option(index=next(i for i, t in enumerate(names) if "FuseTIR" in t))
    stepper.locator(".mlckit-graphs img.mlckit-graph").nth(1).wait_for()
    stepper.screenshot(path=str(artifacts / "07_zero_pipeline_fused_function.png"))


def test_no_output_of_the_run_notebook_is_wider_than_its_box_unless_it_scrolls(notebook):
    from .test_untrusted_notebooks import COLUMNS_OUTSIDE, OVERFLOWING, WIDE_TABLES

    page = notebook.locator(".jp-Notebook").first
    assert page.evaluate(OVERFLOWING) == []
    assert page.evaluate(WIDE_TABLES) == []
    assert page.evaluate(COLUMNS_OUTSIDE) == []


def test_the_saved_notebook_shows_its_widgets_before_any_cell_runs(page, lab, artifacts):
    """The widgets of a saved notebook come from its stored widget state (JupyterLab reads
    it once the notebook's kernel is up; nbconvert's HTML and other viewers embed it)."""
    open_notebook(page, lab, SAVED)
    ex = explorer(page)
    ex.locator(".mlckit-explorer-script").wait_for()
    assert "step 4 of 4: decompose_reduction" in ex.inner_text()
    assert "Y_init" in ex.locator(".mlckit-explorer-script").inner_text()
    assert "b7 = sch.decompose_reduction(block=b0, loop=l3)" in \
        ex.locator(".mlckit-explorer-trace").inner_text()
    passes, stepper = stepper_of(page)
    count = int(re.search(r"PassStepper: (\d+) pass\(es\)", stepper.inner_text()).group(1))
    assert passes.locator("option").count() == count
    assert "CallTIRRewrite" in passes.inner_text()
    ex.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "05_saved_notebook.png"))
