"""Round-trip corpus for TIR: each program, printed and parsed back, gives the same IR,
and printing what was parsed gives the same text (see tests/script/roundtrip.py).

Every program is built inside a small factory so that one broken program fails only its
own test.
"""

import pytest

from mlckit.script import ir as I  # noqa: E741
from mlckit.script import tir as T
from tests import kernels
from tests.script.roundtrip import assert_roundtrip

PROGRAMS = {}


def program(factory):
    PROGRAMS[factory.__name__] = factory
    return factory


@program
def mm_relu():
    return kernels.mm_relu


@program
def matmul_bias():
    @T.prim_func
    def linear(X: T.Buffer((4, 64), "float32"), W: T.Buffer((32, 64), "float32"),
               b: T.Buffer((32,), "float32"), Z: T.Buffer((4, 32), "float32")):
        Y = T.alloc_buffer((4, 32), "float32")
        for i, j, k in T.grid(4, 32, 64):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
        for i, j in T.grid(4, 32):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = Y[vi, vj] + b[vj]

    return linear


@program
def relu():
    @T.prim_func
    def relu(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
        for i in range(1024):
            with T.block("B"):
                vi = T.axis.spatial(1024, i)
                B[vi] = T.max(A[vi], T.float32(0))

    return relu


@program
def softmax():
    @T.prim_func
    def softmax(A: T.Buffer((8, 128), "float32"), B: T.Buffer((8, 128), "float32")):
        amax = T.alloc_buffer((8,))
        expv = T.alloc_buffer((8, 128))
        esum = T.alloc_buffer((8,))
        for i, k in T.grid(8, 128):
            with T.block("max"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    amax[vi] = T.min_value("float32")
                amax[vi] = T.max(amax[vi], A[vi, vk])
        for i, j in T.grid(8, 128):
            with T.block("exp"):
                vi, vj = T.axis.remap("SS", [i, j])
                expv[vi, vj] = T.exp(A[vi, vj] - amax[vi])
        for i, k in T.grid(8, 128):
            with T.block("sum"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    esum[vi] = T.float32(0)
                esum[vi] = esum[vi] + expv[vi, vk]
        for i, j in T.grid(8, 128):
            with T.block("norm"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = expv[vi, vj] / esum[vi]

    return softmax


@program
def conv2d_nchw():
    @T.prim_func
    def conv2d(X: T.Buffer((1, 3, 10, 10), "float32"), K: T.Buffer((8, 3, 3, 3), "float32"),
               Y: T.Buffer((1, 8, 8, 8), "float32")):
        for n, co, h, w, ci, kh, kw in T.grid(1, 8, 8, 8, 3, 3, 3):
            with T.block("conv"):
                vn, vco, vh, vw, vci, vkh, vkw = T.axis.remap("SSSSRRR",
                                                              [n, co, h, w, ci, kh, kw])
                with T.init():
                    Y[vn, vco, vh, vw] = T.float32(0)
                Y[vn, vco, vh, vw] = Y[vn, vco, vh, vw] + \
                    X[vn, vci, vh + vkh, vw + vkw] * K[vco, vci, vkh, vkw]

    return conv2d


@program
def symbolic_shape():
    @T.prim_func
    def add(a: T.handle, b: T.handle, c: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n, 128), "float32")
        B = T.match_buffer(b, (n, 128), "float32")
        C = T.match_buffer(c, (n, 128), "float32")
        for i, j in T.grid(n, T.int64(128)):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] + B[vi, vj]

    return add


@program
def split_with_where():
    @T.prim_func
    def split(A: T.Buffer((100,), "float32"), B: T.Buffer((100,), "float32")):
        for i0, i1 in T.grid(4, 32):
            with T.block("B"):
                vi = T.axis.spatial(100, i0 * 32 + i1)
                T.where(i0 * 32 + i1 < 100)
                B[vi] = A[vi] * T.float32(2)

    return split


@program
def axis_expressions():
    @T.prim_func
    def tiled(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
              C: T.Buffer((64,), "float32")):
        for i0, j, i1, k in T.grid(4, 64, 16, 64):
            with T.block("C"):
                vi = T.axis.spatial(64, i0 * 16 + i1)
                vj = T.axis.spatial(64, j)
                vk = T.axis.reduce(64, k)
                with T.init():
                    C[vi] = T.float32(0)
                C[vi] = C[vi] + A[vi, vk] * B[vk, vj]

    return tiled


@program
def thread_binding():
    @T.prim_func
    def gpu_add(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
        for bx in T.thread_binding(8, thread="blockIdx.x"):
            for tx in T.thread_binding(128, thread="threadIdx.x"):
                with T.block("B"):
                    vi = T.axis.spatial(1024, bx * 128 + tx)
                    B[vi] = A[vi] + T.float32(1)

    return gpu_add


@program
def loop_kinds():
    @T.prim_func
    def kinds(A: T.Buffer((16, 8, 4), "float32"), B: T.Buffer((16, 8, 4), "float32")):
        for i in T.parallel(16):
            for j in T.unroll(8):
                for k in T.vectorized(4):
                    with T.block("B"):
                        vi, vj, vk = T.axis.remap("SSS", [i, j, k])
                        B[vi, vj, vk] = A[vi, vj, vk]

    return kinds


@program
def if_else():
    @T.prim_func
    def clip(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for i in range(64):
            with T.block("B"):
                vi = T.axis.spatial(64, i)
                if A[vi] > T.float32(1):
                    B[vi] = T.float32(1)
                else:
                    B[vi] = A[vi]

    return clip


@program
def if_then_else():
    @T.prim_func
    def pad(A: T.Buffer((30,), "float32"), B: T.Buffer((32,), "float32")):
        for i in range(32):
            with T.block("B"):
                vi = T.axis.spatial(32, i)
                B[vi] = T.if_then_else(1 <= vi and vi < 31, A[vi - 1], T.float32(0))

    return pad


@program
def select():
    @T.prim_func
    def sel(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = T.Select(A[vi] < T.float32(0), T.float32(0), A[vi])

    return sel


@program
def casts():
    @T.prim_func
    def cast(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "float32")):
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = T.Cast("float32", A[vi]) * T.float32(0.5)

    return cast


@program
def int64_loops():
    @T.prim_func
    def copy64(A: T.Buffer((T.int64(32), T.int64(8)), "float32"),
               B: T.Buffer((T.int64(32), T.int64(8)), "float32")):
        for i, j in T.grid(T.int64(32), T.int64(8)):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj]

    return copy64


@program
def float16():
    @T.prim_func
    def half(A: T.Buffer((32,), "float16"), B: T.Buffer((32,), "float32")):
        for i in range(32):
            with T.block("B"):
                vi = T.axis.spatial(32, i)
                B[vi] = T.Cast("float32", A[vi] * T.float16(2))

    return half


@program
def uint8():
    @T.prim_func
    def quant(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "uint8")):
        for i in range(64):
            with T.block("B"):
                vi = T.axis.spatial(64, i)
                B[vi] = T.Cast("uint8", T.min(T.max(A[vi], T.float32(0)), T.float32(255)))

    return quant


@program
def bool_buffer():
    @T.prim_func
    def mask(A: T.Buffer((64,), "float32"), M: T.Buffer((64,), "bool")):
        for i in range(64):
            with T.block("M"):
                vi = T.axis.spatial(64, i)
                M[vi] = A[vi] > T.float32(0)

    return mask


@program
def floordiv_floormod():
    @T.prim_func
    def reshape(A: T.Buffer((8, 16), "float32"), B: T.Buffer((128,), "float32")):
        for i in range(128):
            with T.block("B"):
                vi = T.axis.spatial(128, i)
                B[vi] = A[vi // 16, vi % 16]

    return reshape


@program
def intrinsics():
    @T.prim_func
    def math(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = T.sqrt(A[vi]) + T.tanh(A[vi]) + T.sigmoid(A[vi]) + T.erf(A[vi]) \
                    + T.log(A[vi]) + T.pow(A[vi], T.float32(2)) + T.exp(A[vi])

    return math


@program
def scoped_allocs():
    @T.prim_func
    def staged(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
        A_shared = T.alloc_buffer((128,), scope="shared")
        A_local = T.alloc_buffer((128,), scope="local")
        for i in range(128):
            with T.block("A_shared"):
                vi = T.axis.spatial(128, i)
                A_shared[vi] = A[vi]
        for i in range(128):
            with T.block("A_local"):
                vi = T.axis.spatial(128, i)
                A_local[vi] = A_shared[vi]
        for i in range(128):
            with T.block("B"):
                vi = T.axis.spatial(128, i)
                B[vi] = A_local[vi]

    return staged


@program
def block_annotations():
    @T.prim_func
    def annotated(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                T.block_attr({"meta_schedule.tiling_structure": "SSRSRS", "pragma_unroll": 16})
                B[vi] = A[vi]

    return annotated


@program
def opaque_block():
    @T.prim_func
    def opaque(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        with T.block("opaque"):
            T.reads(A[0:16])
            T.writes(B[0:16])
            for i in range(16):
                B[i] = A[i]

    return opaque


@program
def let_binding():
    @T.prim_func
    def scaled(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                x: T.float32 = A[vi] * T.float32(2)
                B[vi] = x + x

    return scaled


@program
def evaluate():
    @T.prim_func
    def noop(A: T.Buffer((4,), "float32")):
        T.evaluate(0)

    return noop


@program
def nested_blocks():
    @T.prim_func
    def nested(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
        for i in range(16):
            with T.block("outer"):
                vi = T.axis.spatial(16, i)
                for j in range(16):
                    with T.block("inner"):
                        vj = T.axis.spatial(16, j)
                        B[vi, vj] = A[vi, vj] * T.float32(2)

    return nested


@program
def match_buffer_in_block():
    @T.prim_func
    def tile_copy(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
        for i, j in T.grid(4, 4):
            with T.block("tile"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16])
                T.writes(B[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16])
                sub_a = T.match_buffer(A[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16], (16, 16))
                sub_b = T.match_buffer(B[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16], (16, 16))
                for ii, jj in T.grid(16, 16):
                    sub_b[ii, jj] = sub_a[ii, jj]

    return tile_copy


@program
def explicit_regions():
    @T.prim_func
    def rowsum(A: T.Buffer((16, 32), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                T.reads(A[vi, 0:32])
                T.writes(B[vi])
                B[vi] = T.float32(0)
                for k in range(32):
                    B[vi] = B[vi] + A[vi, k]

    return rowsum


@program
def private_function():
    @T.prim_func(private=True)
    def helper(A: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("A"):
                vi = T.axis.spatial(8, i)
                A[vi] = T.float32(0)

    return helper


@program
def ir_module_two_funcs():
    @I.ir_module
    class Module:
        @T.prim_func
        def add(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"),
                C: T.Buffer((8,), "float32")):
            for i in range(8):
                with T.block("C"):
                    vi = T.axis.spatial(8, i)
                    C[vi] = A[vi] + B[vi]

        @T.prim_func(private=True)
        def scale(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    B[vi] = A[vi] * T.float32(3)

    return Module


@program
def loop_annotations():
    @T.prim_func
    def annotated_loop(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in T.serial(16, annotations={"pragma_auto_unroll_max_step": 16}):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = A[vi]

    return annotated_loop


@program
def relaxed_inner_loop():
    @T.prim_func
    def tile_sum(A: T.Buffer((64,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = T.float32(0)
                for k in range(4):
                    B[vi] = B[vi] + A[vi * 4 + k]

    return tile_sum


@program
def trunc_div_mod():
    @T.prim_func
    def trunc(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = T.truncdiv(A[vi], 3) + T.truncmod(A[vi], 3)

    return trunc


@program
def assert_stmt():
    @T.prim_func
    def checked(A: T.Buffer((16,), "float32"), n: T.int32):
        assert n > 0, "n must be positive"
        for i in range(16):
            A[i] = T.Cast("float32", n)

    return checked


@program
def scalar_param():
    @T.prim_func
    def fill(A: T.Buffer((16,), "float32"), value: T.float32):
        for i in range(16):
            with T.block("A"):
                vi = T.axis.spatial(16, i)
                A[vi] = value

    return fill


@program
def transpose():
    @T.prim_func
    def transpose(A: T.Buffer((16, 32), "float32"), B: T.Buffer((32, 16), "float32")):
        for i, j in T.grid(32, 16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vj, vi]

    return transpose


@program
def batch_matmul():
    @T.prim_func
    def bmm(A: T.Buffer((2, 16, 8), "float32"), B: T.Buffer((2, 8, 16), "float32"),
            C: T.Buffer((2, 16, 16), "float32")):
        for b, i, j, k in T.grid(2, 16, 16, 8):
            with T.block("C"):
                vb, vi, vj, vk = T.axis.remap("SSSR", [b, i, j, k])
                with T.init():
                    C[vb, vi, vj] = T.float32(0)
                C[vb, vi, vj] = C[vb, vi, vj] + A[vb, vi, vk] * B[vb, vk, vj]

    return bmm


@program
def scan_and_opaque_axes():
    @T.prim_func
    def cumsum(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(16):
            with T.block("B"):
                vi = T.axis.scan(16, i)
                if vi == 0:
                    B[vi] = A[vi]
                else:
                    B[vi] = B[vi - 1] + A[vi]

    return cumsum


@program
def logical_ops():
    @T.prim_func
    def band(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
        for i in range(32):
            with T.block("B"):
                vi = T.axis.spatial(32, i)
                B[vi] = T.if_then_else(vi >= 8 and vi < 24 or not vi != 0, A[vi], T.float32(0))

    return band


@program
def layer_norm_stats():
    @T.prim_func
    def stats(A: T.Buffer((4, 64), "float32"), mean: T.Buffer((4,), "float32"),
              sqsum: T.Buffer((4,), "float32")):
        for i, k in T.grid(4, 64):
            with T.block("stats"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    mean[vi] = T.float32(0)
                    sqsum[vi] = T.float32(0)
                mean[vi] = mean[vi] + A[vi, vk] * T.float32(0.015625)
                sqsum[vi] = sqsum[vi] + A[vi, vk] * A[vi, vk]

    return stats


@program
def explicit_root_block():
    @T.prim_func
    def rooted(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        with T.block("root"):
            T.reads()
            T.writes()
            tmp = T.alloc_buffer((8,))
            for i in range(8):
                with T.block("tmp"):
                    vi = T.axis.spatial(8, i)
                    tmp[vi] = A[vi] + T.float32(1)
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    B[vi] = tmp[vi]

    return rooted


@program
def low_level_statements():
    @T.prim_func
    def low(A: T.Buffer((16,), "float32")):
        with T.launch_thread("threadIdx.x", 16) as tx:
            A[tx] = T.float32(1)
        i: T.int32 = 0
        while i < 4:
            A[i] = A[i] + T.float32(1)
        with T.decl_buffer((4,), "float32") as buf:
            buf[0] = A[0]
            A[1] = buf[0]

    return low


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_parses(name):
    assert PROGRAMS[name]() is not None


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_roundtrip(name):
    assert_roundtrip(PROGRAMS[name]())
