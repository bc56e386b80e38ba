"""Printing tensor-expression nodes: what ``print(C.op.body)`` shows, as TVM prints it."""

from mlckit import te


def test_tensor_element_prints_as_the_tensor_name_indexed():
    A = te.placeholder((8, 4), name="A")
    i = te.var("i")
    assert (A[i, 2] + 1).script() == "A[i, 2] + T.float32(1.0)"


def test_reduction_prints_as_t_reduce():
    A = te.placeholder((8, 4), name="A")
    k = te.reduce_axis((0, 4), name="k")
    B = te.compute((8,), lambda i: te.sum(A[i, k] * 2, axis=k), name="B")
    assert B.op.body[0].script() == (
        'T.reduce(T.comm_reducer(lambda x, y: x + y, [T.float32(0.0)]), '
        'source=[A[i, k] * T.float32(2.0)], init=[], '
        'axis=[T.iter_var(k, T.Range(0, 4), "CommReduce", "")], condition=T.bool(True), '
        'value_index=0)'
    )
