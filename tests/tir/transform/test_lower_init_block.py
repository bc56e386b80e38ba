"""LowerInitBlock: T.init() becomes `if <reduction vars at their start>:` (checked against
TVM 0.27's output for the course's mm_relu)."""

from __future__ import annotations

import mlckit as tvm
from mlckit.script import tir as T

from ._mm import check_numbers, plain, scheduled


@T.prim_func
def expected(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
             C: T.Buffer((128, 128), "float32")):
    T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
    Y = T.alloc_buffer((128, 128))
    for i, j, k in T.grid(128, 128, 128):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(Y[vi, vj])
            if vk == 0:
                Y[vi, vj] = T.float32(0.0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(128, 128):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(Y[vi, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = T.max(Y[vi, vj], T.float32(0.0))


def test_init_becomes_a_conditional_at_the_first_reduction_step():
    after = tvm.tir.transform.LowerInitBlock()(plain())
    tvm.ir.assert_structural_equal(after["mm_relu"], expected)


def test_lowered_function_still_computes_mm_relu():
    check_numbers(tvm.tir.transform.LowerInitBlock()(plain())["mm_relu"])


def test_two_reduction_axes_are_all_tested():
    @T.prim_func
    def total(a: T.Buffer((4, 4), "float32"), s: T.Buffer((1,), "float32")):
        T.func_attr({"global_symbol": "total"})
        for k, l in T.grid(4, 4):
            with T.block("S"):
                vk, vl = T.axis.remap("RR", [k, l])
                with T.init():
                    s[0] = T.float32(0)
                s[0] = s[0] + a[vk, vl]

    @T.prim_func
    def want(a: T.Buffer((4, 4), "float32"), s: T.Buffer((1,), "float32")):
        T.func_attr({"global_symbol": "total"})
        for k, l in T.grid(4, 4):
            with T.block("S"):
                vk, vl = T.axis.remap("RR", [k, l])
                T.reads(a[vk, vl])
                T.writes(s[0])
                if vk == 0 and vl == 0:
                    s[0] = T.float32(0)
                s[0] = s[0] + a[vk, vl]

    after = tvm.tir.transform.LowerInitBlock()(tvm.IRModule({"main": total}))
    tvm.ir.assert_structural_equal(after["main"], want)


def test_a_module_without_init_is_returned_unchanged():
    mod = scheduled()  # decompose_reduction has already split the init out
    assert tvm.tirx.transform.LowerInitBlock()(mod)["mm_relu"] is mod["mm_relu"]


def test_each_pass_has_tvm_signature():
    mod = plain()
    for name in ["LowerInitBlock", "ConvertBlocksToOpaque", "CompactBufferAllocation",
                 "LowerOpaqueBlock"]:
        p = getattr(tvm.tir.transform, name)()
        assert isinstance(p, tvm.transform.Pass) and p.info.name == name
        mod = p(mod)
        assert isinstance(mod, tvm.IRModule)


def test_a_block_reading_through_a_match_buffer_reads_only_the_accessed_source_elements():
    # the regions TVMScript completes are those TVM detects: AA[j, k] of the view
    # AA = A[i, 0:8, 0:8] is A[i, j, k], not the whole view
    @T.prim_func
    def total(a: T.Buffer((4, 8, 8), "float32"), b: T.Buffer((4,), "float32")):
        T.func_attr({"global_symbol": "total"})
        for i0, j0, k0 in T.grid(4, 8, 8):
            with T.block("S"):
                i, j, k = T.axis.remap("SRR", [i0, j0, k0])
                BB = T.match_buffer(b[i], ())
                AA = T.match_buffer(a[i, 0:8, 0:8], (8, 8))
                with T.init():
                    BB[()] = T.float32(0)
                BB[()] += AA[j, k]

    @T.prim_func
    def want(a: T.Buffer((4, 8, 8), "float32"), b: T.Buffer((4,), "float32")):
        T.func_attr({"global_symbol": "total"})
        for i0, j0, k0 in T.grid(4, 8, 8):
            with T.block("S"):
                i, j, k = T.axis.remap("SRR", [i0, j0, k0])
                T.reads(a[i, j, k])
                T.writes(b[i])
                BB = T.match_buffer(b[i], ())
                AA = T.match_buffer(a[i, 0:8, 0:8], (8, 8))
                if j == 0 and k == 0:
                    BB[()] = T.float32(0)
                BB[()] = BB[()] + AA[j, k]

    after = tvm.tir.transform.LowerInitBlock()(tvm.IRModule({"main": total}))
    tvm.ir.assert_structural_equal(after["main"], want)
