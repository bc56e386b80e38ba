"""relax.dpl: patterns match expressions of their shape, looking through the bindings of a
dataflow block when given them, and nothing else."""

import numpy as np
import pytest

from mlckit import relax
from mlckit.error import TVMError
from mlckit.relax.dpl import is_const, is_op, is_tuple_get_item, match_bindings, wildcard
from mlckit.script import ir as I
from mlckit.script import relax as R


@I.ir_module
class Mod:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), w: R.Tensor((3, 4), "float32"),
             b: R.Tensor((4,), "float32")):
        with R.dataflow():
            lv = R.matmul(x, w)
            lv1 = R.add(lv, b)
            lv2 = R.nn.relu(lv1)
            lv3 = R.add(lv2, R.const(np.ones(4, "float32")))
            gv = R.split(lv3, 2, axis=1)
            gv1 = gv[0]
            R.output(gv1)
        return gv1


def _bindings():
    block = Mod["main"].body.blocks[0]
    return block.bindings, {b.var: b.value for b in block.bindings}


def test_a_call_pattern_matches_the_operator_and_its_arguments():
    bindings, var2val = _bindings()
    assert is_op("relax.matmul")(wildcard(), wildcard()).match(bindings[0].value)
    assert not is_op("relax.add")(wildcard(), wildcard()).match(bindings[0].value)
    assert not is_op("relax.matmul")(wildcard()).match(bindings[0].value)  # arity counts


def test_with_var2val_a_pattern_spans_several_bindings():
    bindings, var2val = _bindings()
    pat = is_op("relax.nn.relu")(is_op("relax.add")(is_op("relax.matmul")(wildcard(),
                                                                         wildcard()),
                                                    wildcard()))
    assert pat.match(bindings[2].value, var2val=var2val)
    assert not pat.match(bindings[2].value)  # without the bindings, lv1 is only a variable


def test_match_bindings_reports_what_each_sub_pattern_matched():
    bindings, var2val = _bindings()
    lhs, rhs, bias = wildcard(), wildcard(), wildcard()
    root = is_op("relax.matmul")(lhs, rhs)
    matched, through = match_bindings(is_op("relax.add")(root, bias), bindings[1].value,
                                      var2val)
    x, w, b = Mod["main"].params
    assert matched[id(lhs)][1] is x and matched[id(rhs)][1] is w and matched[id(bias)][1] is b
    assert matched[id(root)][1] is bindings[0].value
    assert list(through) == [bindings[0].var]


def test_is_const_and_or_patterns():
    bindings, var2val = _bindings()
    add_const = is_op("relax.add")(wildcard(), is_const())
    assert add_const.match(bindings[3].value)
    assert not add_const.match(bindings[1].value)  # b is a parameter, not a constant
    either = is_op("relax.add")(wildcard(), is_const()) | is_op("relax.matmul")(wildcard(),
                                                                               wildcard())
    assert either.match(bindings[3].value) and either.match(bindings[0].value)
    assert not either.match(bindings[2].value)


def test_tuple_get_item_pattern_checks_the_index():
    bindings, var2val = _bindings()
    item = bindings[5].value
    assert is_tuple_get_item(wildcard(), 0).match(item)
    assert is_tuple_get_item(wildcard()).match(item)
    assert not is_tuple_get_item(wildcard(), 1).match(item)


def test_a_pattern_used_twice_must_match_the_same_expression():
    x = relax.Var("x", R.Tensor((2,), "float32"))
    y = relax.Var("y", R.Tensor((2,), "float32"))
    same = wildcard()
    square = is_op("relax.multiply")(same, same)
    assert square.match(relax.op.multiply(x, x))
    assert not square.match(relax.op.multiply(x, y))


def test_an_unknown_operator_is_rejected_with_its_name():
    with pytest.raises(TVMError, match="relax.matmull"):
        is_op("relax.matmull")
