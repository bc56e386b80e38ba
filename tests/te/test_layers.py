"""te and topi sit above tir: importing them pulls in no backend, parser or notebook code."""

import subprocess
import sys


def test_te_and_topi_import_no_numba_parser_or_notebook_code():
    code = (
        "import sys; from mlckit import te, topi; "
        "A = te.placeholder((4,), name='A'); te.create_prim_func([A, topi.exp(A)]); "
        "print(sorted(m for m in ('numba', 'IPython', 'ipywidgets', 'graphviz', "
        "'mlckit.script.parser', 'mlckit.backend.numba_cpu') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
