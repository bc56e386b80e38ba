"""topi.nn.layer_norm and topi.nn.batch_norm: TVM's layer-norm TIR, NumPy's results."""

import numpy as np
import pytest

from mlckit import te, tir, topi
from mlckit.error import TVMError
from mlckit.ir import assert_structural_equal
from mlckit.script import tir as T

from ...relax.op.numerics import random
from ...te.common import assert_runs_like

I64 = lambda v: tir.IntImm("int64", v)  # noqa: E731


def test_layer_norm_is_tvms_one_pass_primfunc():
    X = te.placeholder([I64(2), I64(3), I64(4), I64(5)], name="x")
    G = te.placeholder([I64(4), I64(5)], name="g")
    B = te.placeholder([I64(4), I64(5)], name="b")
    Y = topi.nn.layer_norm(X, G, B, [-2, -1], 1e-5)

    @T.prim_func(private=True)
    def expected(x: T.Buffer((T.int64(2), T.int64(3), T.int64(4), T.int64(5)), "float32"),
                 g: T.Buffer((T.int64(4), T.int64(5)), "float32"),
                 b: T.Buffer((T.int64(4), T.int64(5)), "float32"),
                 T_layer_norm: T.Buffer((T.int64(2), T.int64(3), T.int64(4), T.int64(5)), "float32")):
        T.func_attr({"tir.noalias": True})
        x_red_temp_v0 = T.alloc_buffer((T.int64(2), T.int64(3)))
        x_red_temp_v1 = T.alloc_buffer((T.int64(2), T.int64(3)))
        for i0, i1, i2, i3 in T.grid(T.int64(2), T.int64(3), T.int64(4), T.int64(5)):
            with T.block("x_red_temp"):
                ax0, ax1, k2, k3 = T.axis.remap("SSRR", [i0, i1, i2, i3])
                with T.init():
                    x_red_temp_v0[ax0, ax1] = T.float32(0)
                    x_red_temp_v1[ax0, ax1] = T.float32(0)
                v_x_red_temp_v0: T.float32 = x_red_temp_v0[ax0, ax1] + x[ax0, ax1, k2, k3]
                v_x_red_temp_v1: T.float32 = x_red_temp_v1[ax0, ax1] + x[ax0, ax1, k2, k3] * x[ax0, ax1, k2, k3]
                x_red_temp_v0[ax0, ax1] = v_x_red_temp_v0
                x_red_temp_v1[ax0, ax1] = v_x_red_temp_v1
        for i0, i1, i2, i3 in T.grid(T.int64(2), T.int64(3), T.int64(4), T.int64(5)):
            with T.block("T_layer_norm"):
                ax0, ax1, ax2, ax3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                T_layer_norm[ax0, ax1, ax2, ax3] = (x[ax0, ax1, ax2, ax3] - x_red_temp_v0[ax0, ax1] / T.float32(20)) * T.rsqrt(x_red_temp_v1[ax0, ax1] / T.float32(20) - x_red_temp_v0[ax0, ax1] / T.float32(20) * (x_red_temp_v0[ax0, ax1] / T.float32(20)) + T.float32(1e-05)) * g[ax2, ax3] + b[ax2, ax3]

    func = te.create_prim_func([X, G, B, Y], index_dtype_override="int64")
    assert_structural_equal(func.without_attr("global_symbol"), expected)


def test_layer_norm_equals_numpy():
    X, G, B = (te.placeholder(s, name=n) for s, n in (((3, 8), "X"), ((8,), "G"), ((8,), "B")))
    x, g, b = random((3, 8), seed=1, low=-3, high=3), random((8,), seed=2), random((8,), seed=3)
    want = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5) * g + b
    assert_runs_like(te.create_prim_func([X, G, B, topi.nn.layer_norm(X, G, B, [1], 1e-5)]),
                     [x, g, b, np.zeros_like(x)], [3], [want.astype("float32")],
                     rtol=1e-4, atol=1e-5)


def test_layer_norm_of_integers_is_refused():
    X = te.placeholder((3, 8), "int32", name="X")
    G = te.placeholder((8,), "int32", name="G")
    with pytest.raises(TVMError, match="topi.nn.layer_norm: only float32 and float16"):
        topi.nn.layer_norm(X, G, None, [1], 1e-5)


@pytest.mark.parametrize("training", [False, True])
def test_batch_norm_equals_numpy(training):
    shapes = [(2, 3, 4), (3,), (3,), (3,), (3,)]
    tensors = [te.placeholder(s, name=n) for s, n in zip(shapes, "XGBMV")]
    outs = topi.nn.batch_norm(*tensors, axis=1, training=training)
    x, g, b, m = (random(s, seed=i) for i, s in enumerate(shapes[:4]))
    v = random((3,), seed=9, low=0.5, high=2)
    c = (1, 3, 1)
    mean, var = (x.mean((0, 2)), x.var((0, 2))) if training else (m, v)
    want = (x - mean.reshape(c)) / np.sqrt(var.reshape(c) + 1e-5) * g.reshape(c) + b.reshape(c)
    new_m = 0.9 * m + 0.1 * mean if training else m
    new_v = 0.9 * v + 0.1 * var if training else v
    arrays = [x, g, b, m, v, np.zeros_like(x), np.zeros(3, "float32"), np.zeros(3, "float32")]
    assert_runs_like(te.create_prim_func([*tensors, *outs]), arrays, [5, 6, 7],
                     [want.astype("float32"), new_m.astype("float32"), new_v.astype("float32")],
                     rtol=1e-4, atol=1e-5)
