"""side_by_side(prim_func): TVMScript and its lnumpy twin, aligned and linked line by line."""

import re

import pytest

from mlckit import tir
from mlckit.error import TVMTypeError
from mlckit.lnumpy import to_source
from mlckit.notebook import side_by_side
from mlckit.script import from_source

from ..kernels import mm_relu
from .sanitizer import dropped


def rows_as_text(view):
    left, right = view.tvmscript.splitlines(), view.lnumpy.splitlines()
    return [(left[r.left - 1].strip() if r.left else None,
             right[r.right - 1].strip() if r.right else None) for r in view.rows]


def test_the_columns_are_the_printer_s_tvmscript_and_the_lnumpy_source():
    view = side_by_side(mm_relu)
    assert view.tvmscript == mm_relu.script()
    assert view.lnumpy == to_source(mm_relu)


def test_lines_of_the_same_statement_face_each_other():
    rows = rows_as_text(side_by_side(mm_relu))
    assert rows[3:] == [
        ('def mm_relu(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), '
         'C: T.Buffer((128, 128), "float32")):', "def mm_relu(A, B, C):"),
        ('T.func_attr({"tir.noalias": True})', None),
        ('# with T.block("root"):', None),
        ("Y = T.alloc_buffer((128, 128))", 'Y = np.empty((128, 128), dtype="float32")'),
        ("for i, j, k in T.grid(128, 128, 128):", "for i in range(128):"),
        (None, "for j in range(128):"),
        (None, "for k in range(128):"),
        ('with T.block("Y"):', '# block "Y"'),
        ('vi, vj, vk = T.axis.remap("SSR", [i, j, k])', "vi = i"),
        ("T.reads(A[vi, vk], B[vk, vj])", "vj = j"),
        ("T.writes(Y[vi, vj])", "vk = k"),
        ("with T.init():", "if vk == 0:"),
        ("Y[vi, vj] = T.float32(0.0)", "Y[vi, vj] = 0.0"),
        ("Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]",
         "Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]"),
        ("for i, j in T.grid(128, 128):", "for i in range(128):"),
        (None, "for j in range(128):"),
        ('with T.block("C"):', '# block "C"'),
        ('vi, vj = T.axis.remap("SS", [i, j])', "vi = i"),
        ("T.reads(Y[vi, vj])", "vj = j"),
        ("T.writes(C[vi, vj])", None),
        ("C[vi, vj] = T.max(Y[vi, vj], T.float32(0.0))", "C[vi, vj] = max(Y[vi, vj], 0.0)"),
    ]
    assert rows[:3] == [("# from tvm.script import tir as T", None), ("", None),
                        ("@T.prim_func", None)]


def test_every_line_of_both_texts_appears_once_in_order():
    view = side_by_side(mm_relu)
    assert [r.left for r in view.rows if r.left] == list(
        range(1, len(view.tvmscript.splitlines()) + 1))
    assert [r.right for r in view.rows if r.right] == list(
        range(1, len(view.lnumpy.splitlines()) + 1))


def test_a_t_grid_line_is_linked_to_each_of_its_loops():
    view = side_by_side(mm_relu)
    grid = view.tvmscript.splitlines().index("    for i, j, k in T.grid(128, 128, 128):") + 1
    right = view.lnumpy.splitlines()
    assert [right[n - 1].strip() for n in view.linked_lines(grid)] == [
        "for i in range(128):", "for j in range(128):", "for k in range(128):"]
    j_line = right.index("        for j in range(128):") + 1
    assert view.linked_tvmscript_lines(j_line) == [grid]


def test_a_block_s_lines_are_linked_to_the_lnumpy_block_lines():
    view = side_by_side(mm_relu)
    left = view.tvmscript.splitlines()
    reads = next(n for n, line in enumerate(left, 1) if "T.reads(A[vi, vk]" in line)
    right = view.lnumpy.splitlines()
    assert [right[n - 1].strip() for n in view.linked_lines(reads)] == [
        '# block "Y"', "vi = i", "vj = j", "vk = k"]


