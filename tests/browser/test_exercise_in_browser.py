"""An exercise notebook in a real JupyterLab, in Chromium: run it unanswered ("not answered
yet"), answer the first exercise wrongly and see the feedback name the mistake, then answer
it rightly and see it turn correct.  Screenshots: test-artifacts/browser/."""

from __future__ import annotations

import shutil

import pytest

from .conftest import REPO, Lab
from .test_notebook_in_browser import open_notebook, run_all

pytestmark = pytest.mark.browser

NOTEBOOK = "ex1_tensorir.ipynb"
RUN_TIMEOUT = 120_000  # ms

HEADER = '''# your answer
def add(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"),
        C: T.Buffer((4, 4), "float32")):
    T.func_attr({"global_symbol": "add", "tir.noalias": True})
    for i, j in T.grid(4, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
'''
WRONG = HEADER + "            C[vi, vj] = A[vi, vj] - B[vi, vj]\n"
RIGHT = HEADER + "            C[vi, vj] = A[vi, vj] + B[vi, vj]\n"


@pytest.fixture(scope="module")
def exercise_lab(tmp_path_factory, sync_playwright):
    """JupyterLab serving a temporary copy of the first exercise notebook."""
    root = tmp_path_factory.mktemp("exercise-root")
    shutil.copy(REPO / "notebooks" / "exercises" / NOTEBOOK, root / NOTEBOOK)
    server = Lab(root, tmp_path_factory.mktemp("exercise-home"))
    server.start()
    yield server
    server.stop()


def code_cell(page, index: int):
    return page.locator(".jp-CodeCell").nth(index)


def answer(page, text: str) -> str:
    """Replace the first answer cell's text, run it and its check; the check's output."""
    cell, check = code_cell(page, 2), code_cell(page, 3)
    cell.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(text)  # one insertion: no auto-indent or auto-closed brackets
    before = check.locator(".jp-InputPrompt").inner_text()
    page.keyboard.press("Shift+Enter")  # runs the answer, moves to the check
    page.keyboard.press("Shift+Enter")
    page.wait_for_function(
        "([el, before]) => el.innerText !== before && /\\[\\d+\\]/.test(el.innerText)",
        arg=[check.locator(".jp-InputPrompt").element_handle(), before], timeout=RUN_TIMEOUT)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']")
    return check.locator(".jp-OutputArea").inner_text()


def test_an_exercise_answered_wrongly_then_rightly(browser, exercise_lab, artifacts):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(60_000)
    page = context.new_page()
    try:
        open_notebook(page, exercise_lab, NOTEBOOK)
        run_all(page)
        first = code_cell(page, 3).locator(".jp-OutputArea").inner_text()
        assert "… tensorir.add: not answered yet" in first
        assert page.locator(".mlckit-feedback-not-answered").count() == 6  # all of them

        wrong = answer(page, WRONG)
        assert "✗ tensorir.add: not right yet" in wrong
        assert "output C differs at index" in wrong  # `names` show as code
        assert ("block C computes C[vi, vj] = A[vi, vj] - B[vi, vj], expected "
                "C[vi, vj] = A[vi, vj] + B[vi, vj]") in wrong
        assert code_cell(page, 3).locator("code", has_text="C[vi, vj] = A[vi, vj] - B[vi, vj]").count() == 1
        code_cell(page, 3).screenshot(path=str(artifacts / "10_exercise_wrong.png"))

        right = answer(page, RIGHT)
        assert "✓ tensorir.add: correct" in right and "not right yet" not in right
        assert code_cell(page, 3).locator(".mlckit-feedback-correct").count() == 1
        code_cell(page, 3).screenshot(path=str(artifacts / "11_exercise_right.png"))
        page.screenshot(path=str(artifacts / "12_exercise_notebook.png"))
    finally:
        context.close()
