"""What TVM 0.27 prints parses back in mlckit: shape variables declared once at module level
with ``typing.TypeVar`` and attribute keys spelled ``tirx.``."""

import textwrap

import numpy as np

import mlckit as tvm
from mlckit import relax
from mlckit.ir import assert_structural_equal
from mlckit.script import from_source

# TVM 0.27's printout of a Relax function calling a TIR kernel with a symbolic batch
TYPEVAR_TEXT = textwrap.dedent('''
    # from typing import TypeVar
    # from tvm.script import ir as I
    # from tvm.script import tirx as T
    # from tvm.script import relax as R

    n = TypeVar("n")
    @I.ir_module
    class Module:
        @T.prim_func(s_tir=True)
        def relu(X: T.Buffer((n, T.int64(4)), "float32"), Y: T.Buffer((n, T.int64(4)), "float32")):
            T.func_attr({"tirx.noalias": True})
            # with T.sblock("root"):
            for i, j in T.grid(n, T.int64(4)):
                with T.sblock("relu"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(X[vi, vj])
                    T.writes(Y[vi, vj])
                    Y[vi, vj] = T.max(X[vi, vj], T.float32(0.0))

        @R.function
        def main(x: R.Tensor((n, 4), dtype="float32")) -> R.Tensor((n, 4), dtype="float32"):
            cls = Module
            y = R.call_tir(cls.relu, (x,), out_ty=R.Tensor((n, 4), dtype="float32"))
            return y
''')

# the same module as mlckit (and TVM 0.23) print it
HANDLE_TEXT = textwrap.dedent('''
    @I.ir_module
    class Module:
        @T.prim_func(private=False)
        def relu(x_handle: T.handle, y_handle: T.handle):
            T.func_attr({"tir.noalias": True, "global_symbol": "relu"})
            n = T.int64()
            X = T.match_buffer(x_handle, (n, T.int64(4)))
            Y = T.match_buffer(y_handle, (n, T.int64(4)))
            for i, j in T.grid(n, T.int64(4)):
                with T.block("relu"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(X[vi, vj])
                    T.writes(Y[vi, vj])
                    Y[vi, vj] = T.max(X[vi, vj], T.float32(0.0))

        @R.function
        def main(x: R.Tensor(("n", 4), dtype="float32")) -> R.Tensor(("n", 4), dtype="float32"):
            n = T.int64()
            cls = Module
            y = R.call_tir(cls.relu, (x,), out_sinfo=R.Tensor((n, 4), dtype="float32"))
            return y
''')


def test_module_level_typevars_give_each_function_its_own_int64_variable():
    mod = from_source(TYPEVAR_TEXT)
    relu_n = mod["relu"].buffer_map[mod["relu"].params[0]].shape[0]
    main_n = mod["main"].params[0].struct_info.shape.values[0]
    assert relu_n.name == main_n.name == "n" and relu_n.dtype == main_n.dtype == "int64"
    assert relu_n is not main_n


def test_the_typevar_form_is_structurally_the_handle_form():
    assert_structural_equal(from_source(TYPEVAR_TEXT), from_source(HANDLE_TEXT))


def test_tirx_attribute_keys_are_the_tir_ones_and_print_back_in_either_spelling():
    relu = from_source(TYPEVAR_TEXT)["relu"]
    assert relu.attrs["tir.noalias"] is True and "tirx.noalias" not in relu.attrs
    assert 'T.func_attr({"tirx.noalias": True})' in relu.script(tir_spelling="tirx")
    assert 'T.func_attr({"tir.noalias": True})' in relu.script(tir_spelling="tir")


def test_a_typevar_module_builds_and_runs_for_any_batch():
    ex = relax.build(from_source(TYPEVAR_TEXT), target="llvm")
    vm = relax.VirtualMachine(ex, tvm.cpu())
    for batch in (1, 3):
        x = np.random.default_rng(batch).standard_normal((batch, 4)).astype("float32")
        np.testing.assert_allclose(vm["main"](x).numpy(), np.maximum(x, 0))



# TVM 0.27's printout of a PrimFunc with symbolic shapes made by te.create_prim_func
STRING_DIMS_TEXT = textwrap.dedent('''
    @T.prim_func(s_tir=True)
    def mm(A: T.Buffer(("m", "k"), "float32"), B: T.Buffer((k, "n"), "float32"), C: T.Buffer((m, n), "float32")):
        m, n = T.int32(), T.int32()
        k = T.int32()
        for i, j, r in T.grid(m, n, k):
            with T.sblock("C"):
                vi, vj, vr = T.axis.remap("SSR", [i, j, r])
                with T.init():
                    C[vi, vj] = T.float32(0.0)
                C[vi, vj] = C[vi, vj] + A[vi, vr] * B[vr, vj]
''')

HANDLE_DIMS_TEXT = textwrap.dedent('''
    @T.prim_func
    def mm(a: T.handle, b: T.handle, c: T.handle):
        m, n, k = T.int32(), T.int32(), T.int32()
        A = T.match_buffer(a, (m, k))
        B = T.match_buffer(b, (k, n))
        C = T.match_buffer(c, (m, n))
        for i, j, r in T.grid(m, n, k):
            with T.block("C"):
                vi, vj, vr = T.axis.remap("SSR", [i, j, r])
                with T.init():
                    C[vi, vj] = T.float32(0.0)
                C[vi, vj] = C[vi, vj] + A[vi, vr] * B[vr, vj]
''')


def test_string_dims_in_buffer_parameters_are_the_variables_the_body_declares():
    func = from_source(STRING_DIMS_TEXT)
    a, b, c = (func.buffer_map[p] for p in func.params)
    m, k = a.shape
    assert (m.name, k.name, m.dtype) == ("m", "k", "int32")
    assert b.shape[0] is k and c.shape[0] is m and c.shape[1] is b.shape[1]
    assert_structural_equal(func, from_source(HANDLE_DIMS_TEXT))


def test_a_string_dims_kernel_runs_at_any_shape():
    lib = tvm.build(from_source(STRING_DIMS_TEXT), target="llvm")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 5)).astype("float32")
    b = rng.standard_normal((5, 2)).astype("float32")
    c = np.empty((3, 2), "float32")
    lib(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


MATMUL_TEXT = textwrap.dedent('''
    @I.ir_module
    class Module:
        @T.prim_func(s_tir=True)
        def relu(x: T.Buffer((2, 4), "float32"), y: T.Buffer((2, 4), "float32")):
            for i, j in T.grid(2, 4):
                with T.sblock("y"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    y[vi, vj] = T.max(x[vi, vj], T.float32(0))

        @R.function
        def main(x: R.Tensor((2, 3), "float32"), w: R.Tensor((3, 4), "float32")):
            cls = Module
            z = R.matmul(x, w, out_dtype=None)
            y = R.call_tir(cls.relu, (z,), out_ty=R.Tensor((2, 4), "float32"))
            return y
''')


def test_an_unset_out_dtype_prints_as_none_in_the_tirx_spelling_and_void_in_the_older():
    mod = from_source(MATMUL_TEXT)
    assert "R.matmul(x, w, out_dtype=None)" in mod.script()
    assert 'R.matmul(x, w, out_dtype="void")' in mod.script(tir_spelling="tir")
    assert_structural_equal(from_source(mod.script()), mod)
    assert_structural_equal(from_source(mod.script(tir_spelling="tir")), mod)
