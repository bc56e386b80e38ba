"""The TVMScript printer on TIR built with the node constructors (expected: TVM v0.23 text)."""

import pytest

from mlckit.ir import IRModule
from mlckit.script.printer import script
from mlckit.tir import (
    Allocate,
    AssertStmt,
    AttrStmt,
    Block,
    BlockRealize,
    BufferRegion,
    BufferStore,
    Cast,
    DeclBuffer,
    Div,
    Evaluate,
    FloatImm,
    FloorDiv,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    IterVar,
    LetStmt,
    Mod,
    Not,
    PrimFunc,
    Range,
    Select,
    SeqStmt,
    SizeVar,
    StringImm,
    Var,
    While,
    convert,
    decl_buffer,
    exp,
    if_then_else,
    truncdiv,
)
from mlckit.tir import max as tmax
from mlckit.tir.expr import Add, Mul


def check(obj, expected: str, **options):
    assert script(obj, **options) == expected.strip("\n")


def nest(loops, body):
    """Serial loops (var, extent) around body, outermost first."""
    for var, extent in reversed(loops):
        body = For(var, 0, extent, ForKind.SERIAL, body)
    return body


def spatial(name, extent, dtype="int32"):
    return IterVar(Range(IntImm(dtype, 0), extent), Var(name, dtype), 0)


def reduce_axis(name, extent):
    return IterVar(Range(0, extent), Var(name), 2)


def point(buf, *idx):
    return BufferRegion(buf, [Range(i, 1) for i in idx])


def mm_relu() -> PrimFunc:
    a, b, c = Var("a", "handle"), Var("b", "handle"), Var("c", "handle")
    A, B, C = (decl_buffer((128, 128), "float32", n) for n in "ABC")
    Y = decl_buffer((128, 128), "float32", "Y")
    i, j, k = Var("i"), Var("j"), Var("k")
    vi, vj, vk = spatial("vi", 128), spatial("vj", 128), reduce_axis("vk", 128)
    x, y, z = vi.var, vj.var, vk.var
    update = Block(
        [vi, vj, vk], [point(A, x, z), point(B, z, y)], [point(Y, x, y)], "Y",
        BufferStore(Y, Y[x, y] + A[x, z] * B[z, y], [x, y]),
        init=BufferStore(Y, FloatImm("float32", 0.0), [x, y]),
    )
    i2, j2 = Var("i"), Var("j")
    wi, wj = spatial("vi", 128), spatial("vj", 128)
    relu = Block(
        [wi, wj], [point(Y, wi.var, wj.var)], [point(C, wi.var, wj.var)], "C",
        BufferStore(C, tmax(Y[wi.var, wj.var], FloatImm("float32", 0.0)), [wi.var, wj.var]),
    )
    body = SeqStmt([
        nest([(i, 128), (j, 128), (k, 128)], BlockRealize([i, j, k], True, update)),
        nest([(i2, 128), (j2, 128)], BlockRealize([i2, j2], True, relu)),
    ])
    root = Block([], [], [], "root", body, alloc_buffers=[Y])
    return PrimFunc(
        [a, b, c], BlockRealize([], True, root), buffer_map={a: A, b: B, c: C},
        attrs={"global_symbol": "mm_relu", "tir.noalias": True},
    )


MM_RELU_BODY = """
    T.func_attr({"tir.noalias": True})
    # with T.block("root"):
    Y = T.alloc_buffer((128, 128))
    for i, j, k in T.grid(128, 128, 128):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(Y[vi, vj])
            with T.init():
                Y[vi, vj] = T.float32(0.0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(128, 128):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(Y[vi, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = T.max(Y[vi, vj], T.float32(0.0))
"""


def test_mm_relu_prim_func():
    check(mm_relu(), '''
# from tvm.script import tir as T

@T.prim_func
def mm_relu(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):''' + MM_RELU_BODY)


