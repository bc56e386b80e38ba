"""The compiler core stays light: importing mlckit pulls in no notebook machinery."""

import subprocess
import sys


def test_import_mlckit_does_not_import_ipython_ipywidgets_or_graphviz():
    code = (
        "import sys, mlckit, mlckit.relax, mlckit.tir; "
        "from mlckit.script import ir, tir, relax; "
        "print(sorted(m for m in ('IPython', 'ipywidgets', 'graphviz') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_import_mlckit_does_not_import_the_notebook_layer():
    code = ("import sys, mlckit, mlckit.relax, mlckit.tir; "
            "print([m for m in sys.modules if m.startswith('mlckit.notebook')])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
