"""tensorize and TensorIntrin: match a block against an intrinsic's description, replace it
by the implementation (a C micro-kernel), run it."""

import numpy as np
import pytest

import mlckit
from mlckit import tir
from mlckit.contrib import clang
from mlckit.error import TVMValueError
from mlckit.ir import assert_structural_equal
from mlckit.script import tir as T

from .common import check, expect_error, verify_trace_roundtrip

MM16_C = """
int mm16(float *c, float *a, float *b, int sa, int sb, int sc) {
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j)
      for (int k = 0; k < 16; ++k)
        c[i * sc + j] += a[i * sa + k] * b[j * sb + k];
  return 0;
}
"""


@T.prim_func
def mm16_desc(a: T.handle, b: T.handle, c: T.handle) -> None:
    A = T.match_buffer(a, (16, 16), "float32", offset_factor=16)
    B = T.match_buffer(b, (16, 16), "float32", offset_factor=16)
    C = T.match_buffer(c, (16, 16), "float32", offset_factor=16)
    with T.block("root"):
        T.reads(C[0:16, 0:16], A[0:16, 0:16], B[0:16, 0:16])
        T.writes(C[0:16, 0:16])
        for i, j, k in T.grid(16, 16, 16):
            with T.block(""):
                vii, vjj, vkk = T.axis.remap("SSR", [i, j, k])
                C[vii, vjj] = C[vii, vjj] + A[vii, vkk] * B[vjj, vkk]


@T.prim_func
def mm16_impl(a: T.handle, b: T.handle, c: T.handle) -> None:
    sa = T.int32()
    sb = T.int32()
    sc = T.int32()
    A = T.match_buffer(a, (16, 16), "float32", offset_factor=16, strides=[sa, 1])
    B = T.match_buffer(b, (16, 16), "float32", offset_factor=16, strides=[sb, 1])
    C = T.match_buffer(c, (16, 16), "float32", offset_factor=16, strides=[sc, 1])
    with T.block("root"):
        T.reads(C[0:16, 0:16], A[0:16, 0:16], B[0:16, 0:16])
        T.writes(C[0:16, 0:16])
        T.evaluate(T.call_extern("mm16", C.access_ptr("w"), A.access_ptr("r"),
                                 B.access_ptr("r"), sa, sb, sc, dtype="int32"))


# the description with B read as B[k, j]: a matmul, but not the one the block computes
@T.prim_func
def mm16_nt_desc(a: T.handle, b: T.handle, c: T.handle) -> None:
    A = T.match_buffer(a, (16, 16), "float32", offset_factor=16)
    B = T.match_buffer(b, (16, 16), "float32", offset_factor=16)
    C = T.match_buffer(c, (16, 16), "float32", offset_factor=16)
    with T.block("root"):
        T.reads(C[0:16, 0:16], A[0:16, 0:16], B[0:16, 0:16])
        T.writes(C[0:16, 0:16])
        for i, j, k in T.grid(16, 16, 16):
            with T.block(""):
                vii, vjj, vkk = T.axis.remap("SSR", [i, j, k])
                C[vii, vjj] = C[vii, vjj] + A[vii, vkk] * B[vkk, vjj]


tir.TensorIntrin.register("test_mm16", mm16_desc, mm16_impl, override=True)
tir.TensorIntrin.register("test_mm16_nt", mm16_nt_desc, mm16_impl, override=True)


@T.prim_func
def matmul(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
           C: T.Buffer((64, 64), "float32")):
    for i, j, k in T.grid(64, 64, 64):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]


