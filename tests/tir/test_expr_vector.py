"""TIR vectors: Ramp, Broadcast and vector dtypes, built, printed and parsed as TVM 0.27 does
(its printouts checked against /tmp/tvmenv)."""

from __future__ import annotations

import pytest

import mlckit as tvm
from mlckit import tir
from mlckit.error import TVMError
from mlckit.script import from_source
from mlckit.script import tir as T
from mlckit.tir import dtype as dt


def test_a_vector_dtype_has_lanes_and_an_element_type():
    assert dt.check_dtype("float32x4") == "float32x4"
    assert (dt.lanes("float32x4"), dt.lanes("int8x16"), dt.lanes("float32")) == (4, 16, 1)
    assert dt.element_of("float32x4") == "float32" and dt.with_lanes("int32", 8) == "int32x8"
    assert dt.is_float("float32x4") and dt.is_int("int32x4") and dt.bits("float16x8") == 16


@pytest.mark.parametrize("bad", ["float32x1", "floatx4", "handlex4", "float32x"])
def test_an_unknown_vector_dtype_is_refused(bad):
    with pytest.raises(TVMError, match="unknown dtype"):
        dt.check_dtype(bad)


def test_a_scalable_vector_dtype_counts_its_lanes_as_tvm_python_does():
    # T.vscale() * 4 lanes: -4, as TVM's DataType("float32xvscalex4").lanes
    assert dt.check_dtype("float32xvscalex4") == "float32xvscalex4"
    assert dt.lanes("float32xvscalex4") == -4 and dt.is_scalable("int8xvscalex16")
    assert dt.vscale_factor("float32xvscalex4") == 4 and not dt.is_scalable("float32x4")
    assert dt.element_of("float32xvscalex4") == "float32"
    assert dt.with_lanes("float32", -8) == "float32xvscalex8"
    with pytest.raises(TVMError, match="not a scalable vector"):
        dt.vscale_factor("float32x4")


@pytest.mark.parametrize("bad", ["float32xvscalex", "handlexvscalex4", "float32xvscalex0"])
def test_an_unknown_scalable_dtype_is_refused(bad):
    with pytest.raises(TVMError, match="unknown dtype"):
        dt.check_dtype(bad)


def test_the_empty_dtype_is_void_and_uint1_is_a_lane_mask():
    assert dt.check_dtype("") == "void"  # T.call_extern("f", dtype=""): returns nothing
    assert dt.check_dtype("uint1x4") == "uint1x4" and dt.bits("uint1x4") == 1


def test_scalable_ramp_and_broadcast_keep_vscale_times_k_lanes():
    vs = tir.vscale()
    ramp = tir.Ramp(0, 1, 4 * vs)  # stored as T.vscale() * 4, as TVM stores it
    assert ramp.dtype == "int32xvscalex4" and str(ramp) == "T.Ramp(0, 1, T.vscale() * 4)"
    assert tir.Broadcast(tir.FloatImm("float32", 1.0), vs * 8).dtype == "float32xvscalex8"
    A = tir.decl_buffer((16,), "float32", name="A")
    assert tir.BufferLoad(A, [ramp]).dtype == "float32xvscalex4"
    assert (ramp < tir.Broadcast(3, vs * 4)).dtype == "boolxvscalex4"
    with pytest.raises(TVMError, match=r"T.vscale\(\) \* k"):
        tir.Ramp(0, 1, vs + 4)


def test_a_constant_of_a_vector_dtype_is_a_broadcast():
    # as tvm::make_const: the value in every lane
    assert str(tir.const(1, "float32x4")) == "T.Broadcast(T.float32(1.0), 4)"
    assert tir.const(0, "int32xvscalex4").dtype == "int32xvscalex4"


@T.prim_func
def scalable(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "int32"), n: T.int32):
    A[T.Ramp(0, 1, 4 * T.vscale())] = T.Broadcast(T.float32(1), T.vscale() * 4)
    A[n * T.vscale() * 4:n * T.vscale() * 4 + T.vscale() * 4] = T.Cast(
        "float32xvscalex4", B[T.Ramp(0, 1, T.vscale() * 4)])
    x = T.call_extern("get", dtype="")
    T.evaluate(x)


# TVM 0.27 prints the stores' ramps as slices, their lanes as T.vscale() * 4, and dtype "" as void
SCALABLE = '''# from tvm.script import tir as T

@T.prim_func
def scalable(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "int32"), n: T.int32):
    A[0:T.vscale() * 4] = T.Broadcast(T.float32(1.0), T.vscale() * 4)
    A[n * T.vscale() * 4:n * T.vscale() * 4 + T.vscale() * 4] = T.Cast("float32xvscalex4", B[T.Ramp(0, 1, T.vscale() * 4)])
    x: T.void = T.call_extern("void", "get")
    T.evaluate(x)'''


