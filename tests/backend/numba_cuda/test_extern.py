"""T.call_extern in thread-bound kernels: the C function runs on the CUDA simulator (and in
cpu mode, see tests/backend/test_extern.py); on a GPU only a CUDA device function can."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = r'''
import numpy as np
import mlckit
from mlckit import tir
from mlckit.backend.extern import compile_library
from mlckit.script import tir as T

tir.register_extern("axpb", compile_library(
    "float axpb(float x, float a, float b) { return a * x + b; }").axpb, override=True)

@T.prim_func
def f(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in range(64):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = T.call_extern("float32", "axpb", A[vi], T.float32(2), T.float32(1))

sch = tir.Schedule(f)
(i,) = sch.get_loops("B")
i0, i1 = sch.split(i, [None, 16])
sch.bind(i0, "blockIdx.x")
sch.bind(i1, "threadIdx.x")
a = np.arange(64, dtype="float32")
b = np.zeros(64, "float32")
mlckit.build(sch.mod, target="cuda", mode="sim")["main"](a, b)
np.testing.assert_allclose(b, 2 * a + 1)
print("sim ok")
'''


def test_c_extern_runs_on_the_cuda_simulator(tmp_path):
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=str(ROOT))
    script = tmp_path / "sim_extern.py"  # TVMScript needs its source in a file
    script.write_text(SCRIPT)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "sim ok"