@T.prim_func
def tensorized(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
               C: T.Buffer((64, 64), "float32")):
    for i_0, j_0 in T.grid(4, 4):
        with T.block("C_o_init"):
            vi_o, vj_o = T.axis.remap("SS", [i_0, j_0])
            T.reads()
            T.writes(C[vi_o * 16:vi_o * 16 + 16, vj_o * 16:vj_o * 16 + 16])
            for i_1, j_1 in T.grid(16, 16):
                with T.block("C_init"):
                    vi_i_init, vj_i_init = T.axis.remap("SS", [i_1, j_1])
                    T.reads()
                    T.writes(C[vi_o * 16 + vi_i_init, vj_o * 16 + vj_i_init])
                    C[vi_o * 16 + vi_i_init, vj_o * 16 + vj_i_init] = T.float32(0.0)
        for k_0 in range(4):
            with T.block("C_o_update"):
                vi_o, vj_o, vk_o = T.axis.remap("SSR", [i_0, j_0, k_0])
                T.reads(C[vi_o * 16:vi_o * 16 + 16, vj_o * 16:vj_o * 16 + 16],
                        A[vi_o * 16:vi_o * 16 + 16, vk_o * 16:vk_o * 16 + 16],
                        B[vj_o * 16:vj_o * 16 + 16, vk_o * 16:vk_o * 16 + 16])
                T.writes(C[vi_o * 16:vi_o * 16 + 16, vj_o * 16:vj_o * 16 + 16])
                A_1 = T.match_buffer(A[vi_o * 16:vi_o * 16 + 16, vk_o * 16:vk_o * 16 + 16],
                                     (16, 16), strides=("sa", 1), offset_factor=16)
                B_1 = T.match_buffer(B[vj_o * 16:vj_o * 16 + 16, vk_o * 16:vk_o * 16 + 16],
                                     (16, 16), strides=("sb", 1), offset_factor=16)
                C_1 = T.match_buffer(C[vi_o * 16:vi_o * 16 + 16, vj_o * 16:vj_o * 16 + 16],
                                     (16, 16), strides=("sc", 1), offset_factor=16)
                T.call_extern("int32", "mm16",
                              T.tvm_access_ptr(T.type_annotation("float32"), C_1.data,
                                               C_1.elem_offset, C_1.strides[0] * 16, 2),
                              T.tvm_access_ptr(T.type_annotation("float32"), A_1.data,
                                               A_1.elem_offset, A_1.strides[0] * 16, 1),
                              T.tvm_access_ptr(T.type_annotation("float32"), B_1.data,
                                               B_1.elem_offset, B_1.strides[0] * 16, 1),
                              A_1.strides[0], B_1.strides[0], C_1.strides[0])


def tiled_schedule():
    """The course's steps: 16x16x16 tiles, the inner tile blockized."""
    sch = tir.Schedule(matmul)
    i, j, k = sch.get_loops("C")
    i, ii = sch.split(i, factors=[None, 16])
    j, ji = sch.split(j, factors=[None, 16])
    k, ki = sch.split(k, factors=[None, 16])
    sch.reorder(i, j, k, ii, ji, ki)
    return sch, (i, j, k, ii)


def tensorized_schedule():
    sch, (i, j, k, ii) = tiled_schedule()
    block = sch.blockize(ii)
    sch.decompose_reduction(block, k)
    sch.tensorize(block, "test_mm16")
    return sch, i


def test_tensorize_replaces_the_block_body_by_the_implementation():
    sch, _ = tensorized_schedule()
    check(sch, tensorized)


def test_tensorize_a_loop_blockizes_it_first():
    sch, (i, j, k, ii) = tiled_schedule()
    sch.decompose_reduction("C", k)
    sch.tensorize(ii, "test_mm16")
    update = sch.get(sch.get_block("C_update_o"))
    assert [m.buffer.name for m in update.match_buffers] == ["A", "B", "C"]
    call = update.body.value
    assert call.op.name == "tir.call_extern" and call.args[0].value == "mm16"
    verify_trace_roundtrip(sch, matmul)


def test_tensorized_module_prints_and_parses_back():
    sch, _ = tensorized_schedule()
    text = sch.mod.script()
    assert 'T.call_extern("int32", "mm16", T.tvm_access_ptr(T.type_annotation("float32"), ' \
           'C_1.data, C_1.elem_offset, C_1.strides[0] * 16, 2)' in text
    assert_structural_equal(mlckit.script.from_source(text), sch.mod)


def test_tensorize_trace_replays():
    sch, _ = tensorized_schedule()
    assert 'sch.tensorize(block_or_loop=b10, tensor_intrin="test_mm16"' in str(sch.trace)
    verify_trace_roundtrip(sch, matmul)


@pytest.mark.parametrize("target", ["llvm", "lnumpy"])
def test_tensorized_matmul_with_c_kernel_equals_numpy(target):
    sch, i = tensorized_schedule()
    sch.annotate(i, "pragma_import_llvm", clang.create_llvm(MM16_C))
    rng = np.random.default_rng(0)
    a = rng.random((64, 64), dtype=np.float32)
    b = rng.random((64, 64), dtype=np.float32)
    c = np.zeros((64, 64), dtype=np.float32)
    mlckit.build(sch.mod, target=target)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b.T, rtol=1e-5)


