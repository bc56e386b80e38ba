"""topi elementwise math: TVM's compute ("compute", elemwise, i0, i1) and NumPy's numbers."""

import numpy as np
import pytest

import mlckit
from mlckit import te, topi
from mlckit.ir import assert_structural_equal
from mlckit.script import tir as T

from ..te.common import assert_runs_like

# op name -> (NumPy twin, input range)
UNARY = {
    "identity": (lambda x: x, (-2, 2)),
    "negative": (np.negative, (-2, 2)),
    "exp": (np.exp, (-2, 2)),
    "tanh": (np.tanh, (-2, 2)),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), (-4, 4)),
    "sin": (np.sin, (-3, 3)),
    "cos": (np.cos, (-3, 3)),
    "tan": (np.tan, (-1, 1)),
    "sinh": (np.sinh, (-2, 2)),
    "cosh": (np.cosh, (-2, 2)),
    "asin": (np.arcsin, (-0.9, 0.9)),
    "acos": (np.arccos, (-0.9, 0.9)),
    "atan": (np.arctan, (-3, 3)),
    "floor": (np.floor, (-3, 3)),
    "ceil": (np.ceil, (-3, 3)),
    "trunc": (np.trunc, (-3, 3)),
    "round": (np.round, (-3, 3)),
    "abs": (np.abs, (-3, 3)),
    "log": (np.log, (0.1, 5)),
    "log2": (np.log2, (0.1, 5)),
    "log10": (np.log10, (0.1, 5)),
    "sqrt": (np.sqrt, (0, 5)),
    "rsqrt": (lambda x: 1 / np.sqrt(x), (0.1, 5)),
    "sign": (np.sign, (-3, 3)),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_ops_run_like_numpy(name):
    twin, (lo, hi) = UNARY[name]
    A = te.placeholder((3, 5), name="A")
    B = getattr(topi, name)(A)
    a = np.linspace(lo, hi, 15, dtype="float32").reshape(3, 5)
    if name == "sign":
        a[1, 2] = 0
    assert_runs_like(te.create_prim_func([A, B]), [a, np.zeros_like(a)], [1], [twin(a)],
                     rtol=2e-5, atol=1e-6)


def test_exp_is_a_compute_named_compute_over_i0_i1():
    A = te.placeholder((4, 8), name="A")
    B = topi.exp(A)
    assert (B.op.name, B.op.tag) == ("compute", "elemwise")

    @T.prim_func
    def expected(A: T.Buffer((4, 8), "float32"), compute: T.Buffer((4, 8), "float32")):
        T.func_attr({"tir.noalias": True})
        for i0, i1 in T.grid(4, 8):
            with T.block("compute"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                compute[v_i0, v_i1] = T.exp(A[v_i0, v_i1])

    func = te.create_prim_func([A, B])
    assert_structural_equal(func.with_attr("global_symbol", "expected"), expected)


def test_isnan_isinf_isfinite_give_bools():
    A = te.placeholder((4,), name="A")
    a = np.array([1.0, np.nan, np.inf, -np.inf], "float32")
    func = te.create_prim_func([A, topi.isnan(A), topi.isinf(A), topi.isfinite(A)])
    z = np.zeros(4, bool)
    assert_runs_like(func, [a, z, z, z], [1, 2, 3], [np.isnan(a), np.isinf(a), np.isfinite(a)])


def test_log_of_integers_casts_to_float32_first():
    A = te.placeholder((4,), "int32", name="A")
    B = topi.log(A)
    assert B.dtype == "float32"
    (cast,) = B.op.input_tensors
    assert cast.op.name == "compute" and cast.op.tag == "" and B.op.tag == "elemwise"
    a = np.array([1, 2, 3, 10], "int32")
    assert_runs_like(te.create_prim_func([A, B]), [a, np.zeros(4, "float32")], [1], [np.log(a)])


def test_sqrt_of_integers_tags_its_cast_elemwise():
    A = te.placeholder((4,), "int32", name="A")
    B = topi.sqrt(A)
    assert B.op.input_tensors[0].op.tag == "elemwise"
    a = np.array([1, 4, 9, 2], "int32")
    assert_runs_like(te.create_prim_func([A, B]), [a, np.zeros(4, "float32")], [1],
                     [np.sqrt(a)])


def test_abs_of_integers():
    A = te.placeholder((4,), "int32", name="A")
    a = np.array([-3, 0, 2, -1], "int32")
    assert_runs_like(te.create_prim_func([A, topi.abs(A)]), [a, np.zeros(4, "int32")], [1],
                     [np.abs(a)])


def test_clip():
    A = te.placeholder((6,), name="A")
    B = topi.clip(A, 0.0, 6.0)
    a = np.array([-1, 0, 3, 6, 7, 2.5], "float32")
    assert_runs_like(te.create_prim_func([A, B]), [a, np.zeros(6, "float32")], [1],
                     [np.clip(a, 0, 6)])


def test_cast_tensor_and_scalar():
    A = te.placeholder((4,), name="A")
    B = topi.cast(A, "int32")
    assert B.dtype == "int32" and B.op.tag == "elemwise"
    assert topi.cast(te.var("n"), "int64").dtype == "int64"
    a = np.array([1.7, -2.2, 3.0, 0.4], "float32")
    assert_runs_like(te.create_prim_func([A, B]), [a, np.zeros(4, "int32")], [1],
                     [a.astype("int32")])


def test_math_on_a_non_tensor_is_refused():
    with pytest.raises(mlckit.TVMError, match=r"topi.exp: x must be a te.Tensor"):
        topi.exp(np.zeros(3))
