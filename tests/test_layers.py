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


# an import inside a function, added to a copy of the package: (module, what it imports,
# what lint-imports must report)
UPWARD_IMPORTS = [
    ("ir/node.py", "from mlckit.script.printer import script",
     ["mlckit.ir is not allowed to import mlckit.script"]),
    ("ir/module.py", "from mlckit.relax.expr import Call",
     ["mlckit.ir is not allowed to import mlckit.relax", "mlckit.ir.module -> mlckit.relax.expr"]),
    ("runtime/ndarray.py", "from mlckit.notebook.reprs import ndarray_html",
     ["mlckit.runtime is not allowed to import mlckit.notebook"]),
    ("arith/analyzer.py", "from mlckit.tir.schedule import Schedule",
     ["mlckit.arith is not allowed to import mlckit.tir.schedule"]),
]


@pytest.mark.parametrize("module, statement, reported", UPWARD_IMPORTS,
                         ids=[m for m, _, _ in UPWARD_IMPORTS])
def test_an_upward_import_inside_a_function_breaks_the_layers(package_copy, module, statement,
                                                               reported):
    name = statement.rsplit(" ", 1)[1]
    package_copy(module, f"\n\ndef _reach_up():\n    {statement}\n\n    return {name}\n")
    out = lint_imports(package_copy.root)
    assert out.returncode == 1
    for line in reported:
        assert line in out.stdout


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
