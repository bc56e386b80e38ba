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
