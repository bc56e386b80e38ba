"""Operator tags, as TVM's ``topi.tag``: they say how an operator reads its inputs."""

ELEMWISE = "elemwise"
BROADCAST = "broadcast"
INJECTIVE = "injective"
COMM_REDUCE = "comm_reduce"
COMM_REDUCE_IDX = "comm_reduce_idx"
MATMUL = "matmul"
