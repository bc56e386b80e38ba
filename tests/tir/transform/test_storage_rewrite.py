"""StorageRewrite: allocations whose lifetimes do not overlap share memory, and allocations
move to the top of their function or parallel loop, as TVM v0.23's pass (expected TVMScript
written out; each rewritten kernel run by lnumpy and Numba against the kernel before)."""

from __future__ import annotations

import numpy as np
import pytest

import mlckit as tvm
from mlckit import tir
from mlckit.backend import lnumpy, numba_cpu
from mlckit.error import TVMError
from mlckit.script import tir as T


def rewrite(func):
    mod = tvm.IRModule({"main": func})
    return tir.transform.StorageRewrite()(mod)["main"]


def check(before, expected):
    after = rewrite(before)
    symbol = before.attrs["global_symbol"]
    tvm.ir.assert_structural_equal(after, expected.with_attr("global_symbol", symbol))
    params = [before.buffer_map[p] for p in before.params]
    rng = np.random.default_rng(0)
    args = [rng.uniform(-1, 1, [int(s) for s in b.shape]).astype(b.dtype) for b in params]
    want = [a.copy() for a in args]
    lnumpy.build(before)(*want)
    for build in (lnumpy.build, lambda f: numba_cpu.build(f, cache=False)):
        got = [a.copy() for a in args]
        build(after)(*got)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-6)


def test_a_buffer_written_from_the_last_read_of_another_takes_its_memory_in_place():
    @T.prim_func
    def before(a: T.Buffer((16,), "float32"), d: T.Buffer((16,), "float32")):
        b = T.decl_buffer((16,))
        c = T.decl_buffer((16,))
        for i in range(16):
            b[i] = a[i]
        for i in range(16):
            c[i] = b[i] * T.float32(2)
        for i in range(16):
            d[i] = c[i]

    @T.prim_func
    def expected(a: T.Buffer((16,), "float32"), d: T.Buffer((16,), "float32")):
        b = T.decl_buffer((16,))
        c = T.decl_buffer((16,), data=b.data)
        for i in range(16):
            b[i] = a[i]
        for i in range(16):
            c[i] = b[i] * T.float32(2)
        for i in range(16):
            d[i] = c[i]

    check(before, expected)


def test_a_buffer_allocated_after_another_died_reuses_its_memory():
    @T.prim_func
    def before(a: T.Buffer((16,), "float32"), d: T.Buffer((16,), "float32")):
        b = T.decl_buffer((16,))
        for i in range(16):
            b[i] = a[i] + T.float32(1)
        for i in range(16):
            d[i] = b[15 - i]
        c = T.decl_buffer((8,))
        for i in range(8):
            c[i] = d[i] * T.float32(2)
        for i in range(8):
            d[i + 8] = c[7 - i]

    @T.prim_func
    def expected(a: T.Buffer((16,), "float32"), d: T.Buffer((16,), "float32")):
        b = T.decl_buffer((16,))
        for i in range(16):
            b[i] = a[i] + T.float32(1)
        for i in range(16):
            d[i] = b[15 - i]
        c = T.decl_buffer((8,), data=b.data)
        for i in range(8):
            c[i] = d[i] * T.float32(2)
        for i in range(8):
            d[i + 8] = c[7 - i]

    check(before, expected)


def test_shared_memory_grows_to_the_larger_buffer():
    @T.prim_func
    def before(a: T.Buffer((16,), "float32"), d: T.Buffer((16,), "float32")):
        b = T.decl_buffer((8,))
        for i in range(8):
            b[i] = a[i] + T.float32(1)
        for i in range(8):
            d[i] = b[7 - i]
        c = T.decl_buffer((16,))
        for i in range(16):
            c[i] = a[i] * T.float32(2)
        for i in range(16):
            d[i] = d[i] + c[15 - i]

    @T.prim_func
    def expected(a: T.Buffer((16,), "float32"), d: T.Buffer((16,), "float32")):
        b = T.allocate([16], "float32", "global")
        b_1 = T.decl_buffer((8,), data=b)
        for i in range(8):
            b_1[i] = a[i] + T.float32(1)
        for i in range(8):
            d[i] = b_1[7 - i]
        c = T.decl_buffer((16,), data=b)
        for i in range(16):
            c[i] = a[i] * T.float32(2)
        for i in range(16):
            d[i] = d[i] + c[15 - i]

    check(before, expected)


def test_buffers_alive_together_or_of_other_dtypes_keep_their_own_memory():
    @T.prim_func
    def before(a: T.Buffer((16,), "float32"), d: T.Buffer((16,), "float32")):
        b = T.decl_buffer((16,))
        c = T.decl_buffer((16,))
        for i in range(16):
            b[i] = a[i]
            c[i] = a[15 - i]
        for i in range(16):
            d[i] = b[i] + c[i]
        n = T.decl_buffer((16,), "int32")
        for i in range(16):
            n[i] = T.Cast("int32", d[i] * T.float32(4))
        for i in range(16):
            d[i] = T.Cast("float32", n[i])

    @T.prim_func
    def expected(a: T.Buffer((16,), "float32"), d: T.Buffer((16,), "float32")):
        b = T.decl_buffer((16,))
        c = T.decl_buffer((16,))
        n = T.decl_buffer((16,), "int32")
        for i in range(16):
            b[i] = a[i]
            c[i] = a[15 - i]
        for i in range(16):
            d[i] = b[i] + c[i]
        for i in range(16):
            n[i] = T.Cast("int32", d[i] * T.float32(4))
        for i in range(16):
            d[i] = T.Cast("float32", n[i])

    check(before, expected)


