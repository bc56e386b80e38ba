"""The TVMScript printer on Relax built with the node constructors (expected: TVM v0.23 text)."""

import io

import numpy as np
import pytest

from mlckit.ir import GlobalVar, IRModule, register_op
from mlckit.relax import (
    Call,
    Constant,
    DataflowBlock,
    DataflowVar,
    DataTypeImm,
    ExternFunc,
    FuncStructInfo,
    Function,
    If,
    MatchCast,
    ObjectStructInfo,
    PrimStructInfo,
    PrimValue,
    SeqExpr,
    ShapeExpr,
    ShapeStructInfo,
    StringImm,
    TensorStructInfo,
    Tuple,
    TupleGetItem,
    TupleStructInfo,
    Var,
    VarBinding,
)
from mlckit.relax.expr import BindingBlock
from mlckit.script.printer import script, show, to_html
from mlckit.tir import Evaluate, PrimFunc
from mlckit.tir import Var as TVar

CALL_TIR = register_op("relax.call_tir")
CALL_DPS_PACKED = register_op("relax.call_dps_packed")
CALL_PURE_PACKED = register_op("relax.call_pure_packed")
PRINT = register_op("relax.print")
ADD = register_op("relax.add")
RELU = register_op("relax.nn.relu")
SUM = register_op("relax.sum")


def check(obj, expected: str, **options):
    assert script(obj, **options) == expected.strip("\n")


def tensor(shape, dtype="float32"):
    return TensorStructInfo(list(shape), dtype)


def public(func: Function, name: str) -> Function:
    return func.with_attr("global_symbol", name)


def mlp_module() -> IRModule:
    n = TVar("n", "int64")
    x = Var("x", tensor((n, 784)))
    w0, b0 = Var("w0", tensor((128, 784))), Var("b0", tensor((128,)))
    w1, b1 = Var("w1", tensor((10, 128))), Var("b1", tensor((10,)))
    linear0, relu0, linear1 = GlobalVar("linear0"), GlobalVar("relu0"), GlobalVar("linear1")
    lv0 = DataflowVar("lv0", tensor((n, 128)))
    lv1 = DataflowVar("lv1", tensor((n, 128)))
    out = Var("out", tensor((n, 10)))
    block = DataflowBlock([
        VarBinding(lv0, Call(CALL_TIR, [linear0, Tuple([x, w0, b0])], sinfo_args=[tensor((n, 128))])),
        VarBinding(lv1, Call(CALL_TIR, [relu0, Tuple([lv0])], sinfo_args=[tensor((n, 128))])),
        VarBinding(out, Call(CALL_TIR, [linear1, Tuple([lv1, w1, b1])], sinfo_args=[tensor((n, 10))])),
    ])
    main = Function([x, w0, b0, w1, b1], SeqExpr([block], out), tensor((n, 10)))
    kernel = PrimFunc([], Evaluate(0))
    return IRModule({
        "main": public(main, "main"),
        linear0: kernel.with_attr("global_symbol", "linear0"),
        relu0: kernel.with_attr("global_symbol", "relu0"),
        linear1: kernel.with_attr("global_symbol", "linear1"),
    })


def test_mlp_module_with_call_tir_and_symbolic_batch():
    check(mlp_module(), '''
# from tvm.script import ir as I
# from tvm.script import tir as T
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func
    def linear0():
        T.evaluate(0)

    @T.prim_func
    def linear1():
        T.evaluate(0)

    @T.prim_func
    def relu0():
        T.evaluate(0)

    @R.function
    def main(x: R.Tensor(("n", 784), dtype="float32"), w0: R.Tensor((128, 784), dtype="float32"), b0: R.Tensor((128,), dtype="float32"), w1: R.Tensor((10, 128), dtype="float32"), b1: R.Tensor((10,), dtype="float32")) -> R.Tensor(("n", 10), dtype="float32"):
        n = T.int64()
        cls = Module
        with R.dataflow():
            lv0 = R.call_tir(cls.linear0, (x, w0, b0), out_sinfo=R.Tensor((n, 128), dtype="float32"))
            lv1 = R.call_tir(cls.relu0, (lv0,), out_sinfo=R.Tensor((n, 128), dtype="float32"))
            out = R.call_tir(cls.linear1, (lv1, w1, b1), out_sinfo=R.Tensor((n, 10), dtype="float32"))
            R.output(out)
        return out
''')


