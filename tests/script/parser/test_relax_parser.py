"""The Relax and IRModule dialects: scripts parse to the IR built directly with the IRBuilder."""

import numpy as np

import mlckit
from mlckit import relax as rx
from mlckit.ir import assert_structural_equal
from mlckit.relax.struct_info import TensorStructInfo
from mlckit.script import from_source
from mlckit.script import ir as I  # noqa: E741
from mlckit.script import relax as R
from mlckit.script.ir_builder.base import IRBuilder
from mlckit.tir import Var as TirVar


def build(body):
    with IRBuilder() as ib:
        body()
    return ib.get()


def test_simple_function_equals_builder():
    func = from_source('''
@R.function
def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    y = R.call_dps_packed("env.relu", (x,), R.Tensor((4,), "float32"))
    return y
''')

    def body():
        with R.function():
            R.func_name("main")
            x = R.arg("x", R.Tensor((4,), "float32"))
            R.func_ret_struct_info(R.Tensor((4,), "float32"))
            y = R.emit(R.call_dps_packed("env.relu", (x,), R.Tensor((4,), "float32")))
            R.func_ret_value(y)

    assert_structural_equal(func, build(body))
    assert func.attrs["global_symbol"] == "main"


def test_symbolic_dims_are_shared_across_signature_and_body():
    func = from_source('''
@R.function
def main(x: R.Tensor(("n", 784), "float32"), w: R.Tensor((128, 784), "float32")):
    n = tvm.tir.Var("n", "int64")
    y = R.call_dps_packed("env.linear", (x, w), R.Tensor((n, 128), "float32"))
    return y
''')
    x_dims = func.params[0].struct_info.dims
    y = func.body.blocks[0].bindings[0].var
    assert y.struct_info.dims[0] is x_dims[0]
    assert x_dims[0].dtype == "int64" and x_dims[0].name_hint == "n"
    assert func.ret_struct_info.dims[0] is x_dims[0]

    def body():
        with R.function():
            R.func_name("main")
            x = R.arg("x", R.Tensor(("n", 784), "float32"))
            w = R.arg("w", R.Tensor((128, 784), "float32"))
            n = x.struct_info.dims[0]
            R.func_ret_value(R.emit(R.call_dps_packed("env.linear", (x, w),
                                                      R.Tensor((n, 128), "float32"))))

    assert_structural_equal(func, build(body))


def test_string_dims_in_builder_are_shared_in_one_function():
    def body():
        with R.function():
            R.func_name("f")
            a = R.arg("a", R.Tensor(("n",), "float32"))
            b = R.arg("b", R.Tensor(("n", "m"), "float32"))
            assert a.struct_info.dims[0] is b.struct_info.dims[0]
            R.func_ret_value(a)

    build(body)


def test_dataflow_outputs_become_vars():
    func = from_source('''
@R.function
def main(x: R.Tensor((4,), "float32")):
    with R.dataflow():
        lv0 = R.call_dps_packed("env.relu", (x,), R.Tensor((4,), "float32"))
        gv = R.call_dps_packed("env.relu", (lv0,), R.Tensor((4,), "float32"))
        R.output(gv)
    return gv
''')
    (block,) = func.body.blocks
    assert isinstance(block, rx.DataflowBlock)
    lv0, gv = (b.var for b in block.bindings)
    assert type(lv0) is rx.DataflowVar and type(gv) is rx.Var
    assert func.body.body is gv

    def body():
        with R.function():
            R.func_name("main")
            x = R.arg("x", R.Tensor((4,), "float32"))
            with R.dataflow():
                lv0 = R.emit(R.call_dps_packed("env.relu", (x,), R.Tensor((4,), "float32")))
                gv = R.emit(R.call_dps_packed("env.relu", (lv0,), R.Tensor((4,), "float32")))
                R.output(gv)
            R.func_ret_value(gv)

    assert_structural_equal(func, build(body))


def test_return_inside_dataflow_block_outputs_the_var():
    func = from_source('''
@R.function
def main(x: R.Tensor((4,), "float32")):
    with R.dataflow():
        lv0 = R.call_dps_packed("env.relu", (x,), R.Tensor((4,), "float32"))
        return lv0
''')
    assert type(func.body.body) is rx.Var


def test_two_dataflow_blocks_with_a_binding_between():
    func = from_source('''
@R.function(pure=False)
def main(x: R.Tensor((4,), "float32")):
    with R.dataflow():
        a = R.call_dps_packed("env.relu", (x,), R.Tensor((4,), "float32"))
        R.output(a)
    b = R.call_packed("env.log", a, sinfo_args=R.Tensor((4,), "float32"))
    with R.dataflow():
        c = R.call_dps_packed("env.relu", (b,), R.Tensor((4,), "float32"))
        R.output(c)
    return c
''')
    kinds = [type(b).__name__ for b in func.body.blocks]
    assert kinds == ["DataflowBlock", "BindingBlock", "DataflowBlock"]
    assert func.is_pure is False


