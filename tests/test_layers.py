"""The layers of docs/architecture.md hold: import-linter's contracts (.importlinter) are
kept, and an upward import breaks them, even one written inside a function."""

import configparser
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / ".importlinter"


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """Run lint-imports over the package under ``root`` with the repository's contracts."""
    code = ("import sys; from importlinter.cli import lint_imports; "
            f"sys.exit(lint_imports(config_filename={str(CONFIG)!r}, no_cache=True, "
            "no_logo=True))")
    return subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                          text=True, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})


@pytest.fixture
def package_copy(tmp_path):
    """A copy of mlckit to break: ``add(module_path, text)`` appends to one of its files."""
    shutil.copytree(ROOT / "mlckit", tmp_path / "mlckit",
                    ignore=shutil.ignore_patterns("__pycache__", "*.npz"))

    def add(relative: str, text: str) -> None:
        path = tmp_path / "mlckit" / relative
        path.write_text(path.read_text() + text)

    add.root = tmp_path
    return add


def test_the_contracts_are_kept():
    out = lint_imports(ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Contracts: 2 kept, 0 broken." in out.stdout


def test_the_ir_reaching_the_printer_by_name_breaks_the_layers(package_copy):
    package_copy("ir/node.py", "\n\ndef _script(node):\n"
                               "    from mlckit.script.printer import script\n\n"
                               "    return script(node)\n")
    out = lint_imports(package_copy.root)
    assert out.returncode == 1
    assert "mlckit.ir is not allowed to import mlckit.script" in out.stdout


def test_an_upward_import_inside_a_function_breaks_the_layers(package_copy):
    package_copy("ir/module.py", "\n\ndef _relax_call():\n"
                                 "    from mlckit.relax.expr import Call\n\n"
                                 "    return Call\n")
    out = lint_imports(package_copy.root)
    assert out.returncode == 1
    assert "mlckit.ir is not allowed to import mlckit.relax" in out.stdout
    assert "mlckit.ir.module -> mlckit.relax.expr" in out.stdout


def test_the_core_reaching_the_notebook_layer_breaks_the_layers(package_copy):
    package_copy("runtime/ndarray.py", "\n\ndef _html(arr):\n"
                                       "    from mlckit.notebook.reprs import ndarray_html\n\n"
                                       "    return ndarray_html(arr)\n")
    out = lint_imports(package_copy.root)
    assert out.returncode == 1
    assert "mlckit.runtime is not allowed to import mlckit.notebook" in out.stdout


def test_arith_using_a_tir_schedule_breaks_the_arith_contract(package_copy):
    package_copy("arith/analyzer.py", "\n\ndef _schedule():\n"
                                      "    from mlckit.tir.schedule import Schedule\n\n"
                                      "    return Schedule\n")
    out = lint_imports(package_copy.root)
    assert out.returncode == 1
    assert "mlckit.arith is not allowed to import mlckit.tir.schedule" in out.stdout


def test_the_named_exceptions_are_the_error_marks_the_T_namespace_and_the_tvm_name():
    config = configparser.ConfigParser()
    config.read(CONFIG)
    ignored = config["importlinter:contract:layers"]["ignore_imports"].split()
    pairs = {(ignored[i], ignored[i + 2]) for i in range(0, len(ignored), 3)}
    assert pairs == {
        ("mlckit.tir.schedule.error", "mlckit.script.printer"),
        ("mlckit.tir.schedule.layout", "mlckit.script.tir"),
        ("mlckit.script.parser.entry", "mlckit"),
    }
