"""Diffs of TVMScript texts: unified text and self-contained HTML."""

import re

import pytest

from mlckit.error import TVMValueError
from mlckit.notebook import diff_html, unified_diff

from .sanitizer import dropped

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


def test_side_by_side_html_is_two_columns_with_the_changed_line_marked():
    out = diff_html(BEFORE, AFTER, mode="side_by_side", from_name="old", to_name="new")
    assert dropped(out) == [] and "<style" not in out
    assert out.count('class="mlckit-column"') == 2
    assert ">old</div>" in out and ">new</div>" in out
    changed = re.findall(r'background:#fff8c5;text-align:left"><span style="[^"]*">(\d+)</span>'
                         r"([^<]*)</div>", out)
    assert changed == [("3", "    b = 2"), ("3", "    b = 3")]


def test_side_by_side_html_leaves_out_lines_far_from_a_change():
    before = "".join(f"line {i}\n" for i in range(30))
    after = before.replace("line 3\n", "line three\n").replace("line 25\n", "")
    out = diff_html(before, after, mode="side_by_side")
    numbers = [int(n) for n in re.findall(r'padding-right:0.8em">(\d+)</span>', out)]
    assert 15 not in numbers and {1, 4, 7, 23, 26, 29} <= set(numbers)
    assert out.count("⋯") == 2  # one gap row in each column


def test_html_of_equal_texts_says_no_change():
    assert "(no change)" in diff_html(BEFORE, BEFORE, mode="side_by_side")


def test_an_unknown_mode_is_a_tvm_value_error():
    with pytest.raises(TVMValueError, match="diff mode 'inline' is not one of unified, side_by_side"):
        diff_html(BEFORE, AFTER, mode="inline")