def test_module_alias_can_be_disabled():
    text = script(mlp_module(), module_alias="")
    assert "cls" not in text
    assert "R.call_tir(Module.linear0, (x, w0, b0)" in text


def test_standalone_function_annotations_and_outputs():
    x = Var("x", tensor((4, 4)))
    lv = DataflowVar("lv", tensor((4, 4)))
    y = Var("y", tensor((4, 4)))
    z = Var("z", tensor((4, 4)))
    block = DataflowBlock([
        VarBinding(lv, Call(ADD, [x, x])),
        VarBinding(y, Call(RELU, [lv])),
        VarBinding(z, Call(ADD, [y, lv])),
    ])
    func = Function([x], SeqExpr([block], Tuple([y, z])),
                    TupleStructInfo([tensor((4, 4)), tensor((4, 4))]))
    check(public(func, "f"), '''
# from tvm.script import relax as R

@R.function
def f(x: R.Tensor((4, 4), dtype="float32")) -> R.Tuple(R.Tensor((4, 4), dtype="float32"), R.Tensor((4, 4), dtype="float32")):
    with R.dataflow():
        lv: R.Tensor((4, 4), dtype="float32") = R.add(x, x)
        y: R.Tensor((4, 4), dtype="float32") = R.nn.relu(lv)
        z: R.Tensor((4, 4), dtype="float32") = R.add(y, lv)
        R.output(y, z)
    return (y, z)
''')
    # without a global symbol the function is private and named main
    assert script(func).splitlines()[2:4] == [
        "@R.function(private=True)",
        'def main(x: R.Tensor((4, 4), dtype="float32")) -> R.Tuple(R.Tensor((4, 4), dtype="float32"), R.Tensor((4, 4), dtype="float32")):',
    ]


def test_packed_calls_match_cast_and_impure_function():
    x = Var("x", TensorStructInfo(None, "float32", ndim=2))
    m, n = TVar("m", "int64"), TVar("n", "int64")
    y = Var("y", tensor((m, n)))
    a = Var("a", tensor((m, n)))
    b = Var("b", tensor((m, n)))
    c = Var("c", tensor((m, n)))
    bindings = BindingBlock([
        MatchCast(y, x, tensor((m, n))),
        VarBinding(a, Call(ExternFunc("my_func"), [y], sinfo_args=[tensor((m, n))])),
        VarBinding(b, Call(CALL_DPS_PACKED, [ExternFunc("env.relu"), Tuple([a])],
                           sinfo_args=[tensor((m, n))])),
        VarBinding(c, Call(CALL_PURE_PACKED, [ExternFunc("env.copy"), b],
                           sinfo_args=[tensor((m, n))])),
    ])
    func = Function([x], SeqExpr([bindings], c), TensorStructInfo(None, "float32", ndim=2), is_pure=False,
                    attrs={"global_symbol": "main"})
    check(func, '''
# from tvm.script import tir as T
# from tvm.script import relax as R

@R.function(pure=False)
def main(x: R.Tensor(dtype="float32", ndim=2)) -> R.Tensor(dtype="float32", ndim=2):
    m = T.int64()
    n = T.int64()
    y: R.Tensor((m, n), dtype="float32") = R.match_cast(x, R.Tensor((m, n), dtype="float32"))
    a: R.Tensor((m, n), dtype="float32") = R.call_packed("my_func", y, sinfo_args=(R.Tensor((m, n), dtype="float32"),))
    b = R.call_dps_packed("env.relu", (a,), out_sinfo=R.Tensor((m, n), dtype="float32"))
    c: R.Tensor((m, n), dtype="float32") = R.call_pure_packed("env.copy", b, sinfo_args=(R.Tensor((m, n), dtype="float32"),))
    return c
''')


