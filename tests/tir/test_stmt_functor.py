"""tir.stmt_functor.renew_defs: a structurally equal copy defining new objects."""

from mlckit.ir import assert_structural_equal
from mlckit.script import tir as T
from mlckit.tir.stmt_functor import renew_defs


@T.prim_func
def matmul(a: T.handle, b: T.handle, c: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n, 8))
    B = T.match_buffer(b, (8, 8))
    C = T.match_buffer(c, (n, 8))
    Y = T.alloc_buffer((n, 8))
    for i, j, k in T.grid(n, 8, 8):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(n, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = Y[vi, vj]


def test_copy_is_equal_but_shares_no_definition():
    copy = renew_defs(matmul)
    assert_structural_equal(copy, matmul)
    assert all(p is not q for p, q in zip(copy.params, matmul.params))
    old = list(matmul.buffer_map.values())
    new = list(copy.buffer_map.values())
    assert all(a is not b and a.data is not b.data for a, b in zip(old, new))
    assert new[0].shape[0] is not old[0].shape[0]  # the symbolic n is new too
    old_block = matmul.body.block.body[0].body.body.body.block
    new_block = copy.body.block.body[0].body.body.body.block
    assert new_block is not old_block and new_block.iter_vars[0].var is not \
        old_block.iter_vars[0].var
    assert new_block.name_hint == "Y"


# -- the traversal toolkit -------------------------------------------------------------------
from mlckit import tir  # noqa: E402
from mlckit.tir.stmt_functor import (  # noqa: E402
    ir_transform,
    post_order_visit,
    pre_order_visit,
    substitute,
    uses_var,
)


@T.prim_func
def scale(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,))
    B = T.match_buffer(b, (n,))
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] * T.float32(2)


def test_post_order_visit_sees_children_before_parents_and_each_node_once():
    seen = []
    post_order_visit(scale.body, lambda n: seen.append(type(n).__name__))
    assert seen.index("BufferStore") < seen.index("Block") < seen.index("BlockRealize") < seen.index("For")
    assert seen[-1] == "BlockRealize"  # the root block realize is the body
    x = tir.Var("x", "int32")
    e = x * x
    names = []
    post_order_visit(e, lambda n: names.append(str(n)))
    assert names == ["x", "x * x"]  # the shared x once


def test_pre_order_visit_skips_the_children_when_told():
    seen = []

    def visit(n):
        seen.append(type(n).__name__)
        return not isinstance(n, tir.For)

    pre_order_visit(scale.body, visit)
    assert "For" in seen and "BufferStore" not in seen


def test_loop_variables_are_definitions_not_uses():
    loop = scale.body.block.body
    assert isinstance(loop, tir.For)
    assert not uses_var(loop, lambda v: v is loop.loop_var and False)
    assert uses_var(loop.body, loop.loop_var)  # the block binds vi = i
    assert not uses_var([tir.IntImm("int32", 1)], loop.loop_var)


def test_substitute_replaces_uses_and_keeps_definitions():
    loop = scale.body.block.body
    j = tir.Var("j", "int32")
    new = substitute(loop, {loop.loop_var: j})
    assert new.loop_var is loop.loop_var  # the definition is kept
    assert new.body.iter_values[0] is j
    n = scale.buffer_map[scale.params[0]].shape[0]
    bounded = substitute(loop, {n: 16})
    assert bounded.extent.value == 16 and bounded.extent.dtype == "int32"
    assert substitute(loop, {}) is loop


def test_substitute_shares_what_does_not_change():
    loop = scale.body.block.body
    other = tir.Var("other", "int32")
    assert substitute(loop, {other: tir.IntImm("int32", 0)}) is loop


def test_ir_transform_rewrites_bottom_up_only_the_enabled_nodes():
    def double_to_half(n):
        if isinstance(n, tir.FloatImm):
            return tir.FloatImm(n.dtype, 0.5)
        return None

    new = ir_transform(scale, None, double_to_half, only_enable=["tir.FloatImm"])
    expected_body = """
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            T.reads(A[vi])
            T.writes(B[vi])
            B[vi] = A[vi] * T.float32(0.5)"""
    assert expected_body.strip() in new.script()
    untouched = ir_transform(scale, None, double_to_half, only_enable=["tir.Add"])
    assert untouched is scale


def test_ir_transform_preorder_replacement_stops_the_descent():
    seen = []

    def pre(n):
        if isinstance(n, tir.For):
            return tir.Evaluate(tir.IntImm("int32", 0))
        return None

    new = ir_transform(scale.body, pre, lambda n: seen.append(type(n).__name__))
    assert isinstance(new.block.body, tir.Evaluate)
    assert "BufferStore" not in seen
