"""Every notebook as a fresh clone shows it: opened *untrusted* in JupyterLab (nobody ran
``jupyter trust``), nothing run.  JupyterLab then sanitizes HTML outputs (no ``<style>``,
no ``<script>``, no ``id``/``data-*``) and shows neither SVG outputs nor widgets; GitHub,
nbviewer and static sites are no kinder.  The views must still show as intended: code
left-aligned with its indentation, graphs drawn, the widgets' stored pictures, no
``<… at 0x…>``; and no output wider than its box unless it scrolls on its own.
Screenshots: test-artifacts/browser/untrusted_*.png."""

from __future__ import annotations

import re
import shutil

import pytest

from .conftest import REPO, Lab

pytestmark = pytest.mark.browser

# the course notebooks and two exercise notebooks: their feedback is stored HTML too, all
# seven made by one template (tools/make_exercise_notebooks.py), and each opening costs 5 s
NOTEBOOKS = sorted(str(p.relative_to(REPO / "notebooks"))
                   for p in [*(REPO / "notebooks").glob("*.ipynb"),
                             *(REPO / "notebooks" / "exercises").glob("ex[15]_*.ipynb")])

# the views each notebook stores, by the class of their outermost element
EXPECTED = {
    "05_exploring.ipynb": {".mlckit-side-by-side": 1, "img.mlckit-graph": 3,
                           ".mlckit-explorer-picture": 1, ".mlckit-pass-stepper-picture": 2},
    "06_high_level_ops.ipynb": {"img.mlckit-graph": 2},
    "10_decoder.ipynb": {".mlckit-pass-stepper-picture": 1},
    "11_lowering.ipynb": {".mlckit-pass-stepper-picture": 1},
}

# Every element in an output whose content is wider than its box and which does not scroll
# sideways itself: [(what, content width, box width)].
OVERFLOWING = r"""
(root) => {
    const bad = [];
    for (const out of root.querySelectorAll('.jp-OutputArea-output')) {
        for (const el of [out, ...out.querySelectorAll('*')]) {
            if (!(el.scrollWidth > el.clientWidth + 1) || el.clientWidth === 0) continue;
            const style = getComputedStyle(el);
            if (style.display === 'inline' || ['auto', 'scroll'].includes(style.overflowX)) continue;
            // the widgets' own chrome: tab titles end in an ellipsis, sliders clip their track
            if (/(^|\s)(lm-TabBar-tab|noUi-)/.test(String(el.className))) continue;
            const name = el.tagName.toLowerCase() + (el.className && el.className.baseVal === undefined
                ? '.' + String(el.className).trim().split(/\s+/).join('.') : '');
            bad.push([name, el.scrollWidth, el.clientWidth]);
        }
    }
    return bad;
}
"""

# A table (a layout of columns, not a line of code) wider than its output hides a column
# even when something scrolls around it: [(class, table width, output width)].
WIDE_TABLES = """
(root) => [...root.querySelectorAll('.jp-OutputArea-output table')].map(t => [
        String(t.className), t.offsetWidth,
        t.closest('.jp-OutputArea-output').clientWidth]).filter(([, w, box]) => w > box + 1)
"""

# Each column of a side-by-side view lies inside its output (none pushed off-screen).
COLUMNS_OUTSIDE = """
(root) => {
    const bad = [];
    for (const view of root.querySelectorAll('.mlckit-columns')) {
        const out = view.closest('.jp-OutputArea-output').getBoundingClientRect();
        for (const col of view.querySelectorAll(':scope > .mlckit-column')) {
            const r = col.getBoundingClientRect();
            if (r.left < out.left - 1 || r.right > out.right + 1 || r.width < 100)
                bad.push([Math.round(r.left), Math.round(r.right), Math.round(out.right)]);
        }
    }
    return bad;
}
"""


@pytest.fixture(scope="module")
def untrusted_lab(tmp_path_factory, sync_playwright):
    """JupyterLab serving copies of every notebook, none of them trusted."""
    root = tmp_path_factory.mktemp("untrusted-root")
    for name in NOTEBOOKS:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / "notebooks" / name, root / name)
    server = Lab(root, tmp_path_factory.mktemp("untrusted-home"))
    server.start()
    yield server
    server.stop()


def open_saved(page, lab, name: str):
    page.goto(lab.url(name))
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell")
    dialog = page.locator(".jp-Dialog")
    page.wait_for_timeout(1500)  # the outputs render; a kernel dialog may come
    if dialog.count() and dialog.first.is_visible():
        dialog.first.locator("button.jp-mod-reject, button.jp-mod-accept").first.click()
    page.wait_for_selector(".jp-OutputArea-output")
    return page.locator(".jp-NotebookPanel .jp-Notebook").first


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_the_saved_outputs_show_as_intended_untrusted(page, untrusted_lab, artifacts, name):
    notebook = open_saved(page, untrusted_lab, name)  # once per notebook: 7 s in Chromium
    # no output wider than its box unless it scrolls; no table or column pushed out of it
    assert notebook.evaluate(OVERFLOWING) == []
    assert notebook.evaluate(WIDE_TABLES) == []
    assert notebook.evaluate(COLUMNS_OUTSIDE) == []
    outputs = notebook.locator(".jp-OutputArea-output")
    texts = outputs.all_inner_texts()
    assert not [t for t in texts if re.search(r"<[\w.]+( object)? at 0x[0-9a-fA-F]+>", t)]
    assert notebook.locator(".jupyter-widgets").count() == 0  # untrusted: no live widget
    assert not [t for t in texts if "function(" in t or "{background" in t]  # no script/CSS text
    for selector, count in EXPECTED.get(name, {}).items():
        assert notebook.locator(selector).count() >= count, selector
    # code keeps its indentation, left-aligned, one line per line
    for view in notebook.locator(".mlckit-columns").all():
        lines = view.locator(".mlckit-column > div:nth-child(2) > div")
        style = lines.first.evaluate("el => [getComputedStyle(el).textAlign, "
                                     "getComputedStyle(el).whiteSpace]")
        assert style == ["left", "pre"]
        assert any(re.match(r"^\s*\d*\s{4,}\S", t) for t in lines.all_inner_texts())
    for pre in notebook.locator(".mlckit-code pre").all()[:20]:
        assert pre.evaluate("el => getComputedStyle(el).textAlign") in ("left", "start")
    # graphs drawn: each image decoded to a picture of some size
    for img in notebook.locator("img.mlckit-graph").all():
        img.scroll_into_view_if_needed()
        size = img.evaluate("el => el.decode().then(() => [el.naturalWidth, el.naturalHeight])")
        assert size[0] > 20 and size[1] > 20
    stem = name.removesuffix(".ipynb").replace("/", "_")
    for selector in (".mlckit-side-by-side", "img.mlckit-graph", ".mlckit-explorer-picture",
                     ".mlckit-pass-stepper-picture"):
        tag = selector.strip(".").replace("img.", "").replace("mlckit-", "")
        for k, view in enumerate(notebook.locator(selector).all()[:3]):
            view.scroll_into_view_if_needed()
            view.screenshot(path=str(artifacts / f"untrusted_{stem}_{tag}_{k}.png"))
