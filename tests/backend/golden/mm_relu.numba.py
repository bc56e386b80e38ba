# ruff: noqa - golden file of tests/backend/test_golden.py (generated source)
"""PrimFunc 'mm_relu' compiled by mlckit.backend.numba_cpu (generated)."""

import numpy as np
from numba import njit


@njit(cache=True)
def mm_relu(A, B, C):
    Y = np.empty((128, 128), dtype="float32")
    for i in range(128):
        for j in range(128):
            # held in scalars over k (buffers do not overlap, as with tir.noalias)
            Y_acc = Y[i, j]
            for k in range(128):
                # block "Y"
                vi = i
                vj = j
                vk = k
                if vk == 0:
                    Y_acc = np.float32(0.0)
                Y_acc = Y_acc + A[vi, vk] * B[vk, vj]
            Y[i, j] = Y_acc
    for i in range(128):
        for j in range(128):
            # block "C"
            vi = i
            vj = j
            C[vi, vj] = max(Y[vi, vj], np.float32(0.0))