def test_mismatch_names_the_first_difference_and_leaves_the_schedule_unchanged():
    sch, (i, j, k, ii) = tiled_schedule()
    block = sch.blockize(ii)
    sch.decompose_reduction(block, k)
    err = expect_error(sch, lambda: sch.tensorize(block, "test_mm16_nt"),
                       "block `C_o_update` does not match the description of tensor intrinsic "
                       "'test_mm16_nt'", "at body.block.body.body.body.body.block.reads[2]"
                       ".region[0].min: the region starts at vj_o * 16 + vj_i (relative to "
                       "the outer region's start vj_o * 16), the description's at vkk",
                       "block:       B[vj_o * 16 + vj_i, vk_o * 16 + vk_i]",
                       "description: B[vkk, vjj]")
    assert err.primitive == "tensorize"


def test_mismatch_on_a_loop_does_not_blockize_it():
    sch, (i, j, k, ii) = tiled_schedule()
    sch.decompose_reduction("C", k)
    expect_error(sch, lambda: sch.tensorize(ii, "test_mm16_nt"), "does not match")
    assert sch.get_block("C_update")  # still the scalar block, no "C_update_o"


def test_a_block_with_other_extents_does_not_match():
    sch = tir.Schedule(matmul)
    i, j, k = sch.get_loops("C")
    i, ii = sch.split(i, factors=[None, 8])
    sch.reorder(i, j, k, ii)
    block = sch.blockize(ii)
    expect_error(sch, lambda: sch.tensorize(block, "test_mm16"), "does not match",
                 "the extent")


def test_unknown_intrinsic_is_an_error():
    sch, (i, j, k, ii) = tiled_schedule()
    with pytest.raises(TVMValueError, match="no TensorIntrin is registered as 'no_such'"):
        sch.tensorize(ii, "no_such")


def test_tensor_intrin_lookup():
    assert tir.TensorIntrin.get("test_mm16").impl is mm16_impl
    assert tir.TensorIntrin.get("no_such", allow_missing=True) is None


def test_registering_a_name_twice_needs_override():
    with pytest.raises(TVMValueError, match="already registered; pass override=True"):
        tir.TensorIntrin.register("test_mm16", mm16_desc, mm16_impl)


def test_intrinsic_with_different_parameters_is_rejected():
    @T.prim_func
    def two(a: T.handle, c: T.handle) -> None:
        A = T.match_buffer(a, (16, 16), "float32")
        C = T.match_buffer(c, (16, 16), "float32")
        with T.block("root"):
            T.reads(A[0:16, 0:16])
            T.writes(C[0:16, 0:16])
            for i, j in T.grid(16, 16):
                with T.block(""):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = A[vi, vj]

    with pytest.raises(TVMValueError, match="the description has 3 buffer parameters, the "
                                            "implementation 2"):
        tir.TensorIntrin(mm16_desc, two)


