"""``%load_ext mlckit`` → ``%%relax`` / ``%%tir``: TVMScript cells, in a real IPython shell."""

import re
import subprocess
import sys

import pytest
from IPython.core.interactiveshell import InteractiveShell

from mlckit import ir, relax, tir
from mlckit.ir import assert_structural_equal
from mlckit.script import from_source

from .programs import MLP_MODULE

RELAX_IDENTITY = '''
def main(x: R.Tensor((4,), "float32")):
    with R.dataflow():
        y = x
        R.output(y)
    return y
'''

TIR_ADD_ONE = '''
def add_one(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi] + T.float32(1)
'''


@pytest.fixture
def shell():
    sh = InteractiveShell.instance()
    sh.run_cell("%load_ext mlckit", store_history=True)
    yield sh
    InteractiveShell.clear_instance()


def run(sh, text):
    return sh.run_cell(text, store_history=True)


def test_load_ext_mlckit_registers_the_relax_and_tir_cell_magics(shell):
    cell_magics = shell.magics_manager.magics["cell"]
    assert "relax" in cell_magics and "tir" in cell_magics


def test_importing_mlckit_registers_nothing_and_imports_no_ipython():
    code = ("import sys, mlckit; assert callable(mlckit.load_ipython_extension); "
            "print('IPython' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_an_undecorated_def_in_a_relax_cell_is_a_relax_function_bound_under_its_name(shell):
    result = run(shell, "%%relax\n" + RELAX_IDENTITY)
    assert result.success
    main = shell.user_ns["main"]
    assert isinstance(main, relax.Function)
    expected = from_source("@R.function\n" + RELAX_IDENTITY.lstrip("\n"))
    assert_structural_equal(main, expected)
    assert result.result is main  # displayed as the cell's value


def test_an_undecorated_def_in_a_tir_cell_is_a_prim_func(shell):
    result = run(shell, "%%tir\n" + TIR_ADD_ONE)
    assert result.success
    expected = from_source("@T.prim_func\n" + TIR_ADD_ONE.lstrip("\n"))
    assert isinstance(shell.user_ns["add_one"], tir.PrimFunc)
    assert_structural_equal(shell.user_ns["add_one"], expected)


def test_an_ir_module_class_cell_binds_the_module_under_the_class_name(shell):
    result = run(shell, "%%relax\n" + MLP_MODULE)
    assert result.success
    mod = shell.user_ns["MyModule"]
    assert isinstance(mod, ir.IRModule)
    assert sorted(gv.name_hint for gv in mod.get_global_vars()) == [
        "linear0", "linear1", "main", "relu0"]
    assert_structural_equal(mod, from_source(MLP_MODULE))


def test_decorated_defs_keep_their_own_dialect_and_need_no_imports(shell):
    result = run(shell, "%%relax\n@T.prim_func" + TIR_ADD_ONE)
    assert result.success
    assert isinstance(shell.user_ns["add_one"], tir.PrimFunc)


def test_the_script_sees_the_notebook_names(shell):
    run(shell, "n = 16\ndtype = 'float16'")
    result = run(shell, '%%tir\ndef fill(A: T.Buffer((n,), dtype)):\n'
                        '    for i in range(n):\n'
                        '        with T.block("A"):\n'
                        '            vi = T.axis.spatial(n, i)\n'
                        '            A[vi] = T.float16(0)\n')
    assert result.success
    buf = shell.user_ns["fill"].buffer_map[shell.user_ns["fill"].params[0]]
    assert [int(d) for d in buf.shape] == [16] and buf.dtype == "float16"


def test_several_defs_are_all_bound_and_each_is_displayed(shell, capsys):
    second = RELAX_IDENTITY.replace("def main", "def other")
    result = run(shell, "%%relax\n" + RELAX_IDENTITY + second)
    assert result.success and result.result is None
    assert isinstance(shell.user_ns["main"], relax.Function)
    assert isinstance(shell.user_ns["other"], relax.Function)
    out = capsys.readouterr().out
    assert "def main(" in out and "def other(" in out


def test_quiet_binds_without_displaying(shell):
    result = run(shell, "%%relax -q\n" + RELAX_IDENTITY)
    assert result.success and result.result is None
    assert isinstance(shell.user_ns["main"], relax.Function)


def test_a_bad_script_shows_the_located_diagnostic_and_no_internal_traceback(shell, capsys):
    bad = RELAX_IDENTITY.replace("y = x", "y = undefined_name")
    capsys.readouterr()
    result = run(shell, "%%relax\n" + bad)
    assert not result.success
    out = capsys.readouterr()
    text = out.out + out.err
    count = result.execution_count
    assert "error: " in text and "undefined_name" in text
    # line 5 of the cell as the learner sees it (the %%relax line is line 1), with a caret
    assert re.search(rf"--> Cell In\[{count}\]:5:\d+", text), text
    assert "5 |         y = undefined_name" in text
    assert re.search(r"\|\s+\^+", text)
    assert "Traceback" not in text and "mlckit/script" not in text
    assert "main" not in shell.user_ns


def test_cells_after_a_bad_one_still_run(shell):
    run(shell, "%%relax\ndef main(x: R.Tensor((4,), 'float32')):\n    return nope\n")
    result = run(shell, "%%relax\n" + RELAX_IDENTITY)
    assert result.success and isinstance(shell.user_ns["main"], relax.Function)


def test_a_cell_with_plain_python_statements_is_refused_with_a_located_error(shell, capsys):
    result = run(shell, "%%relax\nx = 1\n" + RELAX_IDENTITY)
    assert not result.success
    text = capsys.readouterr().out
    assert "only TVMScript definitions" in text and ":2:1" in text


def test_a_python_syntax_error_is_located_too(shell, capsys):
    result = run(shell, "%%tir\ndef f(A: T.Buffer((4,), 'float32'):\n    pass\n")
    assert not result.success
    text = capsys.readouterr().out
    assert "invalid Python syntax" in text and "Traceback" not in text