def test_mm_relu_module():
    mod = IRModule({"mm_relu": mm_relu()})
    indented = "\n".join("    " + line if line else line for line in MM_RELU_BODY.split("\n"))
    check(mod, '''
# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def mm_relu(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):''' + indented)


def test_node_methods_use_the_printer():
    func = mm_relu()
    assert func.script() == script(func)
    assert repr(func) == script(func)


def test_split_loop_block_with_axis_spatial_and_where():
    a, b = Var("a", "handle"), Var("b", "handle")
    A, B = decl_buffer((120,), "float32", "A"), decl_buffer((120,), "float32", "B")
    i0, i1 = Var("i_0"), Var("i_1")
    vi = spatial("vi", 120)
    blk = Block([vi], [point(A, vi.var)], [point(B, vi.var)], "B",
                BufferStore(B, A[vi.var] * FloatImm("float32", 2.0), [vi.var]))
    realize = BlockRealize([i0 * 16 + i1], i0 * 16 + i1 < 120, blk)
    root = Block([], [], [], "root", nest([(i0, 8), (i1, 16)], realize))
    func = PrimFunc([a, b], BlockRealize([], True, root), buffer_map={a: A, b: B},
                    attrs={"global_symbol": "scale"})
    check(func, '''
# from tvm.script import tir as T

@T.prim_func
def scale(A: T.Buffer((120,), "float32"), B: T.Buffer((120,), "float32")):
    # with T.block("root"):
    for i_0, i_1 in T.grid(8, 16):
        with T.block("B"):
            vi = T.axis.spatial(120, i_0 * 16 + i_1)
            T.where(i_0 * 16 + i_1 < 120)
            T.reads(A[vi])
            T.writes(B[vi])
            B[vi] = A[vi] * T.float32(2.0)
''')


def test_block_regions_slices_and_mixed_remap():
    A = decl_buffer((128, 128), "float32", "A")
    i, j = Var("i"), Var("j")
    vi, vj = spatial("vi", 128), reduce_axis("vj", 64)
    blk = Block([vi, vj], [BufferRegion(A, [Range(vi.var, 1), Range(0, 128)])],
                [BufferRegion(A, [Range(vi.var * 4, 4), Range(0, 128)])], "blk",
                Evaluate(0), annotations={"meta_schedule.unroll": 16})
    stmt = nest([(i, 128), (j, 128)], BlockRealize([i, j], True, blk))
    # a lone fragment declares a free buffer in the lowest frame enclosing all its uses
    check(stmt, '''
for i, j in T.grid(128, 128):
    with T.block("blk"):
        vi = T.axis.spatial(128, i)
        vj = T.axis.reduce(64, j)
        A = T.Buffer((128, 128))
        T.reads(A[vi, 0:128])
        T.writes(A[vi * 4:vi * 4 + 4, 0:128])
        T.block_attr({"meta_schedule.unroll": 16})
        T.evaluate(0)
''')


def test_symbolic_shape_uses_handle_and_match_buffer():
    a, b = Var("a", "handle"), Var("b", "handle")
    n = Var("n")
    A, B = decl_buffer((n, 128), "float32", "A"), decl_buffer((n, 128), "float32", "B")
    i, j = Var("i"), Var("j")
    store = BufferStore(B, A[i, j] + FloatImm("float32", 1.0), [i, j])
    func = PrimFunc([a, b], nest([(i, n), (j, 128)], store), buffer_map={a: A, b: B},
                    attrs={"global_symbol": "add_one"})
    check(func, '''
# from tvm.script import tir as T

@T.prim_func
def add_one(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n, 128))
    B = T.match_buffer(b, (n, 128))
    for i, j in T.grid(n, 128):
        B[i, j] = A[i, j] + T.float32(1.0)
''')