def test_symbolic_var_introduced_in_body_is_declared_at_the_top():
    x = Var("x", TensorStructInfo(None, "float32", ndim=1))
    k = TVar("k", "int64")
    y = Var("y", tensor((k,)))
    func = Function([x], SeqExpr([BindingBlock([MatchCast(y, x, tensor((k,)))])], y),
                    TensorStructInfo(None, "float32", ndim=1), attrs={"global_symbol": "main"})
    check(func, '''
# from tvm.script import tir as T
# from tvm.script import relax as R

@R.function
def main(x: R.Tensor(dtype="float32", ndim=1)) -> R.Tensor(dtype="float32", ndim=1):
    k = T.int64()
    y: R.Tensor((k,), dtype="float32") = R.match_cast(x, R.Tensor((k,), dtype="float32"))
    return y
''')


def test_print_binding_with_void_struct_info_and_call_attrs():
    x = Var("x", tensor((2, 3)))
    unit = Var("unit", TupleStructInfo([]))
    s = Var("s", tensor((2,)))
    body = BindingBlock([
        VarBinding(unit, Call(PRINT, [StringImm("x: {}"), x])),
        VarBinding(s, Call(SUM, [x], attrs={"keepdims": False, "axis": [1]})),
    ])
    func = Function([x], SeqExpr([body], s), tensor((2,)), is_pure=False,
                    attrs={"global_symbol": "main"})
    check(func, '''
# from tvm.script import relax as R

@R.function(pure=False)
def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
    R.print(x, format=R.str("x: {}"))
    s: R.Tensor((2,), dtype="float32") = R.sum(x, axis=[1], keepdims=False)
    return s
''')


def test_if_expression_binding():
    cond = Var("cond", tensor((), "bool"))
    x = Var("x", tensor((3,)))
    y = Var("y", tensor((3,)))
    t, f = Var("t", tensor((3,))), Var("f", tensor((3,)))
    branch = If(cond,
                SeqExpr([BindingBlock([VarBinding(t, Call(ADD, [x, x]))])], t),
                SeqExpr([BindingBlock([VarBinding(f, Call(RELU, [x]))])], f))
    func = Function([cond, x], SeqExpr([BindingBlock([VarBinding(y, branch)])], y),
                    tensor((3,)), attrs={"global_symbol": "main"})
    check(func, '''
# from tvm.script import relax as R

@R.function
def main(cond: R.Tensor((), dtype="bool"), x: R.Tensor((3,), dtype="float32")) -> R.Tensor((3,), dtype="float32"):
    if cond:
        t: R.Tensor((3,), dtype="float32") = R.add(x, x)
        y: R.Tensor((3,), dtype="float32") = t
    else:
        f: R.Tensor((3,), dtype="float32") = R.nn.relu(x)
        y: R.Tensor((3,), dtype="float32") = f
    return y
''')


def test_private_function_extern_func_and_func_attr_in_module():
    x = Var("x", tensor((), "int32"))
    helper = Function([x], SeqExpr([], x), tensor((), "int32"), attrs={"some_attr": 1})
    y = Var("y", tensor((), "int32"))
    main = Function([y], SeqExpr([], y), tensor((), "int32"), attrs={"global_symbol": "main"})
    mod = IRModule({"main": main, "helper": helper, "my_ext": ExternFunc("my_ext")})
    check(mod, '''
# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    my_ext = R.ExternFunc("my_ext")
    @R.function(private=True)
    def helper(x: R.Tensor((), dtype="int32")) -> R.Tensor((), dtype="int32"):
        R.func_attr({"some_attr": 1})
        return x

    @R.function
    def main(y: R.Tensor((), dtype="int32")) -> R.Tensor((), dtype="int32"):
        return y
''')


# -- expressions and struct info alone ------------------------------------------------------
def _vars():
    x = TVar("x", "int64")
    return (Var("a", tensor((1, x, 3))), Var("b", tensor((2,))))