def test_scalable_vectors_print_as_tvm_prints_them_and_parse_back():
    assert scalable.script() == SCALABLE
    tvm.ir.assert_structural_equal(from_source(SCALABLE), scalable)


def test_ramp_and_broadcast_have_vector_dtypes():
    i = tir.Var("i", "int32")
    ramp = tir.Ramp(i * 4, 1, 4)
    assert ramp.dtype == "int32x4" and ramp.lanes == 4
    assert tir.Broadcast(tir.FloatImm("float32", 1.0), 8).dtype == "float32x8"


def test_a_load_through_a_ramp_has_as_many_lanes():
    A = tir.decl_buffer((16,), "float32", name="A")
    assert tir.BufferLoad(A, [tir.Ramp(0, 1, 4)]).dtype == "float32x4"
    assert tir.BufferLoad(A, [tir.Var("i", "int32")]).dtype == "float32"


def test_a_scalar_beside_a_vector_is_broadcast():
    A = tir.decl_buffer((16,), "float32", name="A")
    load = tir.BufferLoad(A, [tir.Ramp(0, 1, 4)])
    e = load * 2.0
    assert isinstance(e.b, tir.Broadcast) and e.dtype == "float32x4"
    assert (load < 0.0).dtype == "boolx4"


@pytest.mark.parametrize("make, why", [
    (lambda: tir.Ramp(0, 1, tir.Var("n", "int32")), "lanes must be a constant integer or"),
    (lambda: tir.Ramp(0, 1, 0), "at least 1"),
    (lambda: tir.Broadcast(tir.Ramp(0, 1, 4), 4), "must be a scalar"),
])
def test_bad_vectors_are_refused(make, why):
    with pytest.raises(TVMError, match=why):
        make()


@T.prim_func
def vectors(A: T.Buffer((25,), "float32"), B: T.Buffer((4, 8), "float32")):
    A[T.Ramp(0, 2, 4)] = A[T.Ramp(1, 2, 4)]
    A[1:5] = A[T.Ramp(1, 1, 4)] + A[T.Ramp(2, 1, 4)]
    B[1, 0:8:2] = T.Broadcast(T.float32(1), 4)
    x: T.float32x4 = A[T.Ramp(0, 1, 4)]
    A[T.Ramp(4, 1, 4)] = x


# TVM 0.27 prints this (a store's ramp of constant stride as a slice, a load's as T.Ramp)
VECTORS = '''# from tvm.script import tir as T

@T.prim_func
def vectors(A: T.Buffer((25,), "float32"), B: T.Buffer((4, 8), "float32")):
    A[0:8:2] = A[T.Ramp(1, 2, 4)]
    A[1:5] = A[T.Ramp(1, 1, 4)] + A[T.Ramp(2, 1, 4)]
    B[1, 0:8:2] = T.Broadcast(T.float32(1.0), 4)
    x: T.float32x4 = A[T.Ramp(0, 1, 4)]
    A[4:8] = x'''


def test_vectors_print_as_tvm_prints_them():
    assert vectors.script() == VECTORS


def test_printed_vectors_parse_back_to_the_same_function():
    tvm.ir.assert_structural_equal(from_source(VECTORS), vectors)


def test_a_slice_store_is_a_ramp_store():
    store = vectors.body.seq[1]
    assert isinstance(store.indices[0], tir.Ramp)
    tvm.ir.assert_structural_equal(store.indices[0], tir.Ramp(1, 1, 4))


def test_an_integer_broadcast_stored_into_floats_is_converted():
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        A[T.Ramp(0, 1, 4)] = T.Broadcast(1, 4)

    tvm.ir.assert_structural_equal(f.body.value, tir.Broadcast(tir.FloatImm("float32", 1.0), 4))


def test_a_store_whose_lanes_differ_from_its_index_is_refused():
    with pytest.raises(TVMError, match="the lanes must match"):
        @T.prim_func
        def f(A: T.Buffer((8,), "float32")):
            A[T.Ramp(0, 1, 4)] = T.Broadcast(T.float32(1), 8)


def test_ramps_compare_by_structure():
    tvm.ir.assert_structural_equal(tir.Ramp(0, 1, 4), tir.Ramp(0, 1, 4))
    with pytest.raises(TVMError):
        tvm.ir.assert_structural_equal(tir.Ramp(0, 1, 4), tir.Ramp(0, 2, 4))
    assert tvm.ir.structural_hash(tir.Ramp(0, 1, 4)) == tvm.ir.structural_hash(tir.Ramp(0, 1, 4))
