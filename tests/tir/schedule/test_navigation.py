"""Schedule state and navigation: get_block, get_loops, child blocks, producers, consumers."""

import pytest

from mlckit import tir
from mlckit.ir import IRModule

from .common import expect_error
from .workloads import MMRelu, elementwise, mm_relu_small


def test_get_block_and_loops():
    sch = tir.Schedule(MMRelu)
    block = sch.get_block("Y", func_name="mm_relu")
    assert sch.get(block).name_hint == "Y"
    assert [sch.get(lp).loop_var.name for lp in sch.get_loops(block)] == ["i", "j", "k"]
    assert sch.get_sblock("C", "mm_relu") is not None


def test_producers_consumers_children():
    sch = tir.Schedule(mm_relu_small)
    y, c = sch.get_block("Y"), sch.get_block("C")
    assert [sch.get(b).name_hint for b in sch.get_consumers(y)] == ["C"]
    assert [sch.get(b).name_hint for b in sch.get_producers(c)] == ["Y"]
    root = sch.get_block("root")
    assert [sch.get(b).name_hint for b in sch.get_child_blocks(root)] == ["Y", "C"]
    i, _, _ = sch.get_loops(y)
    assert [sch.get(b).name_hint for b in sch.get_child_blocks(i)] == ["Y"]


def test_work_on_and_missing_function():
    mod = IRModule({"a": elementwise, "b": mm_relu_small})
    sch = tir.Schedule(mod)
    expect_error(sch, lambda: sch.get_block("B"), "get_block", "func_name")
    sch.work_on("b")
    assert sch.get(sch.get_block("Y")).name_hint == "Y"
    expect_error(sch, lambda: sch.get_block("Y", func_name="zzz"), "no PrimFunc named 'zzz'")
    with pytest.raises(ValueError):
        sch.work_on("zzz")


def test_get_block_unknown_name_lists_blocks():
    sch = tir.Schedule(elementwise)
    expect_error(sch, lambda: sch.get_block("D"), "get_block", "no block is named 'D'", "B, C")


def test_copy_is_independent_and_keeps_rvs():
    sch = tir.Schedule(elementwise)
    b = sch.get_block("B")
    i, j = sch.get_loops(b)
    other = sch.copy()
    other.split(j, factors=[4, 4])
    assert len(other.trace) == len(sch.trace) + 1
    assert len(other.get_loops(b)) == 3
    assert len(sch.get_loops(b)) == 2


def test_primfunc_input_is_main():
    sch = tir.Schedule(elementwise)
    assert "main" in sch.mod
