"""te.placeholder / te.compute / te.Tensor: the objects the course inspects, and bad input."""

import pytest

import mlckit
from mlckit import te, tir
from mlckit.tir.expr import FloatImm, IntImm, Max, Var


def test_placeholder_has_shape_dtype_name_and_ndim():
    A = te.placeholder((128, 64), name="A", dtype="float16")
    assert type(A) is te.Tensor
    assert isinstance(A.op, te.PlaceholderOp)
    assert A.dtype == "float16" and A.name == "A" and A.ndim == 2
    assert [int(s) for s in A.shape] == [128, 64]
    assert all(isinstance(s, IntImm) and s.dtype == "int32" for s in A.shape)
    assert repr(A) == "Tensor(shape=[128, 64], op.name=A)"


def test_placeholder_defaults_are_tvms():
    A = te.placeholder((4,))
    assert A.dtype == "float32" and A.name == "placeholder"


def test_shape_entries_compare_to_ints_and_to_each_other():
    A = te.placeholder((128, 64), name="A")
    B = te.placeholder((64, 32), name="B")
    assert A.shape[1] == B.shape[0]
    assert A.shape[0] == 128
    assert not A.shape[0] == B.shape[0]
    assert A.shape[0] != 64


def test_shape_is_a_copy():
    A = te.placeholder((4, 4), name="A")
    A.shape.append(7)
    assert A.ndim == 2


def test_symbolic_shape_keeps_the_variable():
    n = te.var("n")
    A = te.placeholder((n, 3), name="A")
    assert A.shape[0] is n
    assert te.var().name == "tindex" and te.var().dtype == "int32"
    assert isinstance(te.size_var("m"), tir.SizeVar)


def test_int64_shape_makes_int64_axes():
    n = te.var("n", "int64")
    A = te.placeholder((n,), name="A")
    B = te.compute(A.shape, lambda *i: A(*i) + 1, name="B")
    (axis,) = B.op.axis
    assert axis.var.dtype == "int64" and axis.dom.min.dtype == "int64"


def test_compute_op_exposes_name_tag_attrs_axis_and_body():
    A = te.placeholder((8, 4), name="A")
    B = te.compute((8, 4), lambda i, j: A[i, j] + 1, name="B", tag="elemwise",
                   attrs={"note": "x"})
    op = B.op
    assert isinstance(op, te.ComputeOp)
    assert (op.name, op.tag, op.attrs) == ("B", "elemwise", {"note": "x"})
    assert [iv.var.name for iv in op.axis] == ["i", "j"]
    assert op.reduce_axis == []
    assert op.input_tensors == [A]
    assert len(op.body) == 1 and op.body[0].dtype == "float32"
    assert op.num_outputs == 1 and op.output(0) is B


def test_reduction_axes_are_on_the_op():
    A = te.placeholder((8, 4), name="A")
    k = te.reduce_axis((0, 4), name="k")
    B = te.compute((8,), lambda i: te.sum(A[i, k], axis=k), name="B")
    assert B.op.reduce_axis == [k]
    assert isinstance(B.op.body[0], te.Reduce)


def test_star_args_name_the_indices_i0_i1():
    A = te.placeholder((2, 3, 4), name="A")
    B = te.compute(A.shape, lambda *i: A(*i) * 2, name="B")
    assert [iv.var.name for iv in B.op.axis] == ["i0", "i1", "i2"]
    C = te.compute(A.shape, lambda n, *rest: A(n, *rest), name="C")
    assert [iv.var.name for iv in C.op.axis] == ["n", "i0", "i1"]
    D = te.compute(A.shape, lambda *i: A(*i), name="D", varargs_names=["x", "y", "z"])
    assert [iv.var.name for iv in D.op.axis] == ["x", "y", "z"]


def test_te_max_of_an_expression_and_an_int_is_an_elementwise_float_max():
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: te.max(A[i], 0), name="B")
    body = B.op.body[0]
    assert isinstance(body, Max)
    assert isinstance(body.b, FloatImm) and body.b.dtype == "float32" and body.b.value == 0.0


def test_multiple_outputs_are_named_name_v0_name_v1():
    A = te.placeholder((4,), name="A")
    B0, B1 = te.compute((4,), lambda i: (A[i] + 1, A[i] * 2), name="B")
    assert (B0.name, B1.name) == ("B.v0", "B.v1")
    assert B0.op is B1.op and (B0.value_index, B1.value_index) == (0, 1)


