"""Wherever a primitive takes a block, its name works too (TVM's ``Union[BlockRV, str]``):
the result equals the BlockRV call's, and the trace records the ``get_block`` it implies."""

import pytest

from mlckit import tir
from mlckit.ir import IRModule, assert_structural_equal

from .common import expect_error, verify_trace_roundtrip
from .workloads import elementwise, matmul


def _both_ways(func, apply):
    """Apply ``apply(sch, block_of)`` once with names and once with BlockRVs; compare."""
    by_name = tir.Schedule(func)
    apply(by_name, lambda name: name)
    by_rv = tir.Schedule(func)
    apply(by_rv, by_rv.get_block)
    assert_structural_equal(by_name.mod, by_rv.mod)
    verify_trace_roundtrip(by_name, func)
    return by_name


PRIMITIVES = {
    "compute_inline": (elementwise, lambda s, b: s.compute_inline(b("B"))),
    "reverse_compute_inline": (elementwise, lambda s, b: s.reverse_compute_inline(b("C"))),
    "compute_at": (elementwise, lambda s, b: s.compute_at(b("B"), s.get_loops(b("C"))[0])),
    "reverse_compute_at": (elementwise,
                           lambda s, b: s.reverse_compute_at(b("C"), s.get_loops(b("B"))[1])),
    "cache_read": (elementwise, lambda s, b: s.cache_read(b("C"), 0, "local")),
    "cache_read with consumer names": (
        elementwise, lambda s, b: s.cache_read(b("B"), 0, "local", consumer_blocks=[b("B")])),
    "cache_write": (elementwise, lambda s, b: s.cache_write(b("B"), 0, "local")),
    "set_scope": (elementwise, lambda s, b: s.set_scope(b("B"), 0, "shared")),
    "storage_align": (elementwise, lambda s, b: s.storage_align(b("B"), 0, 0, 16, 1)),
    "transform_layout": (elementwise,
                         lambda s, b: s.transform_layout(b("B"), ("write", 0), lambda i, j: (j, i))),
    "decompose_reduction": (matmul,
                            lambda s, b: s.decompose_reduction(b("C"), s.get_loops(b("C"))[0])),
    "annotate": (elementwise, lambda s, b: s.annotate(b("C"), "pragma_note", 1)),
    "add_unit_loop": (elementwise, lambda s, b: s.add_unit_loop(b("C"))),
}


@pytest.mark.parametrize("name", PRIMITIVES)
def test_a_block_name_does_what_the_block_rv_does(name):
    func, apply = PRIMITIVES[name]
    _both_ways(func, apply)


def test_navigation_by_name():
    sch = tir.Schedule(elementwise)
    loops = sch.get_loops("C")
    assert [sch.get(loop).loop_var.name_hint for loop in loops] == ["i", "j"]
    assert [sch.get(b).name_hint for b in sch.get_producers("C")] == ["B"]
    assert [sch.get(b).name_hint for b in sch.get_consumers("B")] == ["C"]


def test_the_trace_records_the_get_block_a_name_implies():
    sch = tir.Schedule(elementwise)
    sch.compute_inline("B")
    assert str(sch.trace).splitlines()[2:] == [
        '  b0 = sch.get_block(name="B", func_name="main")',
        "  sch.compute_inline(block=b0)",
    ]


def test_an_unknown_name_is_refused_by_the_primitive_listing_the_blocks():
    sch = tir.Schedule(elementwise)
    expect_error(sch, lambda: sch.compute_inline("D"), "compute_inline: no block is named 'D'",
                 "its blocks are: B, C")


def test_get_block_looks_in_the_function_worked_on():
    sch = tir.Schedule(IRModule({"ew": elementwise, "mm": matmul}))
    expect_error(sch, lambda: sch.get_loops("C"), "several functions", "work_on")
    sch.work_on("mm")
    assert len(sch.get_loops("C")) == 3
    assert len(sch.get_loops(sch.get_block("C", func_name="ew"))) == 2
