"""Python operators on Relax expressions, as TVM's ExprWithOp: ``x + y`` is R.add(x, y)."""

import pytest

from mlckit import relax
from mlckit.ir import assert_structural_equal

x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
y = relax.Var("y", relax.TensorStructInfo((3,), "float32"))

CASES = [
    (lambda: x + y, relax.op.add), (lambda: x - y, relax.op.subtract),
    (lambda: x * y, relax.op.multiply), (lambda: x / y, relax.op.divide),
    (lambda: x // y, relax.op.floor_divide), (lambda: x % y, relax.op.mod),
    (lambda: x ** y, relax.op.power), (lambda: x < y, relax.op.less),
    (lambda: x <= y, relax.op.less_equal), (lambda: x > y, relax.op.greater),
    (lambda: x >= y, relax.op.greater_equal),
]


@pytest.mark.parametrize("make, op", CASES)
def test_binary_operators_build_the_op_call(make, op):
    assert_structural_equal(make(), op(x, y))


def test_negation_and_astype():
    assert_structural_equal(-x, relax.op.negative(x))
    assert_structural_equal(x.astype("float16"), relax.op.astype(x, "float16"))


def test_equality_keeps_its_python_meaning():
    assert (x == x) is True and (x == y) is False and x != y


def test_python_numbers_need_a_constant_as_in_tvm():
    with pytest.raises(TypeError, match=r"does not convert Python numbers: write "
                                        r"relax.const\(1, dtype\)"):
        x + 1
    with pytest.raises(TypeError, match=r"relax.const\(2.0, dtype\)"):
        2.0 * x
    with pytest.raises(TypeError, match="takes two Relax expressions, got str"):
        x - "y"


def test_operators_compose_in_a_block_builder():
    bb = relax.BlockBuilder()
    with bb.function("main", [x, y]):
        out = bb.emit(-(x * y) + x)
        bb.emit_func_output(out)
    body = bb.get()["main"].body
    ops = [b.value.op.name for b in body.blocks[0].bindings]
    assert ops == ["relax.multiply", "relax.negative", "relax.add"]


def test_a_tuple_value_extends_with_a_python_tuple():
    t = relax.Var("t", relax.TupleStructInfo([x.struct_info]))
    extended = t + (y,)
    assert isinstance(extended, tuple) and extended[1] is y


def test_operators_in_tvmscript():
    from mlckit.script import from_source

    func = from_source('''
@R.function
def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((3,), "float32")):
    z = x * y + x
    return z
''')
    assert 'gv: R.Tensor((2, 3), dtype="float32") = R.multiply(x, y)' in func.script()
    assert 'z: R.Tensor((2, 3), dtype="float32") = R.add(gv, x)' in func.script()
    ops = [b.value.op.name for b in func.body.blocks[0].bindings]
    assert ops == ["relax.multiply", "relax.add"]
