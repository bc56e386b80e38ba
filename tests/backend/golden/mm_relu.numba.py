# ruff: noqa - golden file of tests/backend/test_golden.py (generated source)
"""PrimFunc 'mm_relu' compiled by mlckit.backend.numba_cpu (generated)."""

# Numba: its nopython pipeline less the passes for closures and array expressions, its range loops counted (numba_cpu.kernel_pipeline)
# LLVM: SLP vectorizer on, no partial loop unrolling, no LICM promotion (numba_cpu.llvm_pipeline)
# called through numba_cpu.entry, shared by kernels of the same argument types, once they repeat (entry.ready); else through its own CPython wrapper
# tir.noalias: the arrays never overlap; compiled with Numba's noalias flag, as TVM's codegen marks the buffers' pointers
# _nrt=False: no Numba runtime (reference counts); the kernel's own buffers are workspaces, freed where their scope ends (numba_cpu.workspace)

import numpy as np
from numba import njit
from mlckit.backend.numba_cpu.views import flat_view
from mlckit.backend.numba_cpu.workspace import workspace_alloc, workspace_free


@njit(cache=True, _nrt=False)
def mm_relu(A, B, C):
    A_1 = flat_view(A)
    B_1 = flat_view(B)
    C_1 = flat_view(C)
    Y = workspace_alloc((16384,), np.float32)
    # Y_acc: a one-element "local" buffer, held in a scalar
    for i in range(128):
        for j in range(128):
            Y_acc = np.float32(0.0)
            for k in range(128):
                Y_acc = Y_acc + A_1[i * 128 + k] * B_1[k * 128 + j]
            Y[i * 128 + j] = Y_acc
    for i in range(128):
        for j in range(128):
            cse_var_1 = i * 128 + j
            C_1[cse_var_1] = max(Y[cse_var_1], np.float32(0.0))
    workspace_free(Y)