def test_scalar_param_and_non_float32_buffer():
    a, m = Var("a", "handle"), Var("m", "int64")
    A = decl_buffer((IntImm("int64", 16),), "int8", "A")
    i = Var("i", "int64")
    func = PrimFunc([a, m], For(i, IntImm("int64", 0), m, ForKind.SERIAL,
                                BufferStore(A, Cast("int8", i), [i])),
                    buffer_map={a: A}, attrs={"global_symbol": "fill"})
    check(func, '''
# from tvm.script import tir as T

@T.prim_func
def fill(A: T.Buffer((T.int64(16),), "int8"), m: T.int64):
    for i in range(m):
        A[i] = T.Cast("int8", i)
''')


def test_handle_used_in_body_is_not_inlined():
    a = Var("a", "handle")
    A = decl_buffer((128, 128), "float32", "A")
    func = PrimFunc([a], Evaluate(a), buffer_map={a: A}, attrs={"global_symbol": "main"})
    check(func, '''
# from tvm.script import tir as T

@T.prim_func
def main(a: T.handle):
    A = T.match_buffer(a, (128, 128))
    T.evaluate(a)
''')


def test_private_and_renamed_functions():
    func = PrimFunc([], Evaluate(0))
    check(func, '''
# from tvm.script import tir as T

@T.prim_func(private=True)
def main():
    T.evaluate(0)
''')
    check(func.with_attr("global_symbol", "kernel"), '''
# from tvm.script import tir as T

@T.prim_func
def kernel():
    T.evaluate(0)
''')
    check(func.with_attr("global_symbol", "kernel"), '''
# from tvm.script import tir as T

@T.prim_func
def other():
    T.func_attr({"global_symbol": "kernel"})
    T.evaluate(0)
''', name="other")


def test_loop_kinds():
    A = decl_buffer((64,), "float32", "A")
    i, j, k, t = Var("i"), Var("j"), Var("k"), Var("t")
    tx = IterVar(None, Var("threadIdx.x"), 1, "threadIdx.x")  # as T.thread_binding builds it
    body = BufferStore(A, FloatImm("float32", 0.0), [i + j + k + t])
    loop = For(t, 0, 32, ForKind.THREAD_BINDING, body, thread_binding=tx)
    loop = For(k, 0, 4, ForKind.UNROLLED, loop)
    loop = For(j, 0, 4, ForKind.VECTORIZED, loop)
    loop = For(i, 0, 2, ForKind.PARALLEL, loop)
    h = Var("a", "handle")
    check(PrimFunc([h], loop, buffer_map={h: A}, attrs={"global_symbol": "main"}), '''
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64,), "float32")):
    for i in T.parallel(2):
        for j in T.vectorized(4):
            for k in T.unroll(4):
                for t in T.thread_binding(32, thread="threadIdx.x"):
                    A[i + j + k + t] = T.float32(0.0)
''')


def test_loops_with_min_and_annotations():
    i, j = Var("i"), Var("j")
    inner = For(j, 0, 8, ForKind.SERIAL, Evaluate(j), annotations={"pragma_unroll": 1})
    check(For(i, 2, 8, ForKind.SERIAL, inner), '''
for i in range(2, 10):
    for j in T.serial(8, annotations={"pragma_unroll": 1}):
        T.evaluate(j)
''')
    n = Var("n")
    func = PrimFunc([n], For(i, 1, n, ForKind.PARALLEL, Evaluate(0)), attrs={"global_symbol": "f"})
    check(func, '''
# from tvm.script import tir as T

@T.prim_func
def f(n: T.int32):
    for i in T.parallel(1, 1 + n):
        T.evaluate(0)
''')


def test_grid_stops_at_dependent_extent():
    i, j = Var("i"), Var("j")
    loop = For(i, 0, 4, ForKind.SERIAL, For(j, 0, i + 1, ForKind.SERIAL, Evaluate(0)))
    check(loop, '''
for i in range(4):
    for j in range(i + 1):
        T.evaluate(0)
''')


