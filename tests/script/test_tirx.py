"""TVM >= 0.24's ``T`` namespace (``from mlckit.script import tirx as T``): a function with
blocks is ``@T.prim_func(s_tir=True)``, its blocks ``T.sblock``, their buffers and annotations
``T.sblock_alloc_buffer`` / ``T.sblock_attr``.  It builds the very IR the older spelling
builds, refuses what TVM 0.27 refuses (``T.block``; blocks without ``s_tir=True``) at the
line that does it, and runs the same numbers."""

import textwrap

import numpy as np
import pytest

import mlckit as tvm
from mlckit import relax
from mlckit.error import TVMAttributeError
from mlckit.ir import assert_structural_equal
from mlckit.ir.diagnostics import DiagnosticError
from mlckit.script import from_source
from mlckit.script import ir as I  # noqa: N812
from mlckit.script import relax as R
from mlckit.script import tir as T_old  # noqa: N812
from mlckit.script import tirx as T


@T.prim_func(s_tir=True)
def add_bias_relu_new(A: T.Buffer((4, 8), "float32"), bias: T.Buffer((8,), "float32"),
                      B: T.Buffer((4, 8), "float32")):
    Y = T.alloc_buffer((4, 8), "float32")
    for i, j in T.grid(4, 8):
        with T.sblock("Y"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.sblock_attr({"note": "bias"})
            Y[vi, vj] = A[vi, vj] + bias[vj]
    for i, j in T.grid(4, 8):
        with T.sblock("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.max(Y[vi, vj], T.float32(0))


@T_old.prim_func
def add_bias_relu_old(A: T_old.Buffer((4, 8), "float32"), bias: T_old.Buffer((8,), "float32"),
                      B: T_old.Buffer((4, 8), "float32")):
    Y = T_old.alloc_buffer((4, 8), "float32")
    for i, j in T_old.grid(4, 8):
        with T_old.block("Y"):
            vi, vj = T_old.axis.remap("SS", [i, j])
            T_old.block_attr({"note": "bias"})
            Y[vi, vj] = A[vi, vj] + bias[vj]
    for i, j in T_old.grid(4, 8):
        with T_old.block("B"):
            vi, vj = T_old.axis.remap("SS", [i, j])
            B[vi, vj] = T_old.max(Y[vi, vj], T_old.float32(0))


NEW_TEXT = '''\
# from tvm.script import tirx as T

@T.prim_func(s_tir=True)
def add_bias_relu_new(A: T.Buffer((4, 8), "float32"), bias: T.Buffer((8,), "float32"), B: T.Buffer((4, 8), "float32")):
    # with T.sblock("root"):
    Y = T.sblock_alloc_buffer((4, 8))
    for i, j in T.grid(4, 8):
        with T.sblock("Y"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj], bias[vj])
            T.writes(Y[vi, vj])
            T.sblock_attr({"note": "bias"})
            Y[vi, vj] = A[vi, vj] + bias[vj]
    for i, j in T.grid(4, 8):
        with T.sblock("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(Y[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = T.max(Y[vi, vj], T.float32(0.0))'''

OLD_TEXT = '''\
# from tvm.script import tir as T

@T.prim_func
def add_bias_relu_new(A: T.Buffer((4, 8), "float32"), bias: T.Buffer((8,), "float32"), B: T.Buffer((4, 8), "float32")):
    # with T.block("root"):
    Y = T.alloc_buffer((4, 8))
    for i, j in T.grid(4, 8):
        with T.block("Y"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj], bias[vj])
            T.writes(Y[vi, vj])
            T.block_attr({"note": "bias"})
            Y[vi, vj] = A[vi, vj] + bias[vj]
    for i, j in T.grid(4, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(Y[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = T.max(Y[vi, vj], T.float32(0.0))'''


def run_kernel(func) -> tuple:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 8)).astype("float32")
    bias = rng.standard_normal(8).astype("float32")
    out = np.empty((4, 8), "float32")
    tvm.compile(func, "llvm")[func.attrs["global_symbol"]](a, bias, out)
    return out, np.maximum(a + bias, 0)


