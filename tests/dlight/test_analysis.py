"""dlight.analysis: the blocks of a function with their iterator kinds, as the GPU rules see
them; None for a function not in that form."""

from __future__ import annotations

from mlckit import tir
from mlckit.dlight.analysis import normalize_prim_func, reduction_rhs, try_inline_contiguous_spatial
from mlckit.script import tir as T


@T.prim_func
def softmax_like(A: T.Buffer((4, 64), "float32"), B: T.Buffer((4, 64), "float32")):
    M = T.alloc_buffer((4,))
    E = T.alloc_buffer((4, 64))
    for i, k in T.grid(4, 64):
        with T.block("M"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                M[vi] = T.min_value("float32")
            M[vi] = T.max(M[vi], A[vi, vk])
    for i, j in T.grid(4, 64):
        with T.block("E"):
            vi, vj = T.axis.remap("SS", [i, j])
            E[vi, vj] = A[vi, vj] - M[vi]
    for i, j in T.grid(4, 64):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = E[vi, vj] * T.float32(2)


@T.prim_func
def row_sum(A: T.Buffer((4, 64), "float32"), B: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 64):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]


def test_blocks_come_with_their_iterator_kinds_and_extents():
    infos = normalize_prim_func(tir.Schedule(softmax_like))
    assert [(i.name, i.dom_kind(), i.dom()) for i in infos] == [
        ("M", "SR", [4, 64]), ("E", "SS", [4, 64]), ("B", "SS", [4, 64])]
    assert [i.is_reduction() for i in infos] == [True, False, False]
    assert repr(infos[0]) == 'BlockInfo("M", "SR", [4, 64])'


def test_a_split_loop_is_not_the_normal_form():
    sch = tir.Schedule(row_sum)
    sch.split(sch.get_loops(sch.get_block("B"))[1], [None, 16])
    assert normalize_prim_func(sch) is None


def test_runs_of_elementwise_blocks_are_inlined():
    sch = tir.Schedule(softmax_like)
    left = try_inline_contiguous_spatial(sch, normalize_prim_func(sch))
    assert [i.name for i in left] == ["M", "B"]  # E went into B
    assert 'T.block("E")' not in sch.mod["main"].script()


def test_the_summand_of_an_accumulation():
    sch = tir.Schedule(row_sum)
    assert str(reduction_rhs(sch.get(sch.get_block("B")))) == "A[vi, vk]"
    sch = tir.Schedule(softmax_like)
    assert reduction_rhs(sch.get(sch.get_block("M"))) is None  # a max, not a sum