def test_a_scheduled_function_is_linked_through_its_new_loops():
    sch = tir.Schedule(mm_relu)
    i, _, _ = sch.get_loops(sch.get_block("Y"))
    i0, i1 = sch.split(i, factors=[None, 4])
    sch.parallel(i0)
    view = side_by_side(sch.mod)
    left = view.tvmscript.splitlines()
    right = view.lnumpy.splitlines()
    par = left.index("    for i_0 in T.parallel(32):") + 1
    assert [right[n - 1].strip() for n in view.linked_lines(par)] == [
        "for i_0 in range(32):  # T.parallel"]
    vi = next(n for n, line in enumerate(right, 1) if line.strip() == "vi = i_0 * 4 + i_1")
    assert 'with T.block("Y"):' in [left[n - 1].strip() for n in view.linked_tvmscript_lines(vi)]


def test_html_is_two_columns_of_highlighted_code_that_render_untrusted():
    out = side_by_side(mm_relu).html()
    assert dropped(out) == []  # inline styles JupyterLab's sanitizer keeps; no <style>
    assert "<style" not in out and "<table" not in out and "src=" not in out
    assert out.count('class="mlckit-column"') == 2
    assert ">TVMScript</div>" in out and ">lnumpy</div>" in out
    # pygments' inline styles: `def` is a keyword, `range` a builtin
    assert re.search(r'<span style="[^"]*">def</span>', out)
    assert re.search(r'<span style="[^"]*">range</span>', out)


def test_the_columns_share_the_width_and_each_scrolls_on_its_own():
    out = side_by_side(mm_relu).html()
    assert out.startswith('<div class="mlckit-columns mlckit-side-by-side" '
                          'style="display:flex;')
    columns = re.findall(r'<div class="mlckit-column" style="([^"]*)"', out)
    assert len(columns) == 2
    for style in columns:
        assert "flex:1 1 0" in style and "min-width:0" in style and "overflow-x:auto" in style
    # every line one fixed height, never wrapped: row n of both columns stays level
    lines = re.findall(r'<div(?: data-s="[0-9 ]*")? style="(white-space:pre;height:17px;[^"]*)"',
                       out)
    view = side_by_side(mm_relu)
    assert len(lines) == 2 * len(view.rows)


def test_html_links_lines_by_statement_for_hover_with_a_tiny_script():
    view = side_by_side(mm_relu)
    out = view.html()
    grid = view.tvmscript.splitlines().index("    for i, j, k in T.grid(128, 128, 128):") + 1
    ids = view.left_ids[grid]
    assert len(ids) == 3
    cell = re.search(rf'<div data-s="([0-9 ]+)" style="[^"]*"><span style="[^"]*">{grid}</span>',
                     out)
    assert cell.group(1) == " ".join(map(str, ids))
    for k in ids:
        assert out.count(f'data-s="{k}"') == 1  # each loop has its own lnumpy line
    script = re.search(r"<script>(.*)</script>", out, re.S).group(1)
    assert "mouseover" in script and "outline" in script and len(script) < 800


def test_the_same_function_always_renders_the_same_html():
    assert side_by_side(mm_relu).html() == side_by_side(mm_relu).html()
    assert side_by_side(mm_relu)._repr_html_() == side_by_side(mm_relu).html()


def test_the_text_form_shows_both_columns_row_by_row():
    view = side_by_side(mm_relu)
    lines = str(view).splitlines()
    assert lines[0].split() == ["TVMScript", "│", "lnumpy"]
    assert len(lines) == len(view.rows) + 1
    row = next(line for line in lines if "T.grid(128, 128, 128)" in line)
    assert re.match(r"^\s+8     for i, j, k in T\.grid\(128, 128, 128\):\s+│\s+3     for i in "
                    r"range\(128\):$", row)
    assert re.search(r"^\s+│\s+4         for j in range\(128\):$", lines[lines.index(row) + 1])


def test_a_module_s_only_prim_func_or_a_named_one_is_shown():
    mod = from_source('''
@I.ir_module
class Mod:
    @T.prim_func
    def add_one(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = A[vi] + T.float32(1)
''')
    assert side_by_side(mod).lnumpy.startswith("def add_one(A, B):")
    assert side_by_side(mod, "add_one").tvmscript == mod["add_one"].script()


def test_anything_else_is_a_tvm_type_error(mlp):
    with pytest.raises(TVMTypeError, match="side_by_side shows a tir.PrimFunc, got Function"):
        side_by_side(mlp["main"])
    with pytest.raises(TVMTypeError, match=r"the name of a PrimFunc of the module \(it has: "
                                           r"linear0, linear1, relu0\), got None"):
        side_by_side(mlp)
