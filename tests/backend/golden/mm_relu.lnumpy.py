# ruff: noqa - golden file of tests/backend/test_golden.py (generated source)
def mm_relu(A, B, C):
    Y = np.empty((128, 128), dtype="float32")
    for i in range(128):
        for j in range(128):
            for k in range(128):
                # block "Y"
                vi = i
                vj = j
                vk = k
                if vk == 0:
                    Y[vi, vj] = 0.0
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for i in range(128):
        for j in range(128):
            # block "C"
            vi = i
            vj = j
            C[vi, vj] = max(Y[vi, vj], 0.0)