@T.prim_func
def two_matmuls(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"),
                C: T.Buffer((32, 32), "float32"), D: T.Buffer((32, 32), "float32")):
    for i, j, k in T.grid(32, 32, 32):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
    for i, j, k in T.grid(32, 32, 32):
        with T.block("D"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                D[vi, vj] = T.float32(0)
            D[vi, vj] = D[vi, vj] + B[vi, vk] * A[vj, vk]


def test_each_tensorized_block_binds_its_own_buffers():
    sch = tir.Schedule(two_matmuls, debug_mask="all")  # well-formed after every step
    for name in ("C", "D"):
        i, j, k = sch.get_loops(name)
        i, ii = sch.split(i, factors=[None, 16])
        j, ji = sch.split(j, factors=[None, 16])
        k, ki = sch.split(k, factors=[None, 16])
        sch.reorder(i, j, k, ii, ji, ki)
        sch.decompose_reduction(name, k)
        sch.tensorize(ii, "test_mm16")
        sch.annotate(i, "pragma_import_llvm", clang.create_llvm(MM16_C))
    c_block, d_block = sch.get(sch.get_block("C_update_o")), sch.get(sch.get_block("D_update_o"))
    assert c_block.match_buffers[0].buffer is not d_block.match_buffers[0].buffer
    rng = np.random.default_rng(1)
    a, b = rng.random((32, 32), dtype=np.float32), rng.random((32, 32), dtype=np.float32)
    c, d = np.zeros((32, 32), np.float32), np.zeros((32, 32), np.float32)
    mlckit.build(sch.mod, target="llvm")["main"](a, b, c, d)
    np.testing.assert_allclose(c, a @ b.T, rtol=1e-5)
    np.testing.assert_allclose(d, b @ a.T, rtol=1e-5)
    assert_structural_equal(mlckit.script.from_source(sch.mod.script()), sch.mod)


# the MLC course's intrinsic: tiles in special memory scopes, the kernel in C++ (extern "C")
@T.prim_func
def tmm16_desc(a: T.handle, b: T.handle, c: T.handle) -> None:
    A = T.match_buffer(a, (16, 16), "float32", offset_factor=16, scope="global.A_reg")
    B = T.match_buffer(b, (16, 16), "float32", offset_factor=16, scope="global.B_reg")
    C = T.match_buffer(c, (16, 16), "float32", offset_factor=16, scope="global.accumulator")
    with T.block("root"):
        T.reads(C[0:16, 0:16], A[0:16, 0:16], B[0:16, 0:16])
        T.writes(C[0:16, 0:16])
        for i, j, k in T.grid(16, 16, 16):
            with T.block(""):
                vii, vjj, vkk = T.axis.remap("SSR", [i, j, k])
                C[vii, vjj] = C[vii, vjj] + A[vii, vkk] * B[vjj, vkk]


@T.prim_func
def tmm16_impl(a: T.handle, b: T.handle, c: T.handle) -> None:
    sa = T.int32()
    sb = T.int32()
    sc = T.int32()
    A = T.match_buffer(a, (16, 16), "float32", offset_factor=16, strides=[sa, 1],
                       scope="global.A_reg")
    B = T.match_buffer(b, (16, 16), "float32", offset_factor=16, strides=[sb, 1],
                       scope="global.B_reg")
    C = T.match_buffer(c, (16, 16), "float32", offset_factor=16, strides=[sc, 1],
                       scope="global.accumulator")
    with T.block("root"):
        T.reads(C[0:16, 0:16], A[0:16, 0:16], B[0:16, 0:16])
        T.writes(C[0:16, 0:16])
        T.evaluate(T.call_extern("tmm16", C.access_ptr("w"), A.access_ptr("r"),
                                 B.access_ptr("r"), sa, sb, sc, dtype="int32"))


TMM16_CC = """
extern "C" int tmm16(float *cc, float *aa, float *bb, int stride_a, int stride_b, int stride_c) {
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j)
      for (int k = 0; k < 16; ++k)
        cc[i * stride_c + j] += aa[i * stride_a + k] * bb[j * stride_b + k];
  return 0;
}
"""

tir.TensorIntrin.register("test_tmm16_scoped", tmm16_desc, tmm16_impl, override=True)


def test_course_flow_with_memory_scopes_and_a_cpp_kernel():
    sch, (i, j, k, ii) = tiled_schedule()
    block = sch.blockize(ii)
    a_reg = sch.cache_read(block, 0, storage_scope="global.A_reg")
    b_reg = sch.cache_read(block, 1, storage_scope="global.B_reg")
    sch.compute_at(a_reg, k)
    sch.compute_at(b_reg, k)
    write_back = sch.cache_write(block, 0, storage_scope="global.accumulator")
    sch.reverse_compute_at(write_back, j)
    # the plain description does not match: the tiles are in other memory scopes
    expect_error(sch, lambda: sch.tensorize(block, "test_mm16"),
                 "buffer `C_global.accumulator` is in scope 'global.accumulator', the "
                 "description's `C` in scope 'global'")
    sch.decompose_reduction(block, k)
    sch.tensorize(block, "test_tmm16_scoped")
    sch.annotate(i, "pragma_import_llvm", clang.create_llvm(TMM16_CC))
    rng = np.random.default_rng(2)
    a = rng.random((64, 64), dtype=np.float32)
    b = rng.random((64, 64), dtype=np.float32)
    for target in ("llvm", "lnumpy"):
        c = np.zeros((64, 64), dtype=np.float32)
        mlckit.build(sch.mod, target=target)["main"](a, b, c)
        np.testing.assert_allclose(c, a @ b.T, rtol=1e-5)
