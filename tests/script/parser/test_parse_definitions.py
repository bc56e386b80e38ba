"""parse_definitions: every top-level definition of a text (what a %%relax cell holds)."""

import pytest

from mlckit import relax, tir
from mlckit.ir import DiagnosticError, IRModule, assert_structural_equal
from mlckit.script import from_source
from mlckit.script.parser.entry import parse_definitions

KERNEL = '''
def add_one(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi] + T.float32(1)
'''

MAIN = '''
def main(x: R.Tensor((4,), "float32")):
    return x
'''


def test_undecorated_defs_take_the_given_dialect():
    defs = parse_definitions(KERNEL, dialect="tir")
    assert list(defs) == ["add_one"]
    assert_structural_equal(defs["add_one"], from_source("@T.prim_func" + KERNEL))
    assert isinstance(parse_definitions(MAIN, dialect="relax")["main"], relax.Function)


def test_decorated_definitions_keep_their_own_dialect_in_order():
    text = "@T.prim_func" + KERNEL + MAIN + "\n@I.ir_module\nclass M:\n    @R.function" + \
        MAIN.replace("\n", "\n    ")
    defs = parse_definitions(text, dialect="relax")
    assert list(defs) == ["add_one", "main", "M"]
    assert isinstance(defs["add_one"], tir.PrimFunc)
    assert isinstance(defs["main"], relax.Function)
    assert isinstance(defs["M"], IRModule)


def test_later_definitions_see_earlier_ones_by_name():
    text = KERNEL + ("\ndef again(A: T.Buffer((4,), 'float32')):\n"
                     "    T.func_attr({'twin': add_one.attrs['global_symbol']})\n"
                     "    T.evaluate(0)\n")
    defs = parse_definitions(text, dialect="tir")
    assert list(defs) == ["add_one", "again"]
    assert defs["again"].attrs["twin"] == "add_one"


def test_without_a_dialect_a_bare_def_needs_a_decorator():
    with pytest.raises(DiagnosticError, match="needs a TVMScript decorator"):
        parse_definitions(MAIN)


def test_errors_are_located_from_first_line_in_the_full_text():
    bad = MAIN.replace("return x", "return y")
    with pytest.raises(DiagnosticError) as info:
        parse_definitions(bad, dialect="relax", source_name="cell", first_line=2,
                          full_text="%%relax\n" + bad)
    err = info.value
    assert (err.span.source_name, err.line) == ("cell", 4)
    assert "4 |     return y" in str(err)


def test_only_definitions_are_accepted():
    with pytest.raises(DiagnosticError, match="only TVMScript definitions"):
        parse_definitions("x = 1\n" + MAIN, dialect="relax")
    with pytest.raises(DiagnosticError, match="expected a function or class to parse"):
        parse_definitions("import numpy\n", dialect="relax")
