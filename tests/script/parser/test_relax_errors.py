"""Bad Relax scripts: each error is a DiagnosticError at the right line saying what is wrong."""

import pytest

from mlckit import DiagnosticError
from mlckit.script import from_source


def expect_error(src: str, line: int, phrase: str) -> DiagnosticError:
    with pytest.raises(DiagnosticError) as info:
        from_source(src)
    err = info.value
    assert phrase in err.message, err.render()
    assert err.line == line, f"expected line {line}, got {err.line}:\n{err.render()}"
    return err


HEAD = '''
@R.function
def main(x: R.Tensor((4,), "float32")):
'''  # the body starts on line 4


def test_undefined_variable():
    expect_error(HEAD + '''    y = R.call_dps_packed("f", (lv0,), R.Tensor((4,), "float32"))
    return y
''', 4, "undefined variable 'lv0'")


def test_impure_call_in_dataflow():
    expect_error(HEAD + '''    with R.dataflow():
        y = R.call_packed("env.copy", x, sinfo_args=R.Tensor((4,), "float32"))
        R.output(y)
    return y
''', 5, "non-pure call in dataflow block")


def test_print_in_dataflow():
    expect_error(HEAD + '''    with R.dataflow():
        R.print(x, format="{}")
        y = x
        R.output(y)
    return y
''', 5, "non-pure call in dataflow block: R.print")


def test_impure_call_in_pure_function():
    expect_error(HEAD + '''    y = R.call_packed("env.copy", x, sinfo_args=R.Tensor((4,), "float32"))
    return y
''', 4, "is annotated as pure but contains an impure call")


def test_output_outside_dataflow():
    expect_error(HEAD + '''    y = x
    R.output(y)
    return y
''', 5, "R.output should appear inside a dataflow block")


def test_output_of_undefined_var():
    expect_error(HEAD + '''    with R.dataflow():
        y = x
        R.output(z)
    return y
''', 6, "undefined variable 'z'")


def test_output_of_var_not_bound_in_block():
    expect_error(HEAD + '''    y = x
    with R.dataflow():
        z = y
        R.output(z, y)
    return z
''', 7, "which is not bound in this dataflow block")


def test_dataflow_var_used_outside():
    expect_error(HEAD + '''    with R.dataflow():
        lv0 = R.call_dps_packed("f", (x,), R.Tensor((4,), "float32"))
        gv = lv0
        R.output(gv)
    y = R.call_dps_packed("f", (lv0,), R.Tensor((4,), "float32"))
    return y
''', 8, "DataflowVar 'lv0' is used outside the dataflow block")


def test_unknown_dtype():
    expect_error('''
@R.function
def main(x: R.Tensor((4,), "float33")):
    return x
''', 3, "unknown dtype 'float33'")


def test_missing_return():
    expect_error(HEAD + '''    y = x
''', 3, "has no `return`")


def test_missing_out_sinfo():
    expect_error(HEAD + '''    y = R.call_dps_packed("env.relu", (x,))
    return y
''', 4, "requires out_sinfo")


def test_call_tir_with_a_string():
    expect_error(HEAD + '''    y = R.call_tir("relu", (x,), R.Tensor((4,), "float32"))
    return y
''', 4, "use R.call_dps_packed to call a packed function by name")


def test_call_tir_wrong_arity():
    expect_error('''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), "float32")):
        y = R.call_tir(Module.main, (x,), R.Tensor((4,), "float32"), [1], 5)
        return y
''', 6, "call_tir() takes from 2 to 4 positional arguments")


def test_call_tir_of_a_relax_function():
    expect_error('''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), "float32")):
        y = R.call_tir(Module.helper, (x,), R.Tensor((4,), "float32"))
        return y

    @R.function
    def helper(x: R.Tensor((4,), "float32")):
        return x
''', 6, "not a PrimFunc")


def test_out_sinfo_without_shape():
    expect_error(HEAD + '''    y = R.call_dps_packed("f", (x,), R.Tensor(ndim=1, dtype="float32"))
    return y
''', 4, "must have a known shape")


def test_unknown_function_of_module():
    expect_error('''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), "float32")):
        y = Module.nothere(x)
        return y
''', 6, "the IRModule 'Module' has no attribute 'nothere'")


def test_if_without_else():
    expect_error('''
@R.function
def main(c: R.Tensor((), "bool"), x: R.Tensor((4,), "float32")):
    if c:
        y = x
    return x
''', 4, "needs an `else` branch")


def test_if_branches_bind_different_names():
    expect_error('''
@R.function
def main(c: R.Tensor((), "bool"), x: R.Tensor((4,), "float32")):
    if c:
        y = x
    else:
        z = x
    return x
''', 7, "must bind the same variable")


def test_if_inside_dataflow():
    expect_error('''
@R.function
def main(c: R.Tensor((), "bool"), x: R.Tensor((4,), "float32")):
    with R.dataflow():
        if c:
            y = x
        else:
            y = x
        R.output(y)
    return y
''', 5, "`if` is not allowed inside a dataflow block")


def test_undefined_symbolic_var():
    expect_error('''
@R.function
def main(x: R.Tensor(("m + 1",), "float32")):
    return x
''', 3, "undefined symbolic variable 'm'")


def test_undefined_symbolic_var_in_return_annotation():
    expect_error('''
@R.function
def main(x: R.Tensor(("n",), "float32")) -> R.Tensor(("k",), "float32"):
    return x
''', 3, "undefined symbolic variable 'k'")


def test_parameter_without_annotation():
    expect_error('''
@R.function
def main(x):
    return x
''', 3, "needs a struct info annotation")


def test_value_not_bound():
    expect_error(HEAD + '''    R.call_dps_packed("f", (x,), R.Tensor((4,), "float32"))
    return x
''', 4, "must be bound to a variable")


def test_tuple_index_out_of_range():
    expect_error(HEAD + '''    t = (x, x)
    y = t[2]
    return y
''', 5, "tuple index 2 is out of range")


def test_binding_after_output():
    expect_error(HEAD + '''    with R.dataflow():
        y = x
        R.output(y)
        z = y
    return z
''', 7, "no new binding is allowed after R.output")


def test_two_returns():
    expect_error(HEAD + '''    return x
    return x
''', 5, "do not support multiple return")


def test_call_arity_of_module_function():
    expect_error('''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), "float32")):
        y = Module.helper(x, x)
        return y

    @R.function
    def helper(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        return x
''', 6, "takes 1 argument, but the call passes 2")


def test_annotation_mismatch():
    expect_error(HEAD + '''    y: R.Tensor((4,), "int32") = R.call_dps_packed("f", (x,), R.Tensor((4,), "float32"))
    return y
''', 4, "does not match")


def test_error_renders_with_caret():
    err = expect_error(HEAD + '''    y = R.call_dps_packed("f", (lv0,), R.Tensor((4,), "float32"))
    return y
''', 4, "undefined variable 'lv0'")
    text = err.render()
    assert "^^^" in text and "lv0" in text


def test_a_shape_error_in_a_returned_call_is_at_the_return():
    expect_error(HEAD + '''    return R.add(x, R.ones((5,), "float32"))
''', 4, "relax.add: cannot broadcast")
