"""The TIR parser: a script gives the same IR as the equivalent IRBuilder calls, and the IR
it builds is complete (root block, block regions, iterator kinds, attributes)."""

import pytest

import mlckit
from mlckit import tir
from mlckit.ir import assert_structural_equal
from mlckit.script import from_source
from mlckit.script import ir as I  # noqa: E741
from mlckit.script import tir as T
from mlckit.script.ir_builder import tir as TB
from mlckit.script.ir_builder.base import IRBuilder
from mlckit.tir.expr import IterVarType

from ...kernels import mm_relu  # the course's script


def build(fn):
    """Run ``fn`` inside a fresh IRBuilder and return what it built."""
    with IRBuilder() as ib:
        fn()
    return ib.get()


# -- a script equals the IR built imperatively ---------------------------------------------
def build_mm_relu():
    with TB.prim_func():
        TB.func_name("mm_relu")
        A = TB.arg("A", TB.Buffer((128, 128), "float32"))
        B = TB.arg("B", TB.Buffer((128, 128), "float32"))
        C = TB.arg("C", TB.Buffer((128, 128), "float32"))
        TB.func_attr({"tir.noalias": True})
        Y = TB.alloc_buffer((128, 128), dtype="float32")
        with TB.grid(128, 128, 128) as (i, j, k):
            with TB.block("Y"):
                vi, vj, vk = TB.axis.remap("SSR", [i, j, k])
                with TB.init():
                    TB.buffer_store(Y, TB.float32(0), [vi, vj])
                TB.buffer_store(Y, Y[vi, vj] + A[vi, vk] * B[vk, vj], [vi, vj])
        with TB.grid(128, 128) as (i, j):
            with TB.block("C"):
                vi, vj = TB.axis.remap("SS", [i, j])
                TB.buffer_store(C, TB.max(Y[vi, vj], TB.float32(0)), [vi, vj])


def test_building_a_prim_func_imperatively_gives_the_same_ir_as_the_script():
    assert_structural_equal(mm_relu, build(build_mm_relu))


def test_symbolic_shapes_match_the_builder():
    @T.prim_func
    def add(a: T.handle, b: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n, 4), "float32")
        B = T.match_buffer(b, (n, 4), "float32")
        for i, j in T.grid(n, T.int64(4)):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + T.float32(1)

    def body():
        with TB.prim_func():
            TB.func_name("add")
            a = TB.arg("a", TB.handle())
            b = TB.arg("b", TB.handle())
            n = TB.int64()
            A = TB.match_buffer(a, (n, 4), "float32")
            B = TB.match_buffer(b, (n, 4), "float32")
            with TB.grid(n, TB.int64(4)) as (i, j):
                with TB.block("B"):
                    vi, vj = TB.axis.remap("SS", [i, j])
                    TB.buffer_store(B, A[vi, vj] + TB.float32(1), [vi, vj])

    assert_structural_equal(add, build(body))


