"""VectorizeLoop with scalable vectors (Arm SVE): a loop of extent ``T.vscale() * k`` becomes
vectors of ``T.vscale() * k`` lanes when the target has SVE, as TVM's pass does; without
SVE, or where a scalable vector would be built from a vector, it stops with TVM's errors.
mlckit's backends refuse scalable vectors at build time."""

from __future__ import annotations

import numpy as np
import pytest

import mlckit as tvm
from mlckit.error import InternalError, TVMError
from mlckit.script import tir as T

SVE = tvm.target.Target("llvm -mtriple=aarch64-linux-gnu -mattr=+sve")
X86 = tvm.target.Target("llvm -mtriple=x86_64-linux-gnu")


def vectorize(func, target=SVE):
    with target:
        return tvm.tir.transform.VectorizeLoop()(tvm.IRModule({"main": func}))["main"]


@T.prim_func(private=True)
def add_one(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in T.vectorized(T.vscale() * 4):
        B[i] = A[i] + T.float32(1)


def test_a_vscale_loop_becomes_scalable_vectors_for_an_sve_target():
    @T.prim_func(private=True)
    def expected(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        B[T.Ramp(0, 1, T.vscale() * 4)] = (A[T.Ramp(0, 1, T.vscale() * 4)]
                                           + T.Broadcast(T.float32(1), T.vscale() * 4))

    after = vectorize(add_one)
    tvm.ir.assert_structural_equal(after, expected)
    assert after.body.value.dtype == "float32xvscalex4"


def test_the_function_target_attribute_decides_without_a_with_target():
    func = add_one.with_attr("target", SVE)
    after = tvm.tir.transform.VectorizeLoop()(tvm.IRModule({"main": func}))["main"]
    assert after.body.value.dtype == "float32xvscalex4"


def test_a_target_attribute_around_the_loop_decides_for_its_body():
    @T.prim_func(private=True)
    def before(A: T.Buffer((64,), "float32")):
        with T.attr(SVE, "target", 0):
            for i in T.vectorized(T.vscale() * 4):
                A[i] = T.float32(2)

    @T.prim_func(private=True)
    def expected(A: T.Buffer((64,), "float32")):
        with T.attr(SVE, "target", 0):
            A[T.Ramp(0, 1, T.vscale() * 4)] = T.Broadcast(T.float32(2), T.vscale() * 4)

    tvm.ir.assert_structural_equal(vectorize(before, X86), expected)


def test_a_lane_dependent_condition_makes_a_serial_loop_of_vscale_times_k():
    @T.prim_func(private=True)
    def before(A: T.Buffer((64,), "float32"), n: T.int32):
        for i in T.vectorized(T.vscale() * 4):
            if i < n:
                A[i] = T.float32(2)

    @T.prim_func(private=True)
    def expected(A: T.Buffer((64,), "float32"), n: T.int32):
        for i_s in range(T.vscale() * 4):
            if i_s < n:
                A[i_s] = T.float32(2)

    tvm.ir.assert_structural_equal(vectorize(before), expected)


def test_casts_and_reinterprets_keep_the_vscale_factor():
    @T.prim_func(private=True)
    def before(A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "float32")):
        for i in T.vectorized(T.vscale() * 4):
            B[i] = T.Cast("float32", A[i]) + T.reinterpret("float32", A[i])

    @T.prim_func(private=True)
    def expected(A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "float32")):
        B[T.Ramp(0, 1, T.vscale() * 4)] = (
            T.Cast("float32xvscalex4", A[T.Ramp(0, 1, T.vscale() * 4)])
            + T.reinterpret("float32xvscalex4", A[T.Ramp(0, 1, T.vscale() * 4)]))

    tvm.ir.assert_structural_equal(vectorize(before), expected)


@pytest.mark.parametrize("target, shown", [
    (X86, "llvm -keys=cpu -mtriple=x86_64-linux-gnu"),
    (None, r"\(nullptr\)"),
])
def test_a_vscale_loop_without_sve_is_refused_naming_extent_and_target(target, shown):
    @T.prim_func(private=True)
    def before(A: T.Buffer((64,), "float32")):
        for i in T.vectorized(4 * T.vscale()):
            A[i] = T.float32(2)

    mod = tvm.IRModule({"main": before})
    with pytest.raises(InternalError, match=rf"extent T.vscale\(\) \* 4 for target {shown}"):
        if target is None:
            tvm.tir.transform.VectorizeLoop()(mod)
        else:
            with target:
                tvm.tir.transform.VectorizeLoop()(mod)


def test_a_scalable_vector_of_vectors_is_refused():
    @T.prim_func(private=True)
    def before(A: T.Buffer((64,), "float32")):
        for j in T.vectorized(T.vscale() * 4):
            A[j * 4:j * 4 + 4] = T.Broadcast(T.float32(1), 4)

    with pytest.raises(InternalError, match="Creating scalable vectors from existing vectors"):
        vectorize(before)


def test_vectorizing_over_a_scalable_vector_is_refused():
    @T.prim_func(private=True)
    def before(A: T.Buffer((64,), "float32")):
        for j in T.vectorized(4):
            A[j * T.vscale() * 4:j * T.vscale() * 4 + T.vscale() * 4] = T.Broadcast(
                T.float32(1), T.vscale() * 4)

    with pytest.raises(InternalError, match="Vectorizing over existing scalable vectors"):
        vectorize(before)


def test_a_buffer_of_scalable_elements_is_refused():
    @T.prim_func(private=True)
    def before(A: T.Buffer((8,), "float32xvscalex4")):
        for j in T.vectorized(4):
            A[j] = T.Broadcast(T.float32(1), T.vscale() * 4)

    with pytest.raises(InternalError, match="scalable buffer elements"):
        vectorize(before)


def test_building_scalable_vectors_is_refused_with_the_reason():
    with pytest.raises(TVMError, match="scalable vectors.*fixed number of lanes"):
        tvm.build(vectorize(add_one), target="llvm")


def test_the_same_loop_with_a_fixed_extent_still_builds_and_computes():
    @T.prim_func(private=True)
    def fixed(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for i in T.vectorized(4):
            B[i] = A[i] + T.float32(1)

    a = np.arange(64, dtype="float32")
    b = np.zeros(64, "float32")
    tvm.build(vectorize(fixed, X86), target="llvm")(a, b)
    np.testing.assert_array_equal(b[:4], a[:4] + 1)


def test_a_pointer_of_vector_elements_from_the_ir_builder_vectorizes():
    # ib.pointer("float32x4"): a one-element buffer parameter; storing a float32x4 constant
    # in each of 4 lanes stores 16 floats through one ramp
    ib = tvm.tir.ir_builder.create()
    A = ib.pointer("float32x4", name="A")
    with ib.for_range(0, 4, kind="vectorize") as j:
        A[j] = tvm.tir.const(1, A.dtype)
    func = tvm.tir.PrimFunc([A], ib.get())
    store = vectorize(func, X86).body
    assert str(store.indices[0]) == "T.Ramp(0, 1, 4)"
    assert str(store.value) == "T.Broadcast(T.float32(1.0), 16)"