# -- the new names build the same IR -----------------------------------------------------------
def test_both_spellings_build_structurally_equal_functions():
    assert add_bias_relu_new.spelling == "tirx" and add_bias_relu_old.spelling == "tir"
    new = add_bias_relu_new.with_attr("global_symbol", "f")
    old = add_bias_relu_old.with_attr("global_symbol", "f")
    assert_structural_equal(new, old)
    assert tvm.ir.structural_hash(new) == tvm.ir.structural_hash(old)


def test_a_function_prints_back_in_the_spelling_it_was_written_in():
    assert add_bias_relu_new.script() == NEW_TEXT


def test_tir_spelling_prints_the_older_spelling():
    assert add_bias_relu_new.script(tir_spelling="tir") == OLD_TEXT
    assert (add_bias_relu_old.script(tir_spelling="tirx")
            == NEW_TEXT.replace("add_bias_relu_new", "add_bias_relu_old"))


def test_the_new_spelling_runs_equal_to_numpy():
    out, expected = run_kernel(add_bias_relu_new)
    np.testing.assert_allclose(out, expected, rtol=1e-6)


@pytest.mark.parametrize("text", [NEW_TEXT, OLD_TEXT], ids=["tirx", "tir"])
def test_each_printed_spelling_parses_back_and_runs(text):
    func = from_source(text)
    assert func.spelling == ("tirx" if "s_tir=True" in text else "tir")
    assert_structural_equal(func, add_bias_relu_new)
    out, expected = run_kernel(func)
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_sblock_alloc_buffer_allocates_in_the_enclosing_block():
    @T.prim_func(s_tir=True)
    def staged(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        with T.sblock("outer"):
            S = T.sblock_alloc_buffer((8,), "float32", scope="shared")
            for i in range(8):
                with T.sblock("S"):
                    vi = T.axis.spatial(8, i)
                    S[vi] = A[vi] * T.float32(2)
            for i in range(8):
                with T.sblock("B"):
                    vi = T.axis.spatial(8, i)
                    B[vi] = S[vi] + T.float32(1)

    outer = staged.body.block  # the function's one top-level block
    assert outer.name_hint == "outer"
    assert [(b.scope, tuple(int(x) for x in b.shape)) for b in outer.alloc_buffers] == [
        ("shared", (8,))]
    a, b = np.arange(8, dtype="float32"), np.empty(8, "float32")
    tvm.compile(staged, "llvm")["staged"](a, b)
    np.testing.assert_array_equal(b, a * 2 + 1)


def test_private_and_check_well_formed_as_in_tvm():
    @T.prim_func(s_tir=True, private=True, check_well_formed=False)
    def helper(A: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.sblock("A"):
                vi = T.axis.spatial(4, i)
                A[vi] = T.float32(0)

    assert "global_symbol" not in helper.attrs
    assert helper.script().splitlines()[2] == "@T.prim_func(private=True, s_tir=True)"


def test_a_function_without_blocks_needs_no_s_tir():
    @T.prim_func
    def add_one(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            B[i] = A[i] + T.float32(1)

    assert add_one.script() == textwrap.dedent('''\
        # from tvm.script import tirx as T

        @T.prim_func
        def add_one(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            for i in range(4):
                B[i] = A[i] + T.float32(1.0)''')


def test_the_tir_namespace_also_reads_the_new_names():
    """So that TVMScript printed in either spelling parses with the default ``T``."""
    assert T_old.sblock is T_old.block and T_old.sblock_attr is T_old.block_attr
    assert T_old.sblock_alloc_buffer is T_old.alloc_buffer
    assert T.sblock is T_old.sblock and T.grid is T_old.grid


def test_the_ir_builder_spells_both():
    from mlckit.script.ir_builder import tir as B

    assert B.sblock is B.block and B.sblock_alloc_buffer is B.alloc_buffer


# -- what TVM 0.27 refuses ---------------------------------------------------------------------
def error_of(text: str) -> DiagnosticError:
    with pytest.raises(DiagnosticError) as err:
        from_source(textwrap.dedent(text).lstrip("\n"), {"T": T})
    return err.value


def test_blocks_without_s_tir_are_refused_at_the_first_block():
    err = error_of('''
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.sblock("A"):
                    vi = T.axis.spatial(4, i)
                    A[vi] = T.float32(0)
        ''')
    assert (err.span.line, err.span.column) == (4, 9)
    assert "@T.prim_func(s_tir=True)" in str(err) and "'A'" in str(err)
    assert str(err).splitlines()[-1].rstrip().endswith("^")


def test_t_block_is_refused_with_its_new_name():
    err = error_of('''
        @T.prim_func(s_tir=True)
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("A"):
                    vi = T.axis.spatial(4, i)
                    A[vi] = T.float32(0)
        ''')
    assert "T.block is spelled T.sblock" in str(err)
    assert (err.span.line, err.span.column) == (4, 14)


def test_t_block_attr_is_refused_with_its_new_name():
    err = error_of('''
        @T.prim_func(s_tir=True)
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.sblock("A"):
                    vi = T.axis.spatial(4, i)
                    T.block_attr({"k": 1})
                    A[vi] = T.float32(0)
        ''')
    assert "T.block_attr is spelled T.sblock_attr" in str(err)
    assert err.span.line == 6


def test_the_old_names_are_refused_outside_scripts_too():
    with pytest.raises(TVMAttributeError, match="T.block is spelled T.sblock"):
        T.block("A")
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        T.nonexistent  # noqa: B018


def test_check_well_formed_false_lets_blocks_through_as_tvm_does():
    func = from_source(textwrap.dedent('''
        @T.prim_func(check_well_formed=False)
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.sblock("A"):
                    vi = T.axis.spatial(4, i)
                    A[vi] = T.float32(0)
        '''), {"T": T})
    assert func.script().splitlines()[2] == "@T.prim_func(s_tir=True)"


# -- modules, Relax and out_ty -----------------------------------------------------------------
@I.ir_module
class NewModule:
    @T.prim_func(s_tir=True)
    def add_one(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.sblock("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] + T.float32(1)

    @R.function
    def main(x: R.Tensor((8,), "float32")):
        cls = NewModule
        with R.dataflow():
            y = R.call_tir(cls.add_one, (x,), out_ty=R.Tensor((8,), "float32"))
            R.output(y)
        return y


NEW_MODULE_TEXT = '''\
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def add_one(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        # with T.sblock("root"):
        for i in range(8):
            with T.sblock("B"):
                vi = T.axis.spatial(8, i)
                T.reads(A[vi])
                T.writes(B[vi])
                B[vi] = A[vi] + T.float32(1.0)

    @R.function
    def main(x: R.Tensor((8,), dtype="float32")) -> R.Tensor((8,), dtype="float32"):
        cls = Module
        with R.dataflow():
            y = R.call_tir(cls.add_one, (x,), out_ty=R.Tensor((8,), dtype="float32"))
            R.output(y)
        return y'''


def run_module(mod) -> None:
    x = np.arange(8, dtype="float32")
    vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    np.testing.assert_array_equal(vm["main"](tvm.runtime.tensor(x)).numpy(), x + 1)


def test_a_new_spelled_module_prints_as_tvm_0_27_does():
    assert NewModule.script() == NEW_MODULE_TEXT


def test_a_module_prints_parses_and_runs_in_the_other_spelling():
    old_text = NewModule.script(tir_spelling="tir")
    assert old_text == (NEW_MODULE_TEXT.replace("tirx as T", "tir as T")
                        .replace("(s_tir=True)", "").replace("T.sblock", "T.block")
                        .replace("out_ty=", "out_sinfo="))
    old = from_source(old_text)
    assert_structural_equal(old, NewModule)
    assert old.script() == old_text  # and it now prints in the spelling it was read in
    run_module(old)
    run_module(NewModule)


def test_a_module_mixing_spellings_prints_each_function_as_written():
    mixed = tvm.IRModule({"new": add_bias_relu_new.with_attr("global_symbol", "new"),
                          "old": add_bias_relu_old.with_attr("global_symbol", "old")})
    text = mixed.script()
    assert "# from tvm.script import tir as T" in text  # tir reads both spellings
    assert "@T.prim_func(s_tir=True)\n    def new(" in text
    assert "@T.prim_func\n    def old(" in text
    assert 'with T.sblock("Y")' in text and 'with T.block("Y")' in text
    assert_structural_equal(from_source(text), mixed)


def test_out_ty_and_out_sinfo_build_the_same_call():
    gv = tvm.ir.GlobalVar("f")
    x = relax.Var("x", R.Tensor((8,), "float32"))
    a = relax.call_tir(gv, (x,), out_ty=R.Tensor((8,), "float32"))
    b = relax.call_tir(gv, (x,), out_sinfo=R.Tensor((8,), "float32"))
    c = relax.call_tir(gv, (x,), R.Tensor((8,), "float32"))  # TVM 0.27: (gvar, args, out_ty)
    assert_structural_equal(a, b)
    assert_structural_equal(a, c)


def test_out_ty_with_out_sinfo_or_neither_is_an_error():
    gv = tvm.ir.GlobalVar("f")
    x = relax.Var("x", R.Tensor((8,), "float32"))
    with pytest.raises(tvm.TVMError, match="give out_sinfo or out_ty .*not both"):
        relax.call_tir(gv, (x,), out_sinfo=R.Tensor((8,), "float32"),
                       out_ty=R.Tensor((8,), "float32"))
    with pytest.raises(tvm.TVMError, match="requires out_sinfo .*out_ty"):
        relax.call_tir(gv, (x,))
    with pytest.raises(tvm.TVMError, match="give out_sinfo or out_ty"):
        R.call_dps_packed("env.f", (x,), out_sinfo=R.Tensor((8,), "float32"),
                          out_ty=R.Tensor((8,), "float32"))


@R.function
def packed_new(x: R.Tensor((8,), "float32")):
    y = R.call_dps_packed("env.f", (x,), out_ty=R.Tensor((8,), "float32"))
    return y


PACKED_NEW_TEXT = '''\
# from tvm.script import relax as R

@R.function
def packed_new(x: R.Tensor((8,), dtype="float32")) -> R.Tensor((8,), dtype="float32"):
    y = R.call_dps_packed("env.f", (x,), out_ty=R.Tensor((8,), dtype="float32"))
    return y'''


def test_a_relax_function_written_with_out_ty_prints_out_ty():
    assert packed_new.spelling == "tirx"
    assert packed_new.script() == PACKED_NEW_TEXT
    assert packed_new.script(tir_spelling="tir") == PACKED_NEW_TEXT.replace("out_ty=", "out_sinfo=")
    old = from_source(PACKED_NEW_TEXT.replace("out_ty=", "out_sinfo="))
    assert old.spelling == "tir"
    assert_structural_equal(old, packed_new)


def test_a_relax_only_module_written_with_out_ty_imports_tirx():
    mod = tvm.IRModule({"main": packed_new.with_attr("global_symbol", "main")})
    assert mod.script().splitlines()[:2] == ["# from tvm.script import ir as I",
                                             "# from tvm.script import relax as R"]
    text = from_source('''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n",), "float32")):
        n = T.int64()
        y = R.call_dps_packed("env.f", (x,), out_ty=R.Tensor((n,), "float32"))
        return y
''').script()
    assert "# from tvm.script import tirx as T" in text.splitlines()  # for T.int64()
    assert "out_ty=R.Tensor((n,)" in text


def test_an_unknown_tir_spelling_is_an_error():
    with pytest.raises(tvm.TVMError, match='tir_spelling is "tir" .* or "tirx"'):
        add_bias_relu_new.script(tir_spelling="tvm24")


def test_the_tirx_prim_func_is_also_the_ir_builder_frame():
    from mlckit.script.ir_builder import IRBuilder

    with IRBuilder() as ib:
        with T.prim_func(s_tir=True):
            T.func_name("zero")
            A = T.arg("A", T.Buffer((4,), "float32"))
            with T.grid(4) as i:
                with T.sblock("A"):
                    vi = T.axis.spatial(4, i)
                    T.buffer_store(A, T.float32(0), [vi])
    func = ib.get()
    assert func.spelling == "tirx"
    assert func.script().splitlines()[2:7] == [
        "@T.prim_func(s_tir=True)",
        'def zero(A: T.Buffer((4,), "float32")):',
        '    # with T.sblock("root"):',
        "    for v in range(4):",
        '        with T.sblock("A"):']
