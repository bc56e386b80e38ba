"""relax.BlockBuilder misuse: each mistake raises a TVMError saying what and why, and the
builder stays usable afterwards."""

import pytest

import mlckit
from mlckit import relax, tir
from mlckit.script import tir as T

F32 = relax.TensorStructInfo((4,), "float32")


@T.prim_func(private=True)
def neg(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = -A[vi]


def _call(bb, x):
    return relax.op.call_tir(bb.add_func(neg, "neg"), [x], F32)


def test_emit_outside_a_function():
    bb = relax.BlockBuilder()
    x = relax.Var("x", F32)
    with pytest.raises(mlckit.TVMError, match=r"cannot emit: no binding block .*bb.function"):
        bb.emit(_call(bb, x))


def test_emit_output_outside_a_dataflow_block():
    bb = relax.BlockBuilder()
    x = relax.Var("x", F32)
    with pytest.raises(mlckit.TVMError, match=r"emit_output must be called inside .*dataflow"):
        with bb.function("main", [x]):
            bb.emit_output(_call(bb, x))
    assert relax.BlockBuilder.current() is None


def test_emit_func_output_twice():
    bb = relax.BlockBuilder()
    x = relax.Var("x", F32)
    with pytest.raises(mlckit.TVMError, match=r"emit_func_output is called twice .*'main'"):
        with bb.function("main", [x]):
            gv = bb.emit(_call(bb, x))
            bb.emit_func_output(gv)
            bb.emit_func_output(gv)


def test_function_without_params():
    bb = relax.BlockBuilder()
    x = relax.Var("x", F32)
    with pytest.raises(mlckit.TVMError, match=r"'main' has no parameters: give them to "):
        with bb.function("main"):
            gv = bb.emit(_call(bb, x))
            bb.emit_func_output(gv)


def test_params_given_twice():
    bb = relax.BlockBuilder()
    x = relax.Var("x", F32)
    with pytest.raises(mlckit.TVMError, match=r"parameters of function 'main' are given twice"):
        with bb.function("main", [x]):
            bb.emit_func_output(x, params=[x])


def test_function_without_output():
    bb = relax.BlockBuilder()
    x = relax.Var("x", F32)
    with pytest.raises(mlckit.TVMError, match=r"'main' has no output: call "
                                              r"bb.emit_func_output"):
        with bb.function("main", [x]):
            bb.emit(_call(bb, x))
    # the builder recovers: the same function can be built again
    with bb.function("main", [x]):
        gv = bb.emit(_call(bb, x))
        bb.emit_func_output(gv)
    assert gv.name_hint == "gv1" and "main" in bb.get()


def test_nested_functions_and_nested_dataflow_blocks():
    bb = relax.BlockBuilder()
    x = relax.Var("x", F32)
    with pytest.raises(mlckit.TVMError, match=r"inside bb.function\('outer'\): a BlockBuilder "
                                              r"builds one function at a time"):
        with bb.function("outer", [x]):
            with bb.function("inner", [x]):
                pass
    with pytest.raises(mlckit.TVMError, match=r"dataflow blocks do not nest"):
        with bb.function("main", [x]):
            with bb.dataflow():
                with bb.dataflow():
                    pass
    assert relax.BlockBuilder.current() is None


def test_dataflow_outside_a_function_and_output_inside_dataflow():
    bb = relax.BlockBuilder()
    x = relax.Var("x", F32)
    with pytest.raises(mlckit.TVMError, match=r"bb.dataflow\(\) must be called inside "):
        with bb.dataflow():
            pass
    with pytest.raises(mlckit.TVMError, match=r"emit_func_output inside `with bb.dataflow"):
        with bb.function("main", [x]):
            with bb.dataflow():
                lv = bb.emit(_call(bb, x))
                bb.emit_func_output(lv)


def test_bad_parameters_and_variables():
    bb = relax.BlockBuilder()
    with pytest.raises(mlckit.TVMError, match=r"each function parameter must be a relax.Var"):
        bb.function("main", [relax.const(1.0)])
    with pytest.raises(mlckit.TVMError, match=r"the function name \(a str\) first"):
        bb.function([relax.Var("x", F32)])
    with pytest.raises(mlckit.TVMError, match=r"must be a StructInfo, got tuple .*"
                                              r"relax.TensorStructInfo\(shape, dtype\)"):
        relax.Var("x", (128, 128))
    untyped = relax.Var("u")
    with pytest.raises(mlckit.TVMError, match=r"variable 'u' has no struct info"):
        with bb.function("main", [relax.Var("x", F32)]):
            bb.emit(relax.Tuple([untyped]))


def test_malformed_calls_fail_where_they_are_emitted():
    bb = relax.BlockBuilder()
    x = relax.Var("x", F32)
    s = relax.Var("s", relax.ShapeStructInfo([4]))
    with pytest.raises(mlckit.TVMError, match=r"R.shape_of expects a tensor, got R.Shape"):
        with bb.function("main", [x, s]):
            bb.emit(relax.op.shape_of(s))
    with pytest.raises(mlckit.TVMError, match=r"match_cast can never succeed: the value is "
                                              r"R.Tensor\(\(4,\), \"float32\"\), the target "
                                              r"R.Tensor\(\(n, 8\)"):
        with bb.function("main", [x]):
            bb.match_cast(x, relax.TensorStructInfo((tir.Var("n", "int64"), 8), "float32"))


def test_unknown_names_and_bad_functions():
    bb = relax.BlockBuilder()
    bb.add_func(neg, "neg")
    with pytest.raises(mlckit.TVMError, match=r"no function 'nope' \(it has: neg\)"):
        bb.update_func("nope", neg)
    with pytest.raises(mlckit.TVMError, match=r"function 'nope' is not in the IRModule \(it has: neg\)"):
        bb.get()["nope"]
    with pytest.raises(mlckit.TVMError, match=r"add_func expects a relax.Function or a "
                                              r"tir.PrimFunc, got Constant"):
        bb.add_func(relax.const(1.0), "c")
    with pytest.raises(mlckit.TVMError, match=r"relax.const: unknown dtype 'float33'"):
        relax.const(1.0, "float33")
    with pytest.raises(mlckit.TVMError, match=r"value has to be a scalar, a list, a NumPy "
                                              r"array or an NDArray, got str"):
        relax.const("one")


def test_a_string_dimension_is_refused_with_the_tir_var_to_use():
    # "n" names a symbolic size only in TVMScript's R.Tensor annotations
    with pytest.raises(mlckit.TVMError, match=r"got \"n\"; a symbolic size is a TIR variable, "
                                              r"tir.Var\('n', 'int64'\)"):
        relax.TensorStructInfo(("n", 784), "float32")
