"""script_with_line_map: the printed text, each line mapped to the IR nodes it came from."""

from mlckit import tir
from mlckit.script import relax as R
from mlckit.script.printer import PrintedScript, script, script_with_line_map

from ...kernels import mm_relu


def nest(func):
    """The statements of mm_relu: root realize, the two loop nests, blocks and stores."""
    root = func.body
    loops_y, loops_c = root.block.body.seq
    i, j, k = loops_y, loops_y.body, loops_y.body.body
    block_y = k.body
    ci, cj = loops_c, loops_c.body
    block_c = cj.body
    return root, (i, j, k), block_y, (ci, cj), block_c


def test_the_text_is_exactly_script():
    text = script_with_line_map(mm_relu)
    assert isinstance(text, PrintedScript) and text == script(mm_relu)


def test_each_line_maps_to_the_innermost_statement_it_belongs_to():
    text = script_with_line_map(mm_relu)
    root, (i, j, k), block_y, (ci, cj), block_c = nest(mm_relu)
    lines = text.splitlines()
    by_text = {line.strip(): n for n, line in enumerate(lines, 1)}
    assert text.line_to_nodes[by_text["for i, j, k in T.grid(128, 128, 128):"]] == (i, j, k)
    assert text.line_to_nodes[by_text['with T.block("Y"):']] == (block_y,)
    # lines a block prints for itself belong to the block
    assert text.line_to_nodes[by_text['vi, vj, vk = T.axis.remap("SSR", [i, j, k])']] == (block_y,)
    assert text.line_to_nodes[by_text["T.reads(A[vi, vk], B[vk, vj])"]] == (block_y,)
    # the init and the update are statements of their own
    init = block_y.block.init
    assert text.line_to_nodes[by_text["with T.init():"]] == (init,)
    assert text.line_to_nodes[by_text["Y[vi, vj] = T.float32(0.0)"]] == (init,)
    assert text.line_to_nodes[by_text["Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]"]] == (
        block_y.block.body,)
    # the implicit root block owns its comment and its allocation
    assert text.line_to_nodes[by_text['# with T.block("root"):']] == (root,)
    assert text.line_to_nodes[by_text["Y = T.alloc_buffer((128, 128))"]] == (root,)
    assert text.line_to_nodes[by_text["for i, j in T.grid(128, 128):"]] == (ci, cj)
    assert text.line_to_nodes[by_text["C[vi, vj] = T.max(Y[vi, vj], T.float32(0.0))"]] == (
        block_c.block.body,)


def test_the_function_owns_its_decorator_and_signature_and_the_import_comment_nothing():
    text = script_with_line_map(mm_relu)
    lines = text.splitlines()
    assert lines[0] == "# from tvm.script import tir as T" and 1 not in text.line_to_nodes
    assert text.line_to_nodes[lines.index("@T.prim_func") + 1] == (mm_relu,)
    assert text.line_to_nodes[lines.index("@T.prim_func") + 2] == (mm_relu,)


def test_node_lines_lists_every_line_of_a_node():
    text = script_with_line_map(mm_relu)
    _, _, block_y, _, _ = nest(mm_relu)
    lines = text.splitlines()
    assert [lines[n - 1].strip() for n in text.node_lines(block_y)] == [
        'with T.block("Y"):', 'vi, vj, vk = T.axis.remap("SSR", [i, j, k])',
        "T.reads(A[vi, vk], B[vk, vj])", "T.writes(Y[vi, vj])"]


def test_a_scheduled_loop_of_its_own_kind_is_its_own_line():
    sch = tir.Schedule(mm_relu)
    i, _, _ = sch.get_loops(sch.get_block("Y"))
    sch.parallel(i)
    func = sch.mod["main"]
    text = script_with_line_map(func)
    loop = func.body.block.body.seq[0]
    (n,) = [n for n, nodes in text.line_to_nodes.items() if nodes == (loop,)]
    assert text.splitlines()[n - 1].strip() == "for i in T.parallel(128):"


def test_relax_bindings_map_to_their_lines():
    @R.function
    def main(x: R.Tensor((4,), "float32")):
        with R.dataflow():
            y = x
            R.output(y)
        return y

    text = script_with_line_map(main)
    binding = main.body.blocks[0].bindings[0]
    (n,) = text.node_lines(binding)
    assert text.splitlines()[n - 1].strip() == "y: R.Tensor((4,), dtype=\"float32\") = x"
