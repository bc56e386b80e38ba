"""The book (``make docs``) in Chromium: its home page, a notebook page with a rendered
schedule and graph, an API page, and the site's own search for ``compute_at``.

The book is built once for this module, as ``make docs`` builds it (Sphinx with every warning
an error), into a temporary folder, and served on a free localhost port.  Screenshots:
test-artifacts/browser/book_*.png."""

from __future__ import annotations

import functools
import http.server
import subprocess
import sys
import threading

import pytest

from .conftest import REPO, _free_port

pytestmark = pytest.mark.browser


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # no line per request in the test output
        pass


@pytest.fixture(scope="module")
def book(tmp_path_factory, sync_playwright):
    """The built book, served: yields its base URL."""
    out = tmp_path_factory.mktemp("book") / "html"
    build = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-c", "docs", "-W", "--keep-going", "-q",
         "-j", "2", ".", str(out)], cwd=REPO, capture_output=True, text=True)
    assert build.returncode == 0, f"the book does not build:\n{build.stderr[-4000:]}"
    handler = functools.partial(_QuietHandler, directory=str(out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", _free_port()), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    thread.join(10)


def test_home_page_leads_to_the_guide_the_notebooks_and_the_api(page, book, artifacts):
    page.goto(book + "/")  # index.html sends the reader on to the guide
    page.wait_for_url("**/docs/index.html")
    assert page.locator("h1").first.inner_text().startswith("mlckit user guide")
    nav = page.locator(".sidebar-tree").inner_text()
    for title in ("Writing programs in TVMScript", "Scheduling TensorIR", "API reference",
                  "Exploring: the notebook tools"):
        assert title in nav, title
    page.screenshot(path=str(artifacts / "book_home.png"))
    page.get_by_role("link", name="Scheduling TensorIR").first.click()
    page.wait_for_url("**/docs/scheduling.html")
    assert "sch.reverse_compute_at(block_C, j0)" in page.locator("article").inner_text()


def test_notebook_page_shows_a_schedule_and_a_graph_from_stored_outputs(page, book, artifacts):
    page.goto(book + "/notebooks/05_exploring.html")
    article = page.locator("article")
    # a rendered schedule: the explorer's TVMScript after split, from the stored outputs
    outputs = article.locator(".cell_output")
    assert outputs.count() > 5
    text = outputs.all_inner_texts()
    assert any("T.prim_func" in t and "T.grid" in t for t in text), "no TVMScript output"
    # a graph drawn: an SVG picture among the outputs, with real width (graph()'s text/html,
    # which the book renders first, is the SVG as an <img> data URI: it shows untrusted too)
    graph = article.locator(".cell_output img.mlckit-graph[src^='data:image/svg+xml;base64,']").first
    graph.scroll_into_view_if_needed()
    box = graph.bounding_box()
    assert box is not None and box["width"] > 100 and box["height"] > 100
    assert not any(" at 0x" in t for t in text if "graphviz" in t)
    graph.screenshot(path=str(artifacts / "book_notebook_graph.png"))
    page.screenshot(path=str(artifacts / "book_notebook.png"))


def test_api_page_describes_the_schedule_primitives(page, book, artifacts):
    page.goto(book + "/docs/api/tvm.tir.html")
    compute_at = page.locator("[id='mlckit.tir.Schedule.compute_at']")
    compute_at.scroll_into_view_if_needed()
    assert "compute_at" in compute_at.inner_text()
    description = page.locator("[id='mlckit.tir.Schedule.compute_at'] + dd").inner_text()
    assert "Move a producer block under a loop of its consumers" in description
    page.screenshot(path=str(artifacts / "book_api.png"))


def test_the_site_search_finds_compute_at(page, book, artifacts):
    page.goto(book + "/docs/index.html")
    page.locator("input[name='q']").first.fill("compute_at")
    page.locator("input[name='q']").first.press("Enter")
    page.wait_for_url("**/search.html?q=compute_at*")
    # the results are added one by one; the summary line appears when all are there
    page.locator("#search-results .search-summary", has_text="Search finished").wait_for()
    titles = page.locator("#search-results ul.search li").all_inner_texts()
    assert len(titles) >= 3
    assert any("Scheduling TensorIR" in t for t in titles), titles
    assert any("compute_at" in t for t in titles), titles
    page.screenshot(path=str(artifacts / "book_search.png"))
