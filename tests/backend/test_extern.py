"""Extern calls in the backends: T.call_extern of C functions (imported with
pragma_import_llvm or registered), Numba and Python functions, T.call_packed; the errors."""

import numba
import numpy as np
import pytest

import mlckit
from mlckit import tir
from mlckit.backend import lnumpy, numba_cpu
from mlckit.backend.extern import ExternError, compile_library
from mlckit.contrib import clang
from mlckit.script import tir as T

AXPB_C = "float axpb(float x, float a, float b) { return a * x + b; }"


@T.prim_func
def axpb(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in range(64):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = T.call_extern("float32", "axpb", A[vi], T.float32(2), T.float32(1))


@T.prim_func
def row_sums(A: T.Buffer((8, 16), "float32"), S: T.Buffer((8,), "float32")):
    """Each row of A summed by a C function reading it through a pointer."""
    for i in range(8):
        with T.block("S"):
            vi = T.axis.remap("S", [i])
            T.reads(A[vi, 0:16])
            T.writes(S[vi])
            row = T.match_buffer(A[vi, 0:16], (16,), offset_factor=1)
            out = T.match_buffer(S[vi], (), offset_factor=1)
            T.evaluate(T.call_extern("int32", "sum16", out.access_ptr("w"), row.access_ptr("r")))


SUM16_C = """
int sum16(float *out, const float *row) {
  float s = 0.0f;
  for (int k = 0; k < 16; ++k) s += row[k];
  *out = s;
  return 0;
}
"""

TARGETS = ["lnumpy", "llvm"]


@pytest.fixture()
def a():
    return np.random.default_rng(0).random(64, dtype=np.float32)


@pytest.mark.parametrize("target", TARGETS)
def test_registered_c_function(target, a):
    tir.register_extern("axpb", compile_library(AXPB_C).axpb, override=True)
    b = np.zeros(64, "float32")
    mlckit.build(axpb, target=target)(a, b)
    np.testing.assert_allclose(b, 2 * a + 1, rtol=1e-6)


@pytest.mark.parametrize("target", TARGETS)
def test_registered_numba_function(target, a):
    @numba.njit
    def axpb_numba(x, k, c):
        return k * x + c

    tir.register_extern("axpb", axpb_numba, override=True)
    b = np.zeros(64, "float32")
    mlckit.build(axpb, target=target)(a, b)
    np.testing.assert_allclose(b, 2 * a + 1, rtol=1e-6)


def test_registered_python_function_runs_in_lnumpy_only(a):
    tir.register_extern("axpb", lambda x, k, c: k * x + c, override=True)
    b = np.zeros(64, "float32")
    lnumpy.build(axpb)(a, b)
    np.testing.assert_allclose(b, 2 * a + 1, rtol=1e-6)
    with pytest.raises(ExternError, match="Numba-compiled code cannot call: register a "
                                          "numba.njit function or a C function"):
        numba_cpu.build(axpb)


@pytest.mark.parametrize("target", TARGETS + ["cuda"])
def test_pointer_arguments_reach_c_code_imported_with_pragma_import_llvm(target):
    sch = tir.Schedule(row_sums)
    (i,) = sch.get_loops("S")
    if target == "cuda":
        sch.bind(i, "threadIdx.x")
    sch.annotate(i, "pragma_import_llvm", clang.create_llvm(SUM16_C))
    x = np.random.default_rng(1).random((8, 16), dtype=np.float32)
    s = np.zeros(8, "float32")
    kwargs = {"mode": "cpu"} if target == "cuda" else {}
    mlckit.build(sch.mod, target=target, **kwargs)["main"](x, s)
    np.testing.assert_allclose(s, x.sum(axis=1), rtol=1e-5)


def test_generated_code_calls_the_extern_with_addresses():
    sch = tir.Schedule(row_sums)
    (i,) = sch.get_loops("S")
    sch.annotate(i, "pragma_import_llvm", clang.create_llvm(SUM16_C))
    src = numba_cpu.build(sch.mod["main"]).source
    assert "# sum16: a C function imported with pragma_import_llvm" in src
    # LowerMatchBuffer bound the views' elem_offset to their regions' starts (vi * 16, vi)
    assert "sum16(address(S, i), address(A, i * 16))" in src
    # a kernel calling an extern keeps Numba's runtime (numba_cpu.needs_runtime)
    assert "_nrt=False" not in src


def test_a_matched_buffer_accessed_elementwise_is_a_view_of_its_region():
    @T.prim_func
    def scale_rows(A: T.Buffer((4, 8), "float32")):
        for i in range(4):
            with T.block("R"):
                vi = T.axis.remap("S", [i])
                T.reads(A[vi, 0:8])
                T.writes(A[vi, 0:8])
                row = T.match_buffer(A[vi, 0:8], (8,), offset_factor=1)
                for j in range(8):
                    row[j] = row[j] * T.float32(2)

    x = np.arange(32, dtype="float32").reshape(4, 8)
    for target in TARGETS:
        y = x.copy()
        mlckit.build(scale_rows, target=target)(y)
        np.testing.assert_allclose(y, 2 * x)
    assert "row = A[vi, 0:8]" in lnumpy.to_source(scale_rows)


def test_an_extern_without_implementation_is_an_error_naming_it():
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("A"):
                vi = T.axis.remap("S", [i])
                A[vi] = T.call_extern("float32", "no_such_kernel", A[vi])

    for build in (lnumpy.build, numba_cpu.build):
        with pytest.raises(ExternError, match="T.call_extern calls 'no_such_kernel', which has "
                                              "no implementation: import C code defining it"):
            build(f)


def test_c_code_that_does_not_compile_is_an_error_showing_it():
    with pytest.raises(ExternError, match="does not compile"):
        compile_library("int broken( { return 0; }")


@pytest.mark.parametrize("target", TARGETS)
def test_call_packed_calls_the_registered_function_with_arrays(target):
    seen = []

    @mlckit.register_func("test_extern.record", override=True)
    def record(arr, n):
        seen.append((arr.copy(), n))

    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        with T.block("root"):
            T.evaluate(T.call_packed("test_extern.record", A.data, 4))

    x = np.arange(4, dtype="float32")
    mlckit.build(f, target=target)(x)
    assert len(seen) == 1 and seen[0][1] == 4
    np.testing.assert_array_equal(seen[0][0], x)


def test_a_matched_buffer_with_a_constant_offset_must_start_there():
    @T.prim_func
    def f(A: T.Buffer((4, 8), "float32")):
        for i in range(4):
            with T.block("R"):
                vi = T.axis.remap("S", [i])
                T.reads(A[vi, 0:8])
                T.writes(A[vi, 0:8])
                row = T.match_buffer(A[vi, 0:8], (8,))  # no offset_factor: elem_offset 0
                T.evaluate(T.call_extern("int32", "touch", row.access_ptr("w")))

    with pytest.raises(mlckit.backend.codegen.CodegenError,
                       match=r"T.match_buffer row.elem_offset is 0 but the matched region has "
                             r"vi \* 8 \(declare the buffer with offset_factor"):
        lnumpy.to_source(f)