def test_loops_if_and_let_match_the_builder():
    @T.prim_func
    def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in T.parallel(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                x: T.float32 = A[vi] * T.float32(2)
                if x > T.float32(1):
                    B[vi] = x
                else:
                    B[vi] = T.float32(0)

    def body():
        with TB.prim_func():
            TB.func_name("f")
            A = TB.arg("A", TB.Buffer((16,), "float32"))
            B = TB.arg("B", TB.Buffer((16,), "float32"))
            with TB.parallel(16) as i:
                with TB.block("B"):
                    vi = TB.axis.spatial(16, i)
                    with TB.LetStmt(A[vi] * TB.float32(2), TB.float32) as x:
                        with TB.If(x > TB.float32(1)):
                            with TB.Then():
                                TB.buffer_store(B, x, [vi])
                            with TB.Else():
                                TB.buffer_store(B, TB.float32(0), [vi])

    assert_structural_equal(f, build(body))


def test_builder_frame_is_also_t_prim_func_called_without_a_function():
    def body():
        with T.prim_func():
            T.func_name("noop")
            T.arg("A", T.Buffer((4,), "float32"))
            T.evaluate(0)

    func = build(body)
    assert isinstance(func, tir.PrimFunc)
    assert func.attrs == {"global_symbol": "noop"}


# -- what the parser completes -------------------------------------------------------------
def _blocks(stmt, out=None):
    out = [] if out is None else out
    if isinstance(stmt, tir.Block):
        out.append(stmt)
    if isinstance(stmt, mlckit.ir.Node):
        for name in stmt.field_names():
            value = getattr(stmt, name)
            for v in value if isinstance(value, list) else [value]:
                if isinstance(v, tir.Stmt):
                    _blocks(v, out)
    return out


def block_named(func, name):
    return next(b for b in _blocks(func.body) if b.name_hint == name)


def test_function_level_allocs_go_into_an_implicit_root_block():
    root = mm_relu.body
    assert isinstance(root, tir.BlockRealize)
    assert root.block.name_hint == "root"
    assert [b.name for b in root.block.alloc_buffers] == ["Y"]
    assert root.block.reads == [] and root.block.writes == []


def test_a_body_with_blocks_gets_a_root_block_even_without_allocs():
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("A"):
                vi = T.axis.spatial(4, i)
                A[vi] = T.float32(0)

    assert isinstance(f.body, tir.BlockRealize) and f.body.block.name_hint == "root"


def test_a_body_without_blocks_gets_no_root_block():
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = T.float32(0)

    assert isinstance(f.body, tir.For)


def test_reads_and_writes_are_filled_and_a_reduction_does_not_read_its_output():
    y = block_named(mm_relu, "Y")
    assert [r.buffer.name for r in y.reads] == ["A", "B"]
    assert [w.buffer.name for w in y.writes] == ["Y"]
    vi, vj, vk = (iv.var for iv in y.iter_vars)
    read_a = y.reads[0].region
    assert read_a[0].min is vi and read_a[1].min is vk
    assert all(r.extent.value == 1 for r in read_a)
    assert y.annotations == {}


def test_without_init_the_output_read_is_listed():
    @T.prim_func
    def acc(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = B[vi] + A[vi]

    b = block_named(acc, "B")
    assert [r.buffer.name for r in b.reads] == ["B", "A"]


def test_a_loop_inside_a_block_relaxes_the_region_over_its_range():
    @T.prim_func
    def f(A: T.Buffer((64,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = T.float32(0)
                for k in range(4):
                    B[vi] = B[vi] + A[vi * 4 + k]

    b = block_named(f, "B")
    region = b.reads[1].region[0]
    assert b.reads[1].buffer.name == "A"
    assert region.extent.value == 4
    assert region.min.script() == "vi * 4"


def test_explicit_regions_are_kept():
    @T.prim_func
    def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                T.reads(A[0:16])
                B[vi] = A[vi]

    b = block_named(f, "B")
    assert b.reads[0].region[0].extent.value == 16
    assert [w.buffer.name for w in b.writes] == ["B"]


def test_iterator_kinds():
    y = block_named(mm_relu, "Y")
    assert [iv.iter_type for iv in y.iter_vars] == [
        IterVarType.DataPar, IterVarType.DataPar, IterVarType.CommReduce]
    assert [iv.var.name_hint for iv in y.iter_vars] == ["vi", "vj", "vk"]


def test_global_symbol_is_the_function_name_unless_private():
    @T.prim_func(private=True)
    def hidden(A: T.Buffer((4,), "float32")):
        T.evaluate(0)

    assert mm_relu.attrs["global_symbol"] == "mm_relu"
    assert "tir.noalias" in mm_relu.attrs
    assert "global_symbol" not in hidden.attrs


def test_prim_funcs_in_an_ir_module():
    @I.ir_module
    class Module:
        @T.prim_func
        def main(A: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = T.float32(1)

        @T.prim_func(private=True)
        def helper(A: T.Buffer((4,), "float32")):
            T.evaluate(0)

    assert Module["main"].attrs == {"global_symbol": "main"}
    assert Module["helper"].attrs == {}


def test_sblock_is_an_alias_of_block():
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.sblock("A"):
                vi = T.axis.spatial(4, i)
                A[vi] = T.float32(0)

    @T.prim_func
    def g(A: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("A"):
                vi = T.axis.spatial(4, i)
                A[vi] = T.float32(0)

    assert_structural_equal(f.with_attr("global_symbol", "g"), g)


def test_statements_carry_the_span_of_their_line():
    func = from_source(
        "@T.prim_func\n"
        "def f(A: T.Buffer((4,), 'float32')):\n"
        "    for i in range(4):\n"
        "        A[i] = T.float32(0)\n"
    )
    assert func.body.span.line == 3
    assert func.body.body.span.line == 4


def test_augmented_assignment_stores_the_sum():
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] += T.float32(1)

    @T.prim_func
    def g(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = A[i] + T.float32(1)

    assert_structural_equal(f.with_attr("global_symbol", "g"), g)


def test_python_operators_build_tir_nodes():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        for i in range(8):
            if i == 3 and not i != 2 or i >= 5:
                A[i] = -A[i]

    cond = f.body.body.condition
    assert isinstance(cond, tir.Or)
    assert isinstance(cond.a, tir.And) and isinstance(cond.a.a, tir.EQ)
    assert isinstance(cond.a.b, tir.Not) and isinstance(cond.b, tir.GE)


def test_python_conditions_are_decided_at_parse_time():
    use_relu = False

    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        for i in range(4):
            if use_relu:
                A[i] = T.max(A[i], T.float32(0))
            else:
                A[i] = A[i] * T.float32(2)

    assert isinstance(f.body.body, tir.BufferStore)
    assert isinstance(f.body.body.value, tir.Mul)


def test_a_tir_expression_assigned_to_a_name_becomes_a_let():
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        for i in range(4):
            x = A[i] + T.float32(1)
            A[i] = x * x

    let = f.body.body
    assert isinstance(let, tir.LetStmt) and let.var.name_hint == "x"
    assert let.var.dtype == "float32"


# -- metaprogramming -------------------------------------------------------------------------
def gen_matmul(n, m, k):
    @T.prim_func
    def matmul(A: T.Buffer((n, k), "float32"), B: T.Buffer((k, m), "float32"),
               C: T.Buffer((n, m), "float32")):
        for i, j, r in T.grid(n, m, k):
            with T.block("C"):
                vi, vj, vr = T.axis.remap("SSR", [i, j, r])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vr] * B[vr, vj]

    return matmul


def test_a_factory_closure_captures_the_shape():
    f = gen_matmul(8, 16, 4)
    g = gen_matmul(8, 16, 4)
    assert_structural_equal(f, g)
    A = f.buffer_map[f.params[0]]
    assert [int(s) for s in A.shape] == [8, 4]


def gen_copy(shape):
    @T.prim_func
    def copy(A: T.Buffer(shape, "float32"), B: T.Buffer(shape, "float32")):
        for (*idx,) in T.grid(*A.shape):
            with T.block("B"):
                vidx = T.axis.remap("S" * len(shape), idx)
                B[vidx] = A[vidx]

    return copy


@pytest.mark.parametrize("shape", [(8,), (4, 8), (2, 3, 4)])
def test_a_starred_loop_is_rank_polymorphic(shape):
    f = gen_copy(shape)
    block = block_named(f, "B")
    assert len(block.iter_vars) == len(shape)
    store = block.body
    assert isinstance(store, tir.BufferStore) and len(store.indices) == len(shape)


def scale_of(x, factor):
    """A host Python function returning a TIR expression."""
    return x * T.float32(factor)


def test_a_host_function_returning_a_prim_expr_is_inlined():
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = scale_of(A[i], 3)

    value = f.body.body.value
    assert isinstance(value, tir.Mul) and value.b.value == 3.0


def test_meta_var_keeps_a_python_value():
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        two = T.meta_var(T.float32(2))
        for i in range(4):
            A[i] = A[i] * two

    assert isinstance(f.body, tir.For)
