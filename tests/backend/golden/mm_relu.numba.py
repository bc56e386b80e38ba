# ruff: noqa - golden file of tests/backend/test_golden.py (generated source)
"""PrimFunc 'mm_relu' compiled by mlckit.backend.numba_cpu (generated)."""

# LLVM: SLP vectorizer on, no partial loop unrolling, no LICM promotion (numba_cpu.llvm_pipeline)

import numpy as np
from numba import njit


@njit(cache=True)
def mm_relu(A, B, C):
    # flat views of the arguments (A_flat[i * 128 + k] is A[vi, vk]): LLVM sees constant strides, as with TVM's flattened buffers
    A_flat = A.reshape(-1)
    B_flat = B.reshape(-1)
    C_flat = C.reshape(-1)
    Y = np.empty((128, 128), dtype="float32")
    for i in range(128):
        for j in range(128):
            # Y_acc: a one-element "local" buffer, held in a scalar
            Y_acc = np.float32(0.0)
            for k in range(128):
                # block "Y"
                vi = i
                vj = j
                vk = k
                Y_acc = Y_acc + A_flat[i * 128 + k] * B_flat[k * 128 + j]
            Y[i, j] = Y_acc
    for i in range(128):
        for j in range(128):
            # block "C"
            vi = i
            vj = j
            C_flat[i * 128 + j] = max(Y[vi, vj], np.float32(0.0))