def test_adjacent_dataflow_blocks_merge_as_in_tvm():
    func = from_source('''
@R.function
def main(x: R.Tensor((4,), "float32")):
    with R.dataflow():
        a = R.call_dps_packed("env.relu", (x,), R.Tensor((4,), "float32"))
        R.output(a)
    with R.dataflow():
        c = R.call_dps_packed("env.relu", (a,), R.Tensor((4,), "float32"))
        R.output(c)
    return c
''')
    assert [type(b).__name__ for b in func.body.blocks] == ["DataflowBlock"]


def test_module_global_vars_resolve_through_cls_and_class_name():
    mod = from_source('''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n",), "float32")) -> R.Tensor(("n",), "float32"):
        cls = Module
        y = cls.helper(x)
        z = Module.helper(y)
        return z

    @R.function(private=True)
    def helper(x: R.Tensor(("m",), "float32")) -> R.Tensor(("m",), "float32"):
        return x
''')
    gv = mod.get_global_var("helper")
    main = mod["main"]
    call = main.body.blocks[0].bindings[0].value
    assert call.op is gv
    n = main.params[0].struct_info.dims[0]
    # the callee's return struct info, with its symbolic dims matched to the argument's
    assert main.body.blocks[0].bindings[0].var.struct_info.dims[0] is n
    assert "global_symbol" not in mod["helper"].attrs
    assert mod["main"].attrs["global_symbol"] == "main"


def test_module_equals_builder():
    mod = from_source('''
@I.ir_module
class Module:
    I.module_attrs({"purpose": "test"})

    @R.function
    def main(x: R.Tensor((2, 2), "float32")) -> R.Tensor((2, 2), "float32"):
        R.func_attr({"opt_level": 3})
        y = Module.helper(x)
        return y

    @R.function(private=True)
    def helper(x: R.Tensor((2, 2), "float32")) -> R.Tensor((2, 2), "float32"):
        return x
''')

    def body():
        with I.ir_module():
            I.module_attrs({"purpose": "test"})
            main_gv = I.decl_function("main", None)
            helper_gv = I.decl_function(
                "helper", rx.Function([rx.Var("x", TensorStructInfo([2, 2], "float32"))],
                                      rx.Tuple([]), TensorStructInfo([2, 2], "float32")))
            assert main_gv.name_hint == "main"
            with R.function():
                R.func_name("main")
                x = R.arg("x", R.Tensor((2, 2), "float32"))
                R.func_ret_struct_info(R.Tensor((2, 2), "float32"))
                R.func_attr({"opt_level": 3})
                R.func_ret_value(R.emit(helper_gv(x)))
            with R.function(is_private=True):
                R.func_name("helper")
                x = R.arg("x", R.Tensor((2, 2), "float32"))
                R.func_ret_struct_info(R.Tensor((2, 2), "float32"))
                R.func_ret_value(x)

    expected = build(body)
    assert_structural_equal(mod, expected)
    assert mod.attrs == {"purpose": "test"}


def test_out_ty_is_an_alias_of_out_sinfo():
    a = from_source('''
@R.function
def f(x: R.Tensor((4,), "float32")):
    y = R.call_dps_packed("env.relu", (x,), out_ty=R.Tensor((4,), "float32"))
    return y
''')
    b = from_source('''
@R.function
def f(x: R.Tensor((4,), "float32")):
    y = R.call_dps_packed("env.relu", (x,), out_sinfo=R.Tensor((4,), "float32"))
    return y
''')
    assert_structural_equal(a, b)


def test_match_cast_defines_symbolic_vars():
    func = from_source('''
@R.function
def f(x: R.Tensor(ndim=2, dtype="float32")):
    n = tvm.tir.Var("n", "int64")
    m = tvm.tir.Var("m", "int64")
    y = R.match_cast(x, R.Tensor((n, m), "float32"))
    z = R.call_dps_packed("env.relu", (y,), R.Tensor((n, m), "float32"))
    return z
''')
    mc = func.body.blocks[0].bindings[0]
    assert isinstance(mc, rx.MatchCast)
    n = mc.struct_info.dims[0]
    assert func.body.blocks[0].bindings[1].var.struct_info.dims[0] is n
    # n is not defined by the parameters: the return type forgets the shape, keeps the rank
    assert func.ret_struct_info.shape is None and func.ret_struct_info.ndim == 2

    def body():
        with R.function():
            R.func_name("f")
            x = R.arg("x", R.Tensor(ndim=2, dtype="float32"))
            n, m = TirVar("n", "int64"), TirVar("m", "int64")
            y = R.emit_match_cast(x, R.Tensor((n, m), "float32"))
            R.func_ret_value(R.emit(R.call_dps_packed("env.relu", (y,),
                                                      R.Tensor((n, m), "float32"))))

    assert_structural_equal(func, build(body))


