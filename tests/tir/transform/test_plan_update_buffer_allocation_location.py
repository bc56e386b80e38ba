"""PlanAndUpdateBufferAllocationLocation: each block-allocated buffer moves to the lowest
common ancestor of its uses (a new opaque block under a loop), as TVM v0.23's pass does;
expected TVMScript written out, the moved kernels run against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import mlckit as tvm
from mlckit import tir
from mlckit.backend import lnumpy
from mlckit.error import TVMError
from mlckit.script import tir as T

from ._mm import check_numbers, scheduled


def plan(func):
    mod = tvm.IRModule({"main": func})
    return tir.transform.PlanAndUpdateBufferAllocationLocation()(mod)["main"]


def check(before, expected):
    symbol = before.attrs["global_symbol"]
    tvm.ir.assert_structural_equal(plan(before), expected.with_attr("global_symbol", symbol))


@T.prim_func
def two_stages(a: T.Buffer((4, 8), "float32"), c: T.Buffer((4, 8), "float32")):
    b = T.alloc_buffer((4, 8))
    for i in range(4):
        for j in range(8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                b[vi, vj] = a[vi, vj] * T.float32(2)
        for j in range(8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                c[vi, vj] = b[vi, vj] + T.float32(1)


def test_a_buffer_used_inside_one_loop_is_allocated_in_a_block_under_it():
    @T.prim_func
    def expected(a: T.Buffer((4, 8), "float32"), c: T.Buffer((4, 8), "float32")):
        for i in range(4):
            with T.block(""):
                T.reads(a[i, 0:8])
                T.writes(c[i, 0:8])
                b = T.alloc_buffer((4, 8))
                for j in range(8):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        b[vi, vj] = a[vi, vj] * T.float32(2)
                for j in range(8):
                    with T.block("C"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        c[vi, vj] = b[vi, vj] + T.float32(1)

    check(two_stages, expected)


def test_a_buffer_nothing_uses_is_dropped():
    @T.prim_func
    def before(a: T.Buffer((4,), "float32"), c: T.Buffer((4,), "float32")):
        unused = T.alloc_buffer((4,))
        for i in range(4):
            with T.block("C"):
                vi = T.axis.spatial(4, i)
                c[vi] = a[vi]

    @T.prim_func
    def expected(a: T.Buffer((4,), "float32"), c: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("C"):
                vi = T.axis.spatial(4, i)
                c[vi] = a[vi]

    check(before, expected)


def test_a_buffer_used_at_the_top_level_stays_there():
    @T.prim_func
    def before(a: T.Buffer((4,), "float32"), c: T.Buffer((4,), "float32")):
        b = T.alloc_buffer((4,))
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                b[vi] = a[vi]
        for i in range(4):
            with T.block("C"):
                vi = T.axis.spatial(4, i)
                c[vi] = b[vi]

    after = plan(before)
    tvm.ir.assert_structural_equal(after, before)
    assert [buf.name for buf in after.body.block.alloc_buffers] == ["b"]


@T.prim_func
def split_reduction(a: T.Buffer((4, 8), "float32"), c: T.Buffer((4,), "float32")):
    s = T.alloc_buffer((4,))
    for i, k0 in T.grid(4, 2):
        for k1 in range(4):
            with T.block("S"):
                vi = T.axis.spatial(4, i)
                vk = T.axis.reduce(8, k0 * 4 + k1)
                if vk == 0:
                    s[vi] = T.float32(0)
                s[vi] = s[vi] + a[vi, vk]
        with T.block("C"):
            T.where(k0 == 1)
            vi = T.axis.spatial(4, i)
            c[vi] = s[vi]


def test_partial_sums_are_allocated_above_every_loop_of_the_reduction():
    # all uses of s lie under k0, but k0 is a reduction loop: s must outlive its iterations
    @T.prim_func
    def expected(a: T.Buffer((4, 8), "float32"), c: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block(""):
                T.reads(a[i, 0:8])
                T.writes(c[i])
                s = T.alloc_buffer((4,))
                for k0 in range(2):
                    for k1 in range(4):
                        with T.block("S"):
                            vi = T.axis.spatial(4, i)
                            vk = T.axis.reduce(8, k0 * 4 + k1)
                            if vk == 0:
                                s[vi] = T.float32(0)
                            s[vi] = s[vi] + a[vi, vk]
                    with T.block("C"):
                        T.where(k0 == 1)
                        vi = T.axis.spatial(4, i)
                        c[vi] = s[vi]

    check(split_reduction, expected)
    after = plan(split_reduction)
    a = np.random.default_rng(0).uniform(-1, 1, (4, 8)).astype("float32")
    c = np.zeros(4, "float32")
    (lowered,) = tvm.lower(after).functions.values()
    lnumpy.build(lowered)(a, c)
    np.testing.assert_allclose(c, a.sum(axis=1), rtol=1e-5)


def test_the_moved_scheduled_kernel_computes_the_same():
    mod = tir.transform.LowerInitBlock()(scheduled())
    check_numbers(tir.transform.PlanAndUpdateBufferAllocationLocation()(mod)["mm_relu"])


def test_a_block_with_init_is_refused_until_lower_init_block_ran():
    @T.prim_func
    def total(a: T.Buffer((4,), "float32"), s: T.Buffer((1,), "float32")):
        for k in range(4):
            with T.block("S"):
                vk = T.axis.reduce(4, k)
                with T.init():
                    s[0] = T.float32(0)
                s[0] = s[0] + a[vk]

    with pytest.raises(TVMError, match="'S' still has a T.init\\(\\); run "
                                       "tir.transform.LowerInitBlock\\(\\) first"):
        plan(total)


def test_lca_analysis_names_the_innermost_loop_or_block_around_all_uses():
    lca = tir.analysis.detect_buffer_access_lca(two_stages)
    found = {buf.name: s for buf, s in lca.items()}
    loop_i = two_stages.body.block.body
    assert found["b"] is loop_i
    assert isinstance(found["a"], tir.Block) and found["a"].name_hint == "B"
    assert isinstance(found["c"], tir.Block) and found["c"].name_hint == "C"
