"""The schedules of the MLC course run as in the course."""

from mlckit import tir
from mlckit.script import ir as I
from mlckit.script import tir as T

from .common import check, verify_numeric, verify_trace_roundtrip
from .workloads import MMRelu


@I.ir_module
class MMReluScheduled:
    @T.prim_func
    def mm_relu(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
                C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
        Y = T.alloc_buffer((128, 128))
        for i, j_0 in T.grid(128, 32):
            for j_1_init in range(4):
                with T.block("Y_init"):
                    vi = T.axis.spatial(128, i)
                    vj = T.axis.spatial(128, j_0 * 4 + j_1_init)
                    T.reads()
                    T.writes(Y[vi, vj])
                    Y[vi, vj] = T.float32(0)
            for k, j_1 in T.grid(128, 4):
                with T.block("Y_update"):
                    vi = T.axis.spatial(128, i)
                    vj = T.axis.spatial(128, j_0 * 4 + j_1)
                    vk = T.axis.reduce(128, k)
                    T.reads(Y[vi, vj], A[vi, vk], B[vk, vj])
                    T.writes(Y[vi, vj])
                    Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
            for ax0 in range(4):
                with T.block("C"):
                    vi = T.axis.spatial(128, i)
                    vj = T.axis.spatial(128, j_0 * 4 + ax0)
                    T.reads(Y[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = T.max(Y[vi, vj], T.float32(0))


@I.ir_module
class MatmulModule:
    @T.prim_func
    def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
             C: T.Buffer((64, 64), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(64, 64, 64):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = 0.0
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def test_mm_relu_chapter_schedule():
    sch = tir.Schedule(MMRelu, debug_mask="all")
    block_Y = sch.get_block("Y", func_name="mm_relu")
    i, j, k = sch.get_loops(block_Y)
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
    block_C = sch.get_block("C", "mm_relu")
    sch.reverse_compute_at(block_C, j0)
    sch.decompose_reduction(block_Y, k)
    check(sch, MMReluScheduled)
    verify_numeric(MMRelu, sch.mod, "mm_relu", targets=("llvm",))  # 128³: lnumpy takes 12 s
    verify_trace_roundtrip(sch, MMRelu)


def blocking(sch, tile_local_y, tile_local_x, tile_block_y, tile_block_x, tile_k):
    block_C = sch.get_block("C", "main")
    C_local = sch.cache_write(block_C, 0, "local")
    i, j, k = sch.get_loops(block=block_C)
    i0, i1, i2 = sch.split(loop=i, factors=[None, tile_block_y, tile_local_y])
    j0, j1, j2 = sch.split(loop=j, factors=[None, tile_block_x, tile_local_x])
    k0, k1 = sch.split(loop=k, factors=[None, tile_k])
    sch.unroll(k1)
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2)
    sch.reverse_compute_at(C_local, j1)
    sch.decompose_reduction(block_C, k0)
    return sch


def test_blocked_matmul_cache_write_local():
    sch = blocking(tir.Schedule(MatmulModule, debug_mask="all"), 4, 4, 4, 4, 4)
    loops = sch.get_loops(sch.get_block("C_local"))
    assert [sch.get(lp).loop_var.name for lp in loops] == ["i_0", "j_0", "i_1", "j_1", "ax0", "ax1"]
    verify_numeric(MatmulModule, sch.mod)
    verify_trace_roundtrip(sch, MatmulModule)


def test_gpu_shared_memory_schedule_structure():
    sch = tir.Schedule(MatmulModule, debug_mask="all")
    block_C = sch.get_block("C", "main")
    C_local = sch.cache_write(block_C, 0, "local")
    i, j, k = sch.get_loops(block=block_C)
    i0, i1, i2 = sch.split(loop=i, factors=[None, 4, 4])
    j0, j1, j2 = sch.split(loop=j, factors=[None, 4, 4])
    k0, k1 = sch.split(loop=k, factors=[None, 8])
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2)
    sch.reverse_compute_at(C_local, j1)
    sch.bind(i0, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    tx = sch.fuse(i1, j1)
    sch.bind(tx, "threadIdx.x")
    read_cache = sch.cache_read(block=block_C, read_buffer_index=0, storage_scope="shared")
    sch.compute_at(block=read_cache, loop=k0)
    inner = sch.fuse(*sch.get_loops(block=read_cache)[-2:])
    _, tx2, vec = sch.split(loop=inner, factors=[None, 16, 4])
    sch.vectorize(vec)
    sch.bind(tx2, "threadIdx.x")
    # the shared tile covers the whole thread block: 16 rows x 8 columns of A
    assert [sch.get(lp).extent.value for lp in sch.get_loops(read_cache)[-3:]] == [2, 16, 4]
    verify_trace_roundtrip(sch, MatmulModule)
