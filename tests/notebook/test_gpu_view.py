"""gpu_view draws what every thread of a block touched: element grids coloured by thread,
per-thread counts, uncoalesced accesses, bank conflicts and races, as HTML that needs no
script or style sheet (it renders in an untrusted notebook), and as text."""

from __future__ import annotations

import re
import subprocess
import sys
from html.parser import HTMLParser

import numpy as np
import pytest

from mlckit.error import TVMError
from mlckit.notebook.gpu_view import GpuView, gpu_view, record_accesses

from ..backend.numba_cuda import access_kernels as K

RNG = np.random.default_rng(0)


def window_args():
    return RNG.uniform(-1, 1, 259).astype("float32"), np.zeros(256, "float32")


class Cells(HTMLParser):
    """The HTML's tags, and each titled cell's title, style and text."""

    def __init__(self):
        super().__init__()
        self.tags, self.cells, self.open = [], {}, []
        self._title = None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.open.append(tag)
        attrs = dict(attrs)
        self._title = attrs.get("title"), attrs.get("style", "")

    def handle_endtag(self, tag):
        assert self.open.pop() == tag

    def handle_data(self, data):
        if self._title and self._title[0]:
            self.cells.setdefault(self._title[0].split(";")[0], (self._title, data))
        self._title = None


def parse(html: str) -> Cells:
    cells = Cells()
    cells.feed(html)
    assert cells.open == []  # every tag closed
    return cells


def test_view_returns_the_kernels_result_and_the_log():
    a, b = window_args()
    view = gpu_view(K.window_sum_shared(64), a, b)
    np.testing.assert_allclose(b, a[:256] + a[1:257] + a[2:258], rtol=1e-6)
    assert isinstance(view, GpuView) and view.log.race_count == 0
    assert record_accesses is not None  # the recorder is importable from the view's module


def test_html_is_inline_styled_only_and_scrolls_in_its_own_box():
    a, b = window_args()
    html = gpu_view(K.window_sum_no_barrier, a, b, sync=False)._repr_html_()
    assert "<script" not in html and "<style" not in html and "class=" not in html
    tags = set(parse(html).tags)
    assert tags <= {"div", "span", "b", "ul", "li"}
    outer = re.match(r'<div style="([^"]*)"', html).group(1)
    assert "max-width:100%" in outer and "overflow:auto" in outer


def test_element_cells_are_coloured_by_the_writing_thread_and_races_outlined():
    a, b = window_args()
    view = gpu_view(K.window_sum_no_barrier, a, b, sync=False)
    cells = parse(view._repr_html_()).cells
    # A_shared[64] of block 0: written by thread 0 (second fetch round), read by 62 and 63
    (title, style), text = cells["A_shared[64]"]
    assert title == "A_shared[64]; written by thread 0; read by thread 62, 63; RACE"
    assert text == "3" and "outline:2px solid #d00" in style
    same_colour = cells["A_shared[0]"][0][1].split("background-color:")[1]
    assert style.split("background-color:")[1] == same_colour  # thread 0 wrote both
    assert "outline" not in cells["A_shared[0]"][0][1]  # only thread 0 touches element 0
    grid = view.element_grid("A_shared")
    assert grid["writer"][64] == 0 and grid["reader"][64] == 62
    assert grid["racy"] == set(range(1, 66))


def test_per_thread_counts_and_lists():
    a, b = window_args()
    view = gpu_view(K.window_sum_no_barrier, a, b, sync=False)
    html = view._repr_html_()
    cells = parse(html).cells
    # threads 0 and 1 fetch two elements of A, the others one
    assert cells["thread 0: 2 reads"][1] == "2" and cells["thread 2: 1 reads"][1] == "1"
    assert "every thread: B (global) writes: 1; A_shared (shared) reads: 3" in html
    assert "races: 260" in html and "&#8230; and 210 more" in html
    assert "uncoalesced global accesses: none" in html


def test_uncoalesced_copy_is_listed_and_coalesced_is_not():
    A = RNG.uniform(-1, 1, (64, 64)).astype("float32")
    out = np.zeros_like(A)
    cols = gpu_view(K.copy_columns, A, out)
    np.testing.assert_array_equal(out, A)
    rows = gpu_view(K.copy_rows, A, out)
    assert "uncoalesced global accesses: none" in rows._repr_html_()
    html = cols._repr_html_()
    assert "uncoalesced global accesses: 2" in html
    assert ("A: `A[tx, by]`: 128 of 128 warp accesses uncoalesced, 4096 32-byte sectors where "
            "624 would do; e.g. block (0,) warp 0: 32 sectors for 4") in html


def test_bank_conflict_is_listed_for_the_course_matmul():
    A = RNG.uniform(-1, 1, (64, 64)).astype("float32")
    C = np.zeros((64, 64), "float32")
    # 4 blocks x 2 warps x 8 k-tiles x 128 updates, all 4-way (see tests/backend)
    text = str(gpu_view(K.matmul_shared(), A, A, C, block=(1, 1)))
    np.testing.assert_allclose(C, A @ A, rtol=1e-5, atol=1e-5)
    assert ("A_shared: `A_shared[i_1_j_1_fused // 8 * 4 + i_2, k_1]` (block 'C_update'): "
            "8192 of 8192 warp accesses conflict, up to 4-way; e.g. block (0, 0) warp 0: bank 0 "
            "serves 4 words (0, 32, 64, 96) to threads 0, 8, 16, 24") in text


def test_16x16_view_shows_the_chosen_block_and_2d_thread_names():
    A = RNG.uniform(-1, 1, (64, 64)).astype("float32")
    C = np.zeros((64, 64), "float32")
    view = gpu_view(K.matmul_16x16(), A, A, C, block=(1, 2))
    html = view._repr_html_()
    assert "grid (4, 4), block (16, 16) &#8212; showing thread block (1, 2)" in html
    cells = parse(html).cells
    # block (bx=1, by=2) writes C[32 + ty, 16 + tx]: C[35, 20] is thread (tx=4, ty=3)'s
    (title, _), text = cells["C[35, 20]"]
    assert title.startswith("C[35, 20]; written by thread (4, 3)")
    assert text == "129"  # 65 writes and 64 reads


def test_text_form_is_the_summary():
    a, b = window_args()
    text = str(gpu_view(K.window_sum_shared(64), a, b))
    assert text.splitlines() == [
        "kernel main_kernel: grid (4,), block (64,) (4 x 64 threads)",
        "  A (global, float32[259]): reads per thread 1..2",
        "  B (global, float32[256]): writes per thread 1",
        "  A_shared (shared, float32[66]): reads per thread 3, writes per thread 1..2",
        "uncoalesced global accesses: none",
        "shared-memory bank conflicts: none",
        "races: none",
    ]


def test_a_block_outside_the_grid_is_refused():
    a, b = window_args()
    with pytest.raises(TVMError, match=r"block \(4,\) is outside the grid \(4,\)"):
        gpu_view(K.window_sum_shared(64), a, b, block=(4,))


def test_recording_imports_no_notebook_library():
    code = ("import sys; import mlckit.backend.numba_cuda.record; "
            "bad = [m for m in ('IPython', 'ipywidgets', 'graphviz') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)
