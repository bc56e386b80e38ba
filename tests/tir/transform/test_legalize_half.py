"""LegalizeHalf: float16 buffers hold uint16 bits; loads widen to float32, stores round back,
a cast to float16 rounds in place, constants and variables compute in float32."""

import mlckit as tvm
from mlckit.ir import assert_structural_equal
from mlckit.script import tir as T
from mlckit.tir.transform import LegalizeHalf, legalize_half


def test_float16_is_stored_as_bits_and_computed_in_float32():
    @T.prim_func(private=True)
    def before(A: T.Buffer((8,), "float16"), B: T.Buffer((8,), "float16"), s: T.float16):
        for i in range(8):
            B[i] = T.exp(A[i]) * s + T.Cast("float16", i) + T.float16(1.5)

    @T.prim_func(private=True)
    def expected(A: T.Buffer((8,), "uint16"), B: T.Buffer((8,), "uint16"), s: T.float32):
        for i in range(8):
            B[i] = T.float_to_half(
                T.exp(T.half_to_float(A[i])) * s
                + T.half_to_float(T.float_to_half(T.Cast("float32", i)))
                + T.float32(1.5))

    after = LegalizeHalf()(tvm.IRModule({"main": before}))["main"]
    assert_structural_equal(after, expected)


def test_a_vector_of_float16_keeps_its_lanes():
    @T.prim_func(private=True)
    def before(A: T.Buffer((8,), "float16"), B: T.Buffer((8,), "float16")):
        for i in range(2):
            B[i * 4:i * 4 + 4] = A[T.Ramp(i * 4, 1, 4)] + T.Broadcast(T.float16(1), 4)

    @T.prim_func(private=True)
    def expected(A: T.Buffer((8,), "uint16"), B: T.Buffer((8,), "uint16")):
        for i in range(2):
            B[i * 4:i * 4 + 4] = T.float_to_half(
                T.half_to_float(A[T.Ramp(i * 4, 1, 4)]) + T.Broadcast(T.float32(1), 4))

    assert_structural_equal(legalize_half(before), expected)


def test_the_printed_result_parses_back():
    @T.prim_func(private=True)
    def before(A: T.Buffer((4,), "float16")):
        for i in range(4):
            A[i] = A[i] * T.float16(2)

    after = legalize_half(before)
    assert_structural_equal(tvm.script.from_source(after.script()), after)


def test_a_function_without_float16_is_the_same_object():
    @T.prim_func(private=True)
    def float32_only(A: T.Buffer((8,), "float32")):
        for i in range(8):
            A[i] = A[i] * T.float32(2)

    assert legalize_half(float32_only) is float32_only
