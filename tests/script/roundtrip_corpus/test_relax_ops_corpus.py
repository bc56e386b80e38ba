"""High-level Relax operators in TVMScript: they parse from the ``R`` namespace, print in
TVM's form (attributes as keywords) and round-trip."""

import pytest

from mlckit import relax, tir
from mlckit.ir import Op, assert_structural_equal
from mlckit.script import from_source
from tests.script.roundtrip import assert_roundtrip

# Each program prints exactly as written here (TVM's printer output).
PROGRAMS = {
    "binary": '''
@R.function
def main(x: R.Tensor((2, 3), dtype="float32"), y: R.Tensor((3,), dtype="float32")) -> R.Tensor((2, 3), dtype="bool"):
    a: R.Tensor((2, 3), dtype="float32") = R.add(x, y)
    b: R.Tensor((2, 3), dtype="float32") = R.multiply(a, R.const(2.0, "float32"))
    c: R.Tensor((2, 3), dtype="float32") = R.floor_divide(b, y)
    d: R.Tensor((2, 3), dtype="bool") = R.greater_equal(c, x)
    return d
''',
    "unary_and_ternary": '''
@R.function
def main(x: R.Tensor(("n", 4), dtype="float32")) -> R.Tensor(("n", 4), dtype="float32"):
    n = T.int64()
    with R.dataflow():
        a: R.Tensor((n, 4), dtype="float32") = R.exp(x)
        b: R.Tensor((n, 4), dtype="float32") = R.sigmoid(a)
        c: R.Tensor((n, 4), dtype="float32") = R.ewise_fma(a, b, x)
        d: R.Tensor((n, 4), dtype="float32") = R.negative(c)
        R.output(d)
    return d
''',
    "datatype_and_create": '''
@R.function
def main(x: R.Tensor((2, 3), dtype="float32"), v: R.Tensor((), dtype="int32")) -> R.Tuple(R.Tensor((2, 3), dtype="float16"), R.Tensor((2, 3), dtype="int32"), R.Tensor((2, 3), dtype="float32"), R.Tensor((2, 3), dtype="int8"), R.Tensor((4,), dtype="float32")):
    a: R.Tensor((2, 3), dtype="float16") = R.astype(x, dtype="float16")
    b: R.Tensor((2, 3), dtype="int32") = R.full(R.shape([2, 3]), v, dtype="void")
    c: R.Tensor((2, 3), dtype="float32") = R.zeros(R.shape([2, 3]), dtype="float32")
    d: R.Tensor((2, 3), dtype="int8") = R.ones_like(x, dtype="int8")
    e: R.Tensor((4,), dtype="float32") = R.full(R.shape([4]), R.const(1.5, "float32"), dtype="float32")
    return (a, b, c, d, e)
''',
    "conv2d_transpose": '''
@R.function
def main(x: R.Tensor((1, 4, 5, 5), dtype="float32"), w: R.Tensor((4, 3, 3, 3), dtype="float32")) -> R.Tensor((1, 6, 10, 10), dtype="float32"):
    a: R.Tensor((1, 6, 10, 10), dtype="float32") = R.nn.conv2d_transpose(x, w, strides=[2, 2], padding=[1, 1, 1, 1], output_padding=[1, 1], dilation=[1, 1], groups=2, data_layout="NCHW", kernel_layout="IOHW", out_layout="NCHW", out_dtype="void")
    return a
''',
    "losses": '''
@R.function
def main(x: R.Tensor(("n", 3), dtype="float32"), t: R.Tensor(("n",), dtype="int64"), w: R.Tensor((3,), dtype="float32"), y: R.Tensor(("n", 3), dtype="float32")) -> R.Tuple(R.Tensor((), dtype="float32"), R.Tensor(("n",), dtype="float32"), R.Tensor((), dtype="float32")):
    n = T.int64()
    a: R.Tensor((), dtype="float32") = R.nn.nll_loss(x, t, w, reduction="sum", ignore_index=-100)
    b: R.Tensor((n,), dtype="float32") = R.nn.nll_loss(x, t, reduction="none", ignore_index=2)
    c: R.Tensor((), dtype="float32") = R.nn.cross_entropy_with_logits(x, y)
    return (a, b, c)
''',
}
HEADERS = {"binary": "# from tvm.script import relax as R\n",
           "unary_and_ternary": "# from tvm.script import tir as T\n# from tvm.script import relax as R\n",
           "datatype_and_create": "# from tvm.script import relax as R\n",
           "conv2d_transpose": "# from tvm.script import relax as R\n",
           "losses": "# from tvm.script import tir as T\n# from tvm.script import relax as R\n"}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_prints_as_tvm_and_round_trips(name):
    func = from_source(PROGRAMS[name])
    text = assert_roundtrip(func)
    header, body = text.split("\n\n", 1)
    assert header + "\n" == HEADERS[name]
    assert body.strip() == PROGRAMS[name].strip()


def test_parsed_calls_are_the_operators_calls():
    func = from_source(PROGRAMS["datatype_and_create"])
    bindings = func.body.blocks[0].bindings
    x = func.params[0]
    assert_structural_equal(bindings[0].value, relax.op.astype(x, "float16"))
    assert bindings[1].value.op is Op.get("relax.full")
    assert bindings[1].value.attrs.dtype == "void"


def test_builder_made_module_round_trips():
    n = tir.Var("n", "int64")
    x = relax.Var("x", relax.TensorStructInfo((n, 3), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            a = bb.emit(relax.op.clip(relax.op.tanh(x), 0.0, 0.5))
            b = bb.emit(relax.op.zeros_like(a))
            c = bb.emit_output(relax.op.maximum(a, b))
        bb.emit_func_output(c)
    mod = bb.get()
    text = assert_roundtrip(mod)
    assert "R.clip(lv, R.prim_value(T.float64(0.0)), R.prim_value(T.float64(0.5)))" in text
    assert 'R.zeros_like(lv1, dtype="void")' in text