@pytest.mark.parametrize("make, text", [
    (lambda: ObjectStructInfo(), "R.Object"),
    (lambda: PrimStructInfo("float32"), 'R.Prim("float32")'),
    (lambda: PrimStructInfo("int64", TVar("v", "int64")), "R.Prim(value=v)"),
    (lambda: ShapeStructInfo(ndim=-1), "R.Shape(ndim=-1)"),
    (lambda: ShapeStructInfo([1, 2, 3]), "R.Shape([1, 2, 3])"),
    (lambda: TensorStructInfo(None, "float32", ndim=2), 'R.Tensor(dtype="float32", ndim=2)'),
    (lambda: TensorStructInfo([10, 10], ""), "R.Tensor((10, 10))"),
    (lambda: TensorStructInfo(None, ""), "R.Tensor"),
    (lambda: TupleStructInfo([]), "R.Tuple"),
    (lambda: TupleStructInfo([PrimStructInfo("float32"), ObjectStructInfo()]),
     'R.Tuple(R.Prim("float32"), R.Object)'),
    (lambda: FuncStructInfo([ObjectStructInfo()], tensor((1, 2, 3))),
     'R.Callable((R.Object,), R.Tensor((1, 2, 3), dtype="float32"), True)'),
    (lambda: FuncStructInfo.opaque_func(), "R.Callable"),
    (lambda: PrimValue(1), "R.prim_value(1)"),
    (lambda: StringImm("hello"), 'R.str("hello")'),
    (lambda: DataTypeImm("float32"), 'R.dtype("float32")'),
    (lambda: ShapeExpr([1, 2, 3]), "R.shape([1, 2, 3])"),
    (lambda: Tuple([]), "R.tuple()"),
    (lambda: Tuple(list(_vars())), "(a, b)"),
    (lambda: TupleGetItem(Tuple(list(_vars())), 1), "(a, b)[1]"),
    (lambda: ExternFunc("env.linear"), 'R.ExternFunc("env.linear")'),
    (lambda: Constant(np.array(1.5, "float32")), 'R.const(1.5, "float32")'),
    (lambda: Constant(np.array(3, "int64")), 'R.const(3, "int64")'),
    (lambda: Constant(np.array(False)), 'R.const(False, "bool")'),
    (lambda: Constant(np.array([[1, 2.5]], "float32")), 'R.const([[1.0, 2.5]], "float32")'),
    (lambda: Constant(np.array([0.1], "float32")), 'R.const([0.10000000149011612], "float32")'),
])
def test_relax_leaf_text(make, text):
    assert script(make()) == text


def test_large_constant_goes_to_metadata():
    const = Constant(np.zeros((64, 64), "float32"))
    x = Var("x", tensor((64, 64)))
    y = Var("y", tensor((64, 64)))
    func = Function([x], SeqExpr([BindingBlock([VarBinding(y, Call(ADD, [x, const]))])], y),
                    tensor((64, 64)), attrs={"global_symbol": "main"})
    text = script(func)
    assert 'R.add(x, metadata["relax.Constant"][0])' in text
    assert text.endswith("# Metadata omitted. Use max_inline_const=... in script() to print large constants inline.")
    assert 'R.const([[0.0' in script(func, max_inline_const=10_000)


def test_verbose_expr_declares_relax_and_tir_vars():
    a, _ = _vars()
    check(a, '''
x = T.int64()
a: R.Tensor((1, x, 3), dtype="float32")
a
''', verbose_expr=True)


def test_builtin_prefixes_are_never_used_as_names():
    x = TVar("x", "int64")
    r, t = Var("R", tensor((1, x))), Var("T", tensor((1, x)))
    check(VarBinding(t, Call(RELU, [r])), '''
x = T.int64()
R_1: R.Tensor((1, x), dtype="float32")
T_1: R.Tensor((1, x), dtype="float32") = R.nn.relu(R_1)
''')