def test_tuples_unpacking_and_indexing():
    func = from_source('''
@R.function
def f(x: R.Tensor((2,), "float32"), s: R.Shape([2])):
    t = (x, s)
    a = t[0]
    b, c = t
    u = R.tuple(a, R.shape([1, 2]))
    return u
''')
    bindings = func.body.blocks[0].bindings
    assert isinstance(bindings[0].value, rx.Tuple)
    assert isinstance(bindings[1].value, rx.TupleGetItem) and bindings[1].value.index == 0
    assert [b.value.index for b in bindings[2:4]] == [0, 1]


def test_values_const_prim_str_dtype():
    func = from_source('''
@R.function
def f(x: R.Tensor((2,), "float32")):
    c = R.const(1.5, "float32")
    d = R.const(np.arange(4, dtype="int32"))
    p = R.prim_value(3)
    s = R.str("hello")
    t = R.dtype("float16")
    return (c, d, p, s, t)
''')
    c, d, p, s, t = (b.value for b in func.body.blocks[0].bindings)
    assert isinstance(c, rx.Constant) and c.data.dtype == np.float32
    assert d.struct_info.dims[0].value == 4
    assert isinstance(p, rx.PrimValue) and isinstance(s, rx.StringImm)
    assert isinstance(t, rx.DataTypeImm) and t.value == "float16"


def test_if_else_binds_the_shared_variable():
    func = from_source('''
@R.function
def f(c: R.Tensor((), "bool"), x: R.Tensor((4,), "float32")):
    if c:
        w = R.call_dps_packed("env.relu", (x,), R.Tensor((4,), "float32"))
        y = R.call_dps_packed("env.relu", (w,), R.Tensor((4,), "float32"))
    else:
        y = x
    return y
''')
    binding = func.body.blocks[0].bindings[0]
    assert binding.var.name_hint == "y" and isinstance(binding.value, rx.If)
    then = binding.value.true_branch
    assert then.body.name_hint == "y_then"
    assert binding.value.false_branch.body is func.params[1]

    def body():
        with R.function():
            R.func_name("f")
            c = R.arg("c", R.Tensor((), "bool"))
            x = R.arg("x", R.Tensor((4,), "float32"))
            with R.If(c) as frame:
                with R.Then():
                    w = R.emit(R.call_dps_packed("env.relu", (x,), R.Tensor((4,), "float32")))
                    IRBuilder.name("y", R.emit(R.call_dps_packed("env.relu", (w,),
                                                                 R.Tensor((4,), "float32"))))
                with R.Else():
                    IRBuilder.name("y", R.emit(x))
            R.func_ret_value(frame.var)

    assert_structural_equal(func, build(body))


def test_impure_function_with_print_and_call_packed():
    func = from_source('''
@R.function(pure=False)
def f(x: R.Tensor((4,), "float32")):
    R.print(x, format="x: {}")
    y = R.call_packed("env.copy", x, sinfo_args=R.Tensor((4,), "float32"))
    _ = R.assert_op(R.const(True), format="ok")
    return y
''')
    calls = [b.value for b in func.body.blocks[0].bindings]
    assert calls[0].op.name == "relax.print"
    assert isinstance(calls[1].op, rx.ExternFunc)
    assert calls[2].op.name == "relax.assert_op"


def test_annotation_gives_struct_info_of_a_fresh_call():
    func = from_source('''
@R.function(pure=False)
def f(x: R.Tensor((4,), "float32")):
    y: R.Tensor((4,), "float32") = R.call_packed("env.copy", x)
    return y
''')
    y = func.body.blocks[0].bindings[0].var
    assert_structural_equal(y.struct_info, TensorStructInfo([4], "float32"))


def test_object_prim_shape_callable_params():
    func = from_source('''
@R.function
def f(o: R.Object, p: R.Prim("int64"), s: R.Shape(ndim=2), g: R.Callable([R.Object], R.Object),
      q: R.Prim(value="k")) -> R.Prim("int64"):
    return p
''')
    kinds = [type(p.struct_info).__name__ for p in func.params]
    assert kinds == ["ObjectStructInfo", "PrimStructInfo", "ShapeStructInfo", "FuncStructInfo",
                     "PrimStructInfo"]
    assert func.params[4].struct_info.value.name_hint == "k"


def test_nested_calls_are_normalized_into_bindings():
    func = from_source('''
@R.function
def f(x: R.Tensor((4,), "float32")):
    y = R.call_dps_packed("a", (R.call_dps_packed("b", (x,), R.Tensor((4,), "float32")),),
                          R.Tensor((4,), "float32"))
    return y
''')
    (block,) = func.body.blocks
    assert len(block.bindings) == 2


def test_decorator_on_python_function():
    @R.function
    def f(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        return x

    assert isinstance(f, rx.Function)

    @I.ir_module
    class Mod:
        @R.function(pure=False)
        def main(x: R.Tensor((4,), "float32")):
            y = R.call_packed("env.copy", x, sinfo_args=R.Tensor((4,), "float32"))
            return y

    assert isinstance(Mod, mlckit.IRModule) and Mod["main"].is_pure is False
