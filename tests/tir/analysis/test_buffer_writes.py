"""tir.analysis.buffer_writes: the stores of a statement, the iteration writing an element,
and what can be proven where (the facts RemoveNoOp's dataflow analysis uses)."""

from __future__ import annotations

from mlckit import tir
from mlckit.script import tir as T
from mlckit.tir.analysis.buffer_writes import (
    ProofContext,
    reads_any,
    solve_point,
    value_at,
    writes_any,
    writes_of,
)


@T.prim_func
def shifted(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
    for i in range(2, 10):
        if i < 8:
            A[i + 1] = i * 3
    B[0] = A[3]


def test_the_stores_of_a_loop_come_with_their_loops_and_conditions():
    (write,) = writes_of(shifted.body.seq[0])
    (var, lo, extent), = write.loops
    assert var.name == "i" and (lo.value, extent.value) == (2, 8)
    assert str(write.conditions[0]) == "i < 8"


def test_a_statement_doing_more_than_storing_has_no_write_list():
    @T.prim_func
    def f(A: T.Buffer((4,), "int32")):
        for i in range(4):
            T.evaluate(T.call_extern("tick", dtype="int32"))
            A[i] = 0

    assert writes_of(f.body) is None


def test_the_iteration_writing_an_element_is_solved():
    (write,) = writes_of(shifted.body.seq[0])
    values = solve_point(write, [tir.const(5, "int32")], ProofContext())
    assert [v.value for v in values.values()] == [4]
    assert str(value_at(write, values)) == "T.Mul(4, 3)"  # i * 3 at i = 4, not simplified


def test_an_element_outside_the_loop_or_its_condition_is_not_written():
    (write,) = writes_of(shifted.body.seq[0])
    assert solve_point(write, [tir.const(11, "int32")], ProofContext()) is None  # i = 10
    assert solve_point(write, [tir.const(9, "int32")], ProofContext()) is None  # i = 8, not < 8


def test_a_symbolic_element_is_written_when_its_range_is_inside():
    (write,) = writes_of(shifted.body.seq[0])
    j = tir.Var("j", "int32")
    inside = ProofContext().with_loop(j, 3, 6)  # j in [3, 9): i = j - 1 in [2, 8)
    assert solve_point(write, [j], inside) is not None
    assert solve_point(write, [j], ProofContext().with_loop(j, 3, 7)) is None  # i = 8


def test_conditions_narrow_the_loop_ranges_in_proofs():
    i = tir.Var("i", "int32")
    ctx = ProofContext().with_loop(i, 0, 16)
    assert not ctx.prove(i // 4 < 3)
    assert ctx.with_condition(i < 10).prove(i // 4 < 3)
    assert ctx.with_condition(tir.Not(tir.NE(i, 0))).prove_equal(i, tir.const(0, "int32"))


def test_lets_are_seen_through():
    i, x = tir.Var("i", "int32"), tir.Var("x", "int32")
    ctx = ProofContext().with_loop(i, 0, 4).with_let(x, i * 2)
    assert ctx.prove_equal(x, i + i)


def test_reads_and_writes_of_memory():
    a = shifted.buffer_map[shifted.params[0]].data
    first, second = shifted.body.seq
    assert not reads_any(first, {id(a)}) and writes_any(first, {id(a)})
    assert reads_any(second, {id(a)}) and not writes_any(second, {id(a)})
