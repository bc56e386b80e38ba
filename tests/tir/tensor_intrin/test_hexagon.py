"""tir.tensor_intrin.hexagon: vrmpy registered by TVM's name; its description is the loop
nest TVM describes, and a kernel tensorized with it computes what NumPy does."""

from __future__ import annotations

import numpy as np

import mlckit as tvm
from mlckit import tir
from mlckit.backend import lnumpy
from mlckit.script import tir as T
from mlckit.tir.tensor_intrin.hexagon import VRMPY_u8u8i32_INTRIN


def test_vrmpy_is_registered_by_tvms_name_with_its_loop_nest():
    @T.prim_func
    def desc(a: T.handle, b: T.handle, c: T.handle):
        A = T.match_buffer(a, (4,), "uint8", offset_factor=1)
        B = T.match_buffer(b, (32, 4), "uint8", offset_factor=1)
        C = T.match_buffer(c, (32,), "int32", offset_factor=1)
        with T.block("root"):
            T.reads(C[0:32], A[0:4], B[0:32, 0:4])
            T.writes(C[0:32])
            for i, k in T.grid(32, 4):
                with T.block("update"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    C[vi] = C[vi] + T.Cast("int32", A[vk]) * T.Cast("int32", B[vi, vk])

    assert VRMPY_u8u8i32_INTRIN == "dot_32x4_u8u8i32_vrmpy"
    intrin = tir.TensorIntrin.get(VRMPY_u8u8i32_INTRIN)
    tvm.ir.assert_structural_equal(intrin.desc, desc.replace(attrs={}))


def test_a_kernel_tensorized_with_vrmpy_computes_the_same():
    @T.prim_func
    def mv(A: T.Buffer((4,), "uint8"), B: T.Buffer((32, 4), "uint8"),
           C: T.Buffer((32,), "int32")):
        for i, k in T.grid(32, 4):
            with T.block("update"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    C[vi] = 0
                C[vi] = C[vi] + T.Cast("int32", A[vk]) * T.Cast("int32", B[vi, vk])

    sch = tir.Schedule(mv)
    block = sch.get_block("update")
    sch.decompose_reduction(block, sch.get_loops(block)[0])
    sch.tensorize(sch.get_loops(block)[0], VRMPY_u8u8i32_INTRIN)
    rng = np.random.default_rng(0)
    a = rng.integers(0, 256, 4).astype("uint8")
    b = rng.integers(0, 256, (32, 4)).astype("uint8")
    c = np.zeros(32, "int32")
    lnumpy.build(sch.mod["main"])(a, b, c)
    np.testing.assert_array_equal(c, b.astype("int32") @ a.astype("int32"))
