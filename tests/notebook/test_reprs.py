"""HTML forms of Schedule, Trace, Executable, the VM profile report and NDArray, with their
text forms outside a notebook."""

import html
import re
import subprocess
import sys

import numpy as np
import pytest

import mlckit
from mlckit import relax, tir

from ..kernels import mm_relu


def text_of(markup: str) -> str:
    """What a reader sees of some HTML: the text without tags, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


@pytest.fixture
def sch():
    s = tir.Schedule(mm_relu)
    i, _, _ = s.get_loops(s.get_block("Y"))
    i0, _ = s.split(i, factors=[None, 4])
    s.parallel(i0)
    return s


@pytest.fixture
def vm_and_args(mlp):
    ex = relax.build(mlp, target="lnumpy")
    rng = np.random.default_rng(0)
    shapes = [(2, 784), (128, 784), (128,), (10, 128), (10,)]
    args = [mlckit.nd.array(rng.standard_normal(s).astype("float32")) for s in shapes]
    return ex, relax.VirtualMachine(ex, mlckit.cpu()), args


def test_schedule_html_shows_the_trace_and_the_scheduled_tvmscript(sch):
    markup = sch._repr_html_()
    seen = text_of(markup)
    assert seen.startswith("tir.Schedule working on main")
    assert "trace (4 instructions)" in seen
    assert str(sch.trace) in seen
    assert sch.mod.script() in seen
    assert "<details>" in markup and "<script" not in markup


def test_schedule_text_form_is_the_trace_then_the_tvmscript(sch):
    assert repr(sch) == str(sch) == f"{sch.trace}\n\n{sch.mod.script()}"
    assert "for i_0 in T.parallel(32):" in repr(sch)


def test_trace_html_is_the_trace_as_highlighted_python(sch):
    markup = sch.trace._repr_html_()
    assert text_of(markup).rstrip("\n") == "Trace 4 instructions" + str(sch.trace)
    assert re.search(r'<span style="[^"]*">def</span>', markup)


def test_executable_html_lists_functions_kernels_and_the_bytecode(vm_and_args):
    ex, _, _ = vm_and_args
    markup = ex._repr_html_()
    seen = text_of(markup)
    assert seen.startswith("relax.Executable target lnumpy")
    main = ex["main"]
    row = re.search(r"<tr><td[^>]*>main</td>(.*?)</tr>", markup).group(1)
    assert [text_of(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)] == [
        "vm_func", "x, w0, b0, w1, b1", str(main.end_instr - main.start_instr),
        str(main.register_file_size)]
    assert {"linear0", "linear1", "relu0"} <= set(ex.kernels)
    assert f"kernels ({len(ex.kernels)}): {', '.join(sorted(ex.kernels))}" in seen
    assert f">{html.escape(ex.as_text())}</pre>" in markup


def test_profile_html_is_a_table_sorted_by_total_time_with_a_sorting_script(vm_and_args):
    _, vm, args = vm_and_args
    report = vm.profile(*args)
    markup = report._repr_html_()
    body = re.search(r"<tbody>(.*)</tbody>", markup, re.S).group(1)
    rows = [[text_of(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", r)]
            for r in re.findall(r"<tr>(.*?)</tr>", body)]
    expected = sorted(report.rows, key=lambda r: -r.seconds)
    assert [r[0] for r in rows] == [r.name for r in expected]
    assert [int(r[1]) for r in rows] == [r.calls for r in expected]
    assert [r[2] for r in rows] == [f"{r.seconds * 1e6:.1f} µs" for r in expected]
    assert {"linear0", "relu0", "linear1"} <= {r[0] for r in rows}
    heads = re.findall(r"<th(?: [^>]*)?>(.*?)</th>", markup)
    assert heads == ["name", "calls", "total", "mean", "share"]
    assert "(VM dispatch and the rest)" in re.search(r"<tfoot>(.*)</tfoot>", markup).group(1)
    script = re.search(r"<script>(.*)</script>", markup, re.S).group(1)
    assert 'addEventListener("click"' in script and "sort(" in script


def test_profile_text_form_is_unchanged(vm_and_args):
    _, vm, args = vm_and_args
    report = vm.profile(*args)
    assert repr(report) == str(report) == report.table()


def test_ndarray_html_shows_shape_dtype_device_and_values():
    a = mlckit.nd.array(np.arange(6, dtype="float32").reshape(2, 3))
    seen = text_of(a._repr_html_())
    assert seen == "NDArray (2, 3) float32 on cpu(0)" + np.array2string(a.numpy(), separator=", ")


def test_a_large_ndarray_is_summarised_as_numpy_does():
    a = mlckit.nd.array(np.zeros((1000, 1000), dtype="float32"))
    assert "..." in text_of(a._repr_html_()) and len(a._repr_html_()) < 2000


def test_reprs_fall_back_to_text_without_the_notebook_layer(monkeypatch, sch):
    monkeypatch.setitem(sys.modules, "mlckit.notebook.reprs", None)  # import fails
    a = mlckit.nd.array(np.ones(3, dtype="float32"))
    assert a._repr_html_() is None and sch._repr_html_() is None
    assert sch.trace._repr_html_() is None


def test_core_objects_import_the_notebook_layer_only_to_render_html():
    code = (
        "import sys, numpy as np, mlckit\n"
        "from mlckit import tir\n"
        "a = mlckit.nd.array(np.ones(3, dtype='float32'))\n"
        "repr(a)\n"
        "print('mlckit.notebook' in sys.modules)\n"
        "a._repr_html_()\n"
        "print('mlckit.notebook.reprs' in sys.modules, "
        "sorted(m for m in ('IPython', 'ipywidgets') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split("\n")[:2] == ["False", "True []"]
