"""graph(obj): DOT graphs of Relax dataflow and PrimFunc loop nests, rendered by `dot`."""

import base64
import re

import graphviz
import pytest

from mlckit import relax, tir
from mlckit.error import TVMTypeError
from mlckit.notebook import graph
from mlckit.script import from_source

from ..kernels import mm_relu
from .sanitizer import dropped


def parse_dot(source: str):
    """(node id -> label, [(tail label, head label, edge label)]) of a DOT text."""
    labels = {}
    for m in re.finditer(r'^\s*(\w+) \[label=(?:"((?:[^"\\]|\\.)*)"|(\w+))', source, re.M):
        labels[m.group(1)] = (m.group(2) if m.group(2) is not None else m.group(3))
    edges = []
    for m in re.finditer(r'^\s*(\w+) -> (\w+)(?: \[label=(?:"((?:[^"\\]|\\.)*)"|(\w+))\])?',
                         source, re.M):
        label = m.group(3) if m.group(3) is not None else (m.group(4) or "")
        edges.append((labels[m.group(1)], labels[m.group(2)], label))
    return labels, edges


def test_relax_graph_has_a_node_per_call_tir_labelled_with_its_kernel(mlp):
    labels, _ = parse_dot(graph(mlp["main"]).source)
    calls = [label for label in labels.values() if label.startswith("R.call_tir")]
    assert calls == [r"R.call_tir\nlinear0", r"R.call_tir\nrelu0", r"R.call_tir\nlinear1"]


def test_relax_graph_edges_are_tensors_labelled_with_name_shape_and_dtype(mlp):
    _, edges = parse_dot(graph(mlp["main"]).source)
    assert edges == [
        ("x", r"R.call_tir\nlinear0", r"x\n(n, 784) float32"),
        ("w0", r"R.call_tir\nlinear0", r"w0\n(128, 784) float32"),
        ("b0", r"R.call_tir\nlinear0", r"b0\n(128,) float32"),
        (r"R.call_tir\nlinear0", r"R.call_tir\nrelu0", r"lv0\n(n, 128) float32"),
        (r"R.call_tir\nrelu0", r"R.call_tir\nlinear1", r"lv1\n(n, 128) float32"),
        ("w1", r"R.call_tir\nlinear1", r"w1\n(10, 128) float32"),
        ("b1", r"R.call_tir\nlinear1", r"b1\n(10,) float32"),
        (r"R.call_tir\nlinear1", "return", r"out\n(n, 10) float32"),
    ]


def test_relax_graph_draws_params_and_the_returned_value_as_nodes(mlp):
    source = graph(mlp["main"]).source
    for i, name in enumerate(["x", "w0", "b0", "w1", "b1"]):
        assert f"\tparam{i} [label={name} " in source
    assert "\treturn [label=return " in source


def test_a_dataflow_block_is_a_cluster_holding_its_operations(mlp):
    source = graph(mlp["main"]).source
    cluster = re.search(r"subgraph cluster_dataflow0 \{(.*?)\n\t\}", source, re.S).group(1)
    assert 'label="R.dataflow()"' in cluster
    assert re.findall(r"^\t\t(\w+) \[", cluster, re.M) == ["op1", "op2", "op3"]
    assert "param" not in cluster and "return" not in cluster


def test_operator_calls_are_labelled_with_the_op_name_and_literal_arguments(mlp):
    lowered = relax.transform.CallTIRRewrite()(relax.transform.ToNonDataflow()(mlp))
    labels, edges = parse_dot(graph(lowered).source)
    allocs = [label for label in labels.values() if label.startswith("R.builtin.alloc_tensor")]
    assert len(allocs) == 3
    assert allocs[0].startswith(r'R.builtin.alloc_tensor\nR.shape([n, 128]), R.dtype(\"float32\")')
    # a kernel called in destination-passing style produces the tensor it writes
    assert ("linear0", "relu0", r"lv0\n(n, 128) float32") in edges
    assert (allocs[0], "linear0", r"alloc\n(n, 128) float32") in edges
    assert not any("cluster" in line for line in graph(lowered).source.splitlines())


def test_tuples_and_tuple_items_are_their_own_nodes():
    func = from_source('''
@R.function
def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((3,), "float32")):
    t = (x, y)
    a = t[1]
    return a
''')
    _, edges = parse_dot(graph(func).source)
    assert edges == [("x", "tuple", r"x\n(2, 3) float32"), ("y", "tuple", r"y\n(3,) float32"),
                     ("tuple", "[1]", r"t\n((2, 3) float32, (3,) float32)"),
                     ("[1]", "return", r"a\n(3,) float32")]


