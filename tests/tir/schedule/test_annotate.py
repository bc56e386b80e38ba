"""annotate and unannotate."""

from mlckit import tir
from mlckit.script import tir as T

from .common import check, expect_error, verify_numeric, verify_trace_roundtrip
from .workloads import matmul


@T.prim_func
def matmul_annotated(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                     C: T.Buffer((16, 16), "float32")):
    for i in T.serial(16, annotations={"pragma_auto_unroll_max_step": 16}):
        for j, k in T.grid(16, 16):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.block_attr({"meta_schedule.tiling_structure": "SSRSRS"})
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def test_annotate_and_unannotate():
    sch = tir.Schedule(matmul, debug_mask="all")
    block = sch.get_block("C")
    i, _, _ = sch.get_loops(block)
    sch.annotate(i, "pragma_auto_unroll_max_step", 16)
    sch.annotate(block, "meta_schedule.tiling_structure", "SSRSRS")
    sch.annotate(block, "temporary", 1)
    sch.unannotate(block, "temporary")
    check(sch, matmul_annotated)
    verify_numeric(matmul, sch.mod)
    verify_trace_roundtrip(sch, matmul)


def test_unannotate_missing_key():
    sch = tir.Schedule(matmul)
    block = sch.get_block("C")
    expect_error(sch, lambda: sch.unannotate(block, "nothing"), "unannotate",
                 "block `C` has no annotation 'nothing'")


def test_annotate_rejects_a_value_that_cannot_be_printed():
    sch = tir.Schedule(matmul)
    block = sch.get_block("C")
    expect_error(sch, lambda: sch.annotate(block, "weird", object()), "annotate",
                 "a value must be a str, int, float, bool")
