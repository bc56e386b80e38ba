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


def _run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_a_tir_kernel_is_parsed_and_built_without_importing_relax():
    # Relax and the packages above it are half of `import mlckit`: imported at first use
    code = '''
import sys
import numpy as np
import mlckit as tvm
from mlckit.script import from_source
f = tvm.build(from_source("""
@T.prim_func
def double(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi] * T.float32(2)
"""), target="lnumpy")
b = np.zeros(4, "float32")
f(np.arange(4, dtype="float32"), b)
print(b.tolist(), "mlckit.relax" in sys.modules)
'''
    assert _run(code) == "[0.0, 2.0, 4.0, 6.0] False"


def test_relax_is_there_at_its_first_use():
    code = '''
import mlckit as tvm
from mlckit.script import from_source
mod = from_source("""
@I.ir_module
class M:
    @R.function
    def main(x: R.Tensor((2,), "float32")):
        return x
""")
print(type(tvm.relax.Function).__name__, [gv.name_hint for gv in mod.functions])
'''
    assert _run(code) == "type ['main']"


def test_globals_and_ops_relax_registers_are_found_before_relax_is_imported():
    # "mlckit.lib.matmul" and the op "relax.add" are registered when relax is imported
    assert _run("import mlckit as tvm; "
                "print(tvm.get_global_func('mlckit.lib.matmul', allow_missing=True) is not None, "
                "tvm.ir.Op.get('relax.add').name)") == "True relax.add"
    assert _run("import mlckit as tvm, mlckit.ffi as f; "
                "print('mlckit.lib.matmul' in f.list_global_func_names(), "
                "'relax.add' in tvm.ir.Op.list_names())") == "True True"