def test_dataflow_block_alone():
    x = TVar("x", "int64")
    a = Var("a", tensor((1, x)))
    b = DataflowVar("b", tensor((1, x)))
    c = Var("c", tensor((1, x)))
    block = DataflowBlock([VarBinding(b, Call(RELU, [a])), VarBinding(c, Call(RELU, [b]))])
    check(block, '''
x = T.int64()
a: R.Tensor((1, x), dtype="float32")
with R.dataflow():
    b: R.Tensor((1, x), dtype="float32") = R.nn.relu(a)
    c: R.Tensor((1, x), dtype="float32") = R.nn.relu(b)
    R.output(c)
''')


def test_call_tir_with_tir_vars_alone():
    x = TVar("x", "int64")
    a = Var("a", tensor((1, x, 3)))
    call = Call(CALL_TIR, [GlobalVar("tir_func"), Tuple([a]), ShapeExpr([x])],
                sinfo_args=[tensor((1, x, 3))])
    check(call, 'R.call_tir(tir_func, (a,), out_sinfo=R.Tensor((1, x, 3), dtype="float32"), tir_vars=R.shape([x]))')


# -- views -----------------------------------------------------------------------------------
def test_repr_html_is_highlighted_with_inline_styles():
    html = mlp_module()._repr_html_()
    assert "<span" in html and "style=" in html
    assert "<script" not in html.lower()
    assert "class=" not in html.replace('class="highlight"', "")
    assert to_html(mlp_module()) == html


def test_show_prints_plain_text_when_not_a_tty(capsys):
    mod = mlp_module()
    show(mod)
    assert capsys.readouterr().out == script(mod) + "\n"
    mod.show()
    assert "\x1b[" not in capsys.readouterr().out


def test_show_highlights_on_a_tty():
    from mlckit.script.printer.highlight import show_text

    class Tty(io.StringIO):
        def isatty(self):
            return True

    out = Tty()
    show_text("x = 1", file=out)
    assert "\x1b[" in out.getvalue()


def test_pygments_is_not_imported_by_mlckit():
    import subprocess
    import sys

    code = "import sys, mlckit, mlckit.script.printer; print('pygments' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"



def _dense(k: int, m: int, name: str):
    """A PrimFunc with the signature of ``linear``: X (n, k), W (m, k), B (m,) -> Z (n, m)."""
    from mlckit.script import tir as T

    @T.prim_func
    def kernel(x: T.handle, w: T.Buffer((m, k), "float32"), b: T.Buffer((m,), "float32"),
               z: T.handle):
        n = T.int64()
        X = T.match_buffer(x, (n, k), "float32")
        Z = T.match_buffer(z, (n, m), "float32")
        for i, j in T.grid(n, m):
            Z[i, j] = X[i, 0] * w[j, 0] + b[j]

    return kernel.with_attr("global_symbol", name)


def test_round_trip_through_the_parser():
    """The MLP module, its kernels given signatures that fit its calls (parsing checks each
    R.call_tir against its PrimFunc, as TVM's well-formedness does)."""
    from mlckit.script import tir as T
    from tests.script.roundtrip import assert_roundtrip

    @T.prim_func
    def relu0(x: T.handle, y: T.handle):
        n = T.int64()
        X = T.match_buffer(x, (n, 128), "float32")
        Y = T.match_buffer(y, (n, 128), "float32")
        for i, j in T.grid(n, 128):
            Y[i, j] = T.max(X[i, j], T.float32(0))

    mod = mlp_module()
    for gv in list(mod.functions):
        if gv.name_hint != "main":
            mod.functions[gv] = {"linear0": _dense(784, 128, "linear0"),
                                 "relu0": relu0.with_attr("global_symbol", "relu0"),
                                 "linear1": _dense(128, 10, "linear1")}[gv.name_hint]
    assert_roundtrip(mod)


def test_round_trip_refuses_stub_kernels_that_do_not_fit_their_calls():
    from mlckit.error import TVMError
    from mlckit.script import from_source

    with pytest.raises(TVMError, match="R.call_tir passes 3 inputs to 'linear0', which takes no "
                                       "parameters"):
        from_source(mlp_module().script())