def test_duplicate_names_get_suffixes():
    outer, inner = Var("i"), Var("i")
    loop = For(outer, 0, 4, ForKind.SERIAL,
               For(inner, 0, 4, ForKind.PARALLEL, Evaluate(outer + inner)))
    check(loop, '''
for i in range(4):
    for i_1 in T.parallel(4):
        T.evaluate(i + i_1)
''')
    # siblings may reuse the name once the first loop is closed
    first, second = Var("i"), Var("i")
    seq = SeqStmt([For(first, 0, 2, ForKind.PARALLEL, Evaluate(first)),
                   For(second, 0, 2, ForKind.PARALLEL, Evaluate(second))])
    check(seq, '''
for i in T.parallel(2):
    T.evaluate(i)
for i in T.parallel(2):
    T.evaluate(i)
''')


# -- expressions ----------------------------------------------------------------------------
a, b, c = Var("a"), Var("b"), Var("c")
x, y = Var("x", "float32"), Var("y", "float32")
p, q = Var("p", "bool"), Var("q", "bool")


@pytest.mark.parametrize("expr, text", [
    (a * 4 + 1, "a * 4 + 1"),
    ((a + b) * c, "(a + b) * c"),
    (a - (b - c), "a - (b - c)"),
    (a - b - c, "a - b - c"),
    (a // b * c, "a // b * c"),
    (a * (b // c), "a * (b // c)"),
    (a % 8, "a % 8"),
    (FloorDiv(a, b + 1), "a // (b + 1)"),
    (-a, "a * -1"),
    (truncdiv(a, b), "T.Div(a, b)"),
    (Mod(a, b), "T.truncmod(a, b)"),
    (Div(x, y), "x / y"),
    (Div(x, x + y), "x / (x + y)"),
    (tmax(a, b), "T.max(a, b)"),
    (a < b, "a < b"),
    ((a < b) & (b <= c), "a < b and b <= c"),
    ((a < b) | Not(p), "a < b or not p"),
    (Not(p & q), "not (p and q)"),
    (p & (q | p), "p and (q or p)"),
    (Select(p, a, b), "T.Select(p, a, b)"),
    (if_then_else(p, x, y), "T.if_then_else(p, x, y)"),
    (exp(x + y), "T.exp(x + y)"),
    (Cast("float32", a) * x, "T.Cast(\"float32\", a) * x"),
    (Add(IntImm("int32", 1), IntImm("int32", 2)), "T.Add(1, 2)"),
    (Mul(a, IntImm("int64", 2)), "T.Mul(a, T.int64(2))"),
    (StringImm("hello"), '"hello"'),
])
def test_expression_text(expr, text):
    assert script(expr) == text


@pytest.mark.parametrize("expr, text", [
    (IntImm("int32", 128), "128"),
    (IntImm("int32", -1), "-1"),
    (IntImm("int64", 128), "T.int64(128)"),
    (IntImm("uint8", 7), "T.uint8(7)"),
    (IntImm("bool", True), "T.bool(True)"),
    (FloatImm("float32", 0.0), "T.float32(0.0)"),
    (FloatImm("float32", 0.5), "T.float32(0.5)"),
    (FloatImm("float32", 0.1), "T.float32(0.10000000000000001)"),
    (FloatImm("float64", 1e-5), "T.float64(1.0000000000000001e-05)"),
    (FloatImm("float16", 1.0), "T.float16(1.0)"),
    (FloatImm("float32", 1e20), "T.float32(100000000000000000000.0)"),
    (FloatImm("float32", float("-inf")), 'T.float32("-inf")'),
])
def test_constants(expr, text):
    assert script(expr) == text


def test_verbose_expr_declares_variables():
    check(a * 4 + 1, "a = T.int32()\na * 4 + 1", verbose_expr=True)
    n = SizeVar("n", "int64")
    check(n + 1, "n = T.int64(is_size_var=True)\nn + T.int64(1)", verbose_expr=True)


# -- statements ------------------------------------------------------------------------------
def test_buffer_store_declares_buffer():
    A = decl_buffer((128, 128), "float16", "A")
    check(BufferStore(A, A[1, 2] + FloatImm("float16", 1.0), [1, 2]), '''
A = T.Buffer((128, 128), "float16")
A[1, 2] = A[1, 2] + T.float16(1.0)
''')


def test_let_assert_attr_are_concise_at_the_end_of_a_body():
    v = Var("v")
    body = LetStmt(v, a + 1, AssertStmt(v > 0, StringImm("v must be positive"),
                                       AttrStmt(v, "pragma_unroll", IntImm("int32", 1), Evaluate(v))))
    func = PrimFunc([a], body, attrs={"global_symbol": "f"})
    check(func, '''
# from tvm.script import tir as T

@T.prim_func
def f(a: T.int32):
    v: T.int32 = a + 1
    assert v > 0, "v must be positive"
    T.attr(v, "pragma_unroll", 1)
    T.evaluate(v)
''')


def test_let_and_assert_alone_use_with():
    v = Var("v", "float32")
    check(LetStmt(v, FloatImm("float32", 10.0), Evaluate(0)), '''
with T.LetStmt(T.float32(10.0)) as v:
    T.evaluate(0)
''')
    check(AssertStmt(IntImm("bool", True), StringImm("assertion"), Evaluate(0)), '''
with T.Assert(T.bool(True), "assertion"):
    T.evaluate(0)
''')


def test_if_while_and_evaluate_of_call():
    A = decl_buffer((16,), "float32", "A")
    i = Var("i")
    body = IfThenElse(convert(i % 2 == 0), BufferStore(A, exp(A[i]), [i]), Evaluate(exp(A[i])))
    h = Var("a", "handle")
    func = PrimFunc([h], For(i, 0, 16, ForKind.SERIAL, body), buffer_map={h: A},
                    attrs={"global_symbol": "f"})
    check(func, '''
# from tvm.script import tir as T

@T.prim_func
def f(A: T.Buffer((16,), "float32")):
    for i in range(16):
        if i % 2 == 0:
            A[i] = T.exp(A[i])
        else:
            T.exp(A[i])
''')
    check(While(a < 10, Evaluate(0)), '''
a = T.int32()
while a < 10:
    T.evaluate(0)
''')


def test_allocate_and_decl_buffer():
    data = Var("buf", "handle")
    buf = decl_buffer((128, 128), "float32", "buffer", data=data)
    check(Allocate(data, "float32", [128, 128], IntImm("bool", True),
                   DeclBuffer(buf, Evaluate(0))), '''
with T.decl_buffer((128, 128)) as buffer:
    T.evaluate(0)
''')
    data2 = Var("v", "handle")
    check(Allocate(data2, "float32", [128, 128], IntImm("bool", True), Evaluate(data2)), '''
with T.allocate([128, 128], "float32", "global") as v:
    T.evaluate(v)
''')


def test_block_with_match_buffer_and_no_realize():
    A = decl_buffer((128, 128), "float32", "A")
    sub = decl_buffer((16, 16), "float32", "sub")
    from mlckit.tir import MatchBufferRegion
    vi = spatial("vi", 8)
    region = BufferRegion(A, [Range(vi.var * 16, 16), Range(0, 16)])
    blk = Block([vi], [region], [], "tile", Evaluate(0),
                match_buffers=[MatchBufferRegion(sub, region)])
    check(blk, '''
with T.block("tile", no_realize=True):
    vi = T.axis.spatial(8)
    A = T.Buffer((128, 128))
    T.reads(A[vi * 16:vi * 16 + 16, 0:16])
    T.writes()
    sub = T.match_buffer(A[vi * 16:vi * 16 + 16, 0:16], (16, 16))
    T.evaluate(0)
''')



def test_round_trip_through_the_parser():
    from tests.script.roundtrip import assert_roundtrip

    assert_roundtrip(IRModule({"mm_relu": mm_relu()}))