def test_prim_func_graph_is_the_loop_nest_tree_with_blocks(mlp):
    labels, edges = parse_dot(graph(mm_relu).source)
    root = r"mm_relu\lA (128, 128) float32\lB (128, 128) float32\lC (128, 128) float32\l"
    block_root = r'block \"root\"\lalloc Y (128, 128) float32\l'
    block_y = r'block \"Y\"\lvi: S 128 = i\lvj: S 128 = j\lvk: R 128 = k\l'
    block_c = r'block \"C\"\lvi: S 128 = i\lvj: S 128 = j\l'
    assert [(t, h) for t, h, _ in edges] == [
        (root, block_root),
        (block_root, "for i in range(128)"), ("for i in range(128)", "for j in range(128)"),
        ("for j in range(128)", "for k in range(128)"), ("for k in range(128)", block_y),
        (block_y, "T.init()"), ("T.init()", "Y[vi, vj] = T.float32(0.0)"),
        (block_y, "Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]"),
        (block_root, "for i in range(128)"), ("for i in range(128)", "for j in range(128)"),
        ("for j in range(128)", block_c),
        (block_c, "C[vi, vj] = T.max(Y[vi, vj], T.float32(0.0))"),
    ]


def test_prim_func_graph_shows_loop_kinds_and_extents_after_a_schedule():
    sch = tir.Schedule(mm_relu)
    i, j, k = sch.get_loops(sch.get_block("Y"))
    i0, i1 = sch.split(i, factors=[None, 4])
    sch.parallel(i0)
    sch.unroll(i1)
    j0, j1 = sch.split(j, factors=[None, 8])
    sch.reorder(j0, k, j1)
    sch.vectorize(j1)
    labels, _ = parse_dot(graph(sch.mod["main"]).source)
    loops = [label for label in labels.values() if label.startswith("for ")]
    assert loops[:5] == ["for i_0 in T.parallel(32)", "for i_1 in T.unroll(4)",
                         "for j_0 in range(16)", "for k in range(128)",
                         "for j_1 in T.vectorized(8)"]
    block_y = next(label for label in labels.values() if label.startswith(r'block \"Y\"'))
    assert r"vi: S 128 = i_0 * 4 + i_1\l" in block_y


def test_dot_renders_both_graphs_to_svg(mlp):
    for g in (graph(mlp["main"]), graph(mm_relu)):
        svg = g.pipe(format="svg").decode()
        assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    svg = graph(mlp["main"]).pipe(format="svg").decode()
    assert ">R.call_tir</text>" in svg and ">linear0</text>" in svg
    assert ">(n, 784) float32</text>" in svg


def test_shortcuts_on_function_prim_func_and_module(mlp):
    assert isinstance(mlp["main"].graph(), graphviz.Digraph)
    assert mlp["main"].graph().source == graph(mlp["main"]).source
    assert mm_relu.graph().source == graph(mm_relu).source
    assert mlp.graph().source == graph(mlp["main"], "main").source
    assert mlp.graph("linear0").source == graph(mlp["linear0"], "linear0").source
    assert from_source(ONE_KERNEL_MODULE).graph().name == "add_one"


ONE_KERNEL_MODULE = '''
@I.ir_module
class Mod:
    @T.prim_func
    def add_one(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = A[vi] + T.float32(1)
'''


def test_drawing_leaves_the_ir_unchanged(mlp):
    before = mlp.script()
    graph(mlp["main"]), graph(mlp["linear0"])
    assert mlp.script() == before


def test_graph_of_something_else_is_a_tvm_type_error():
    with pytest.raises(TVMTypeError, match="graph\\(\\) draws a relax.Function, a tir.PrimFunc "
                                           "or an IRModule, got int"):
        graph(42)


def test_a_graph_displays_drawn_even_where_svg_outputs_are_not_shown():
    """An untrusted notebook shows no SVG output: the HTML form holds the SVG as an image."""
    g = graph(mm_relu)
    bundle = g._repr_mimebundle_()
    assert bundle["image/svg+xml"].startswith("<svg")
    data = re.search(r'src="data:image/svg\+xml;base64,([^"]+)"', bundle["text/html"]).group(1)
    assert base64.b64decode(data).decode() == bundle["image/svg+xml"]
    assert dropped(bundle["text/html"]) == []
    assert bundle["text/plain"] == "graph mm_relu: 12 edge(s); print(g.source) for its DOT text"
    assert g._repr_mimebundle_(include=["text/plain"]) == {"text/plain": bundle["text/plain"]}