def test_allocations_move_to_the_top_of_the_function_or_of_their_parallel_loop():
    # a serial loop's buffer is allocated once; a T.parallel loop's stays per iteration;
    # "local" buffers (registers) are hoisted but never shared
    @T.prim_func
    def before(a: T.Buffer((4, 16), "float32"), d: T.Buffer((4, 16), "float32")):
        for j in T.parallel(4):
            p = T.decl_buffer((16,))
            for i in range(16):
                p[i] = a[j, i]
            for i in range(16):
                d[j, i] = p[15 - i]
        for j in range(4):
            s = T.decl_buffer((16,))
            loc = T.decl_buffer((16,), scope="local")
            for i in range(16):
                s[i] = d[j, i]
                loc[i] = a[j, i]
            for i in range(16):
                d[j, i] = s[i] + loc[15 - i]

    @T.prim_func
    def expected(a: T.Buffer((4, 16), "float32"), d: T.Buffer((4, 16), "float32")):
        s = T.decl_buffer((16,))
        loc = T.decl_buffer((16,), scope="local")
        for j in T.parallel(4):
            p = T.decl_buffer((16,))
            for i in range(16):
                p[i] = a[j, i]
            for i in range(16):
                d[j, i] = p[15 - i]
        for j in range(4):
            for i in range(16):
                s[i] = d[j, i]
                loc[i] = a[j, i]
            for i in range(16):
                d[j, i] = s[i] + loc[15 - i]

    check(before, expected)


def test_a_buffer_nothing_uses_disappears():
    @T.prim_func
    def before(a: T.Buffer((16,), "float32"), d: T.Buffer((16,), "float32")):
        unused = T.decl_buffer((16,))
        for i in range(16):
            d[i] = a[i]

    @T.prim_func
    def expected(a: T.Buffer((16,), "float32"), d: T.Buffer((16,), "float32")):
        for i in range(16):
            d[i] = a[i]

    check(before, expected)


def test_a_buffer_kept_across_loop_iterations_is_not_shared_within_the_loop():
    # acc lives through every iteration of k; tmp, allocated inside, may not take its memory
    @T.prim_func
    def before(a: T.Buffer((16,), "float32"), d: T.Buffer((16,), "float32")):
        acc = T.decl_buffer((16,))
        for i in range(16):
            acc[i] = T.float32(0)
        for k in range(4):
            tmp = T.decl_buffer((16,))
            for i in range(16):
                tmp[i] = a[i] * T.Cast("float32", k)
            for i in range(16):
                acc[i] = acc[i] + tmp[i]
        for i in range(16):
            d[i] = acc[i]

    @T.prim_func
    def expected(a: T.Buffer((16,), "float32"), d: T.Buffer((16,), "float32")):
        acc = T.decl_buffer((16,))
        tmp = T.decl_buffer((16,))
        for i in range(16):
            acc[i] = T.float32(0)
        for k in range(4):
            for i in range(16):
                tmp[i] = a[i] * T.Cast("float32", k)
            for i in range(16):
                acc[i] = acc[i] + tmp[i]
        for i in range(16):
            d[i] = acc[i]

    check(before, expected)


def test_what_is_not_a_prim_func_is_refused():
    with pytest.raises(TVMError, match="StorageRewrite expects a tir.PrimFunc, got int"):
        tir.transform.storage_rewrite(3)


def test_buffers_of_a_special_memory_are_packed_into_one_allocation():
    # a tagged scope ("local.L0A": an accelerator's scratchpad) is one block of memory: the
    # buffers alive together sit one after the other, c (int16) from bit 512 = element 32
    @T.prim_func
    def before(a: T.Buffer((16,), "float32"), d: T.Buffer((16,), "float32")):
        b = T.decl_buffer((16,), scope="local.L0A")
        c = T.decl_buffer((8,), "int16", scope="local.L0A")
        for i in range(16):
            b[i] = a[i]
        for i in range(8):
            c[i] = T.Cast("int16", b[i])
        for i in range(16):
            d[i] = b[i] + T.Cast("float32", c[i // 2])

    @T.prim_func
    def expected(a: T.Buffer((16,), "float32"), d: T.Buffer((16,), "float32")):
        b = T.allocate([20], "float32", "local.L0A")
        b_1 = T.decl_buffer((16,), data=b, scope="local.L0A")
        c = T.decl_buffer((8,), "int16", data=b, scope="local.L0A")
        for i in range(16):
            b_1[i] = a[i]
        for i in range(8):
            c[32 + i] = T.Cast("int16", b_1[i])
        for i in range(16):
            d[i] = b_1[i] + T.Cast("float32", c[32 + i // 2])

    after = rewrite(before)
    tvm.ir.assert_structural_equal(after, expected.with_attr("global_symbol", "before"))


def test_ir_builder_allocations_keep_their_scope_and_are_packed():
    # ib.allocate(..., scope=) allocates in that scope, so a tagged one is packed too
    ib = tir.ir_builder.create()
    with ib.for_range(0, 8, name="j") as j:
        a = ib.allocate("float32", 8, name="a", scope="local.L0A")
        a[j] = tir.const(1, "float32")
    with ib.for_range(0, 8, name="j") as j:
        b = ib.allocate("int8", 8, name="b", scope="local.L0A")
        b[j] = a[j].astype("int8")
    after = rewrite(tir.PrimFunc([], ib.get()))

    @T.prim_func(private=True)
    def expected():
        a = T.allocate([10], "float32", "local.L0A")
        a_1 = T.Buffer((8,), data=a, scope="local.L0A")
        for j in range(8):
            a_1[j] = T.float32(1)
        for j in range(8):
            b = T.Buffer((8,), "int8", data=a, scope="local.L0A")
            b[32 + j] = T.Cast("int8", a_1[j])

    tvm.ir.assert_structural_equal(after, expected)
