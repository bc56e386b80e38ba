"""Diffs of TVMScript texts: unified text and self-contained HTML."""

import pytest

from mlckit.error import TVMValueError
from mlckit.notebook import diff_html, unified_diff

BEFORE = "def f():\n    a = 1\n    b = 2\n    return a\n"
AFTER = "def f():\n    a = 1\n    b = 3\n    return a\n"


def test_unified_diff_marks_removed_and_added_lines():
    assert unified_diff(BEFORE, AFTER, "old", "new").splitlines() == [
        "--- old", "+++ new", "@@ -1,4 +1,4 @@",
        " def f():", "     a = 1", "-    b = 2", "+    b = 3", "     return a"]


def test_unified_diff_of_equal_texts_is_empty():
    assert unified_diff(BEFORE, BEFORE) == ""


def test_unified_html_colours_each_line_and_escapes_the_text():
    out = diff_html("x = a < b\n", "x = a > b\n")
    assert out.startswith('<pre class="mlckit-diff"')
    assert '<span style="background:#ffebe9;color:#cf222e">-x = a &lt; b</span>' in out
    assert '<span style="background:#e6ffec;color:#1a7f37">+x = a &gt; b</span>' in out


def test_side_by_side_html_is_difflib_s_table_with_inline_styles():
    out = diff_html(BEFORE, AFTER, mode="side_by_side", from_name="old", to_name="new")
    assert out.startswith("<div><style>") and "table.mlckit-diff" in out
    assert '<table class="mlckit-diff diff"' in out
    assert '<th colspan="2" class="diff_header">old</th>' in out
    assert '<span class="diff_chg">2</span>' in out and '<span class="diff_chg">3</span>' in out


def test_html_of_equal_texts_says_no_change():
    assert "(no change)" in diff_html(BEFORE, BEFORE, mode="side_by_side")


def test_an_unknown_mode_is_a_tvm_value_error():
    with pytest.raises(TVMValueError, match="diff mode 'inline' is not one of unified, side_by_side"):
        diff_html(BEFORE, AFTER, mode="inline")