def test_tag_scope_tags_every_compute_inside():
    A = te.placeholder((4,), name="A")

    @te.tag_scope(tag="elemwise")
    def double(x):
        return te.compute(x.shape, lambda *i: x(*i) * 2)

    assert double(A).op.tag == "elemwise"
    assert double(A).op.name == "compute"
    with te.tag_scope("broadcast"):
        assert te.compute((4,), lambda i: A[i]).op.tag == "broadcast"
    assert te.compute((4,), lambda i: A[i]).op.tag == ""


def test_reduce_axis_takes_a_pair_or_a_range():
    k = te.reduce_axis((2, 10), name="k")
    assert int(k.dom.min) == 2 and int(k.dom.extent) == 8
    r = te.reduce_axis(tir.Range(0, 5), name="r")
    assert int(r.dom.extent) == 5 and r.iter_type == tir.IterVarType.CommReduce
    assert te.reduce_axis((0, 4)).var.name == "rv"
    n = te.var("n", "int64")
    s = te.reduce_axis((0, n))
    assert s.dom.min.dtype == "int64" and s.var.dtype == "int64"


def test_reduce_axis_works_in_index_arithmetic():
    A = te.placeholder((16,), name="A")
    k = te.reduce_axis((0, 8), name="k")
    B = te.compute((1,), lambda i: te.sum(A[k * 2 + i], axis=k), name="B")
    assert "k" in B.op.body[0].source[0].script()


# -- bad input -----------------------------------------------------------------------------
def test_wrong_arity_lambda_names_the_compute_rank_and_parameter_count():
    A = te.placeholder((4, 4), name="A")
    with pytest.raises(mlckit.TVMError, match=r"'B'.*2 dimension\(s\).*takes 1 index"):
        te.compute((4, 4), lambda i: A[i, 0], name="B")
    with pytest.raises(mlckit.TVMError, match=r"'C'.*1 dimension\(s\).*takes 2 index"):
        te.compute((4,), lambda i, j: A[i, j], name="C")


def test_placeholder_with_a_bad_dtype_names_the_placeholder():
    with pytest.raises(mlckit.TVMError, match=r"placeholder 'A'.*unknown dtype 'float33'"):
        te.placeholder((4,), "float33", name="A")
    with pytest.raises(ValueError):  # a TVMValueError is also a ValueError
        te.placeholder((4,), "handle", name="H")


def test_bad_shape_is_refused():
    with pytest.raises(mlckit.TVMError, match="every dimension must be an integer"):
        te.placeholder((4, 2.5), name="A")
    with pytest.raises(mlckit.TVMError, match="negative"):
        te.compute((-1,), lambda i: 0, name="B")


def test_indexing_with_the_wrong_number_of_indices_names_the_tensor():
    A = te.placeholder((4, 4), name="A")
    with pytest.raises(mlckit.TVMError, match=r"tensor 'A' has 2 dimension\(s\).*3 index"):
        te.compute((4,), lambda i: A[i, i, i], name="B")
    with pytest.raises(IndexError):
        A(0)


def test_indexing_with_a_float_is_refused():
    A = te.placeholder((4,), name="A")
    with pytest.raises(mlckit.TVMError, match=r"tensor 'A': index 0 must be an integer"):
        A[1.5]


def test_returning_a_tensor_instead_of_an_element_is_explained():
    A = te.placeholder((4,), name="A")
    with pytest.raises(mlckit.TVMError, match=r"returned the tensor 'A' itself"):
        te.compute((4,), lambda i: A, name="B")


def test_nested_tag_scopes_are_refused():
    with pytest.raises(mlckit.TVMError, match="nested"):
        with te.tag_scope("a"), te.tag_scope("b"):
            pass


def test_an_explicit_tag_inside_a_tag_scope_is_refused():
    with pytest.raises(mlckit.TVMError, match="inside te.tag_scope"):
        with te.tag_scope("a"):
            te.compute((4,), lambda i: i, tag="b")


def test_tensor_is_not_iterable():
    A = te.placeholder((4,), name="A")
    with pytest.raises(mlckit.TVMError, match="use .shape"):
        len(A)


def test_axis_vars_are_vars():
    B = te.compute((4,), lambda i: i * 2, name="B")
    assert isinstance(B.op.axis[0].var, Var) and B.dtype == "int32"
