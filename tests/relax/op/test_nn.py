"""relax.op.nn: activations, softmax, convolution, pooling, normalizations and dropout —
TVM's shape rules and legalized TIR, NumPy's results through the VM."""

import logging
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlckit import relax, tir
from mlckit.arith import Analyzer
from mlckit.error import TVMError
from mlckit.ir import assert_structural_equal
from mlckit.relax.strategy import NoApplicableImplementation
from mlckit.relax.transform import LegalizeOps
from mlckit.script import from_source
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T

from .helpers import infer, one_call_module, tensor
from .numerics import TARGETS, call, conv2d_nchw, pool2d_nchw, random, run, vm_of

_erf = np.vectorize(math.erf)


def var(shape, dtype="float32", name="x"):
    return relax.Var(name, relax.TensorStructInfo(shape, dtype))


# -- activations ----------------------------------------------------------------------------------
ACTIVATIONS = {
    "relu": lambda x: np.maximum(x, 0),
    "gelu": lambda x: x * 0.5 * (1 + _erf(x / np.sqrt(2))),
    "gelu_tanh": lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))),
    "silu": lambda x: x / (1 + np.exp(-x)),
    "softmax": lambda x: np.exp(x - x.max(1, keepdims=True))
    / np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True),
    "log_softmax": lambda x: x - x.max(-1, keepdims=True)
    - np.log(np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True)),
}


def activation_module(name):
    n, m = tir.Var("n", "int64"), tir.Var("m", "int64")
    op = getattr(relax.op.nn, name)
    make = (lambda x: op(x, axis=1)) if name == "softmax" else op
    return one_call_module(make, tensor((n, m)))


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize("target", TARGETS)
def test_activations_equal_numpy_for_any_shape(name, target):
    vm = vm_of(activation_module(name), target)

    @settings(max_examples=8, deadline=None, derandomize=True, database=None)
    @given(st.integers(1, 4), st.integers(1, 7))
    def check(n, m):
        x = random((n, m), seed=n * 10 + m, low=-3, high=3)
        np.testing.assert_allclose(call(vm, x), ACTIVATIONS[name](x), rtol=1e-5, atol=1e-6)

    check()


def test_relu_legalizes_to_tvms_primfunc():
    @I.ir_module
    class Relu:
        @R.function
        def main(x: R.Tensor((2, 3), "float32")):
            gv: R.Tensor((2, 3), "float32") = R.nn.relu(x)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((2, 3), "float32")):
            gv = R.call_tir(Expected.relu, (x,), R.Tensor((2, 3), dtype="float32"))
            return gv

        @T.prim_func(private=True)
        def relu(rxplaceholder: T.Buffer((T.int64(2), T.int64(3)), "float32"),
                 compute: T.Buffer((T.int64(2), T.int64(3)), "float32")):
            T.func_attr({"tir.noalias": True})
            for i0, i1 in T.grid(T.int64(2), T.int64(3)):
                with T.block("compute"):
                    i0_1, i1_1 = T.axis.remap("SS", [i0, i1])
                    T.reads(rxplaceholder[i0_1, i1_1])
                    T.writes(compute[i0_1, i1_1])
                    compute[i0_1, i1_1] = T.max(rxplaceholder[i0_1, i1_1], T.float32(0))

    assert_structural_equal(LegalizeOps()(Relu), Expected)


def test_softmax_legalizes_to_tvms_four_blocks():
    @I.ir_module
    class Softmax:
        @R.function
        def main(x: R.Tensor((2, 3, 16, 32), "float32")):
            gv: R.Tensor((2, 3, 16, 32), "float32") = R.nn.softmax(x, axis=-2)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((2, 3, 16, 32), "float32")):
            gv = R.call_tir(Expected.softmax, (x,), R.Tensor((2, 3, 16, 32), dtype="float32"))
            return gv

        @T.prim_func(private=True)
        def softmax(x: T.Buffer((T.int64(2), T.int64(3), T.int64(16), T.int64(32)), "float32"),
                    T_softmax_norm: T.Buffer((T.int64(2), T.int64(3), T.int64(16), T.int64(32)), "float32")):
            T.func_attr({"tir.noalias": True})
            T_softmax_maxelem = T.alloc_buffer((T.int64(2), T.int64(3), T.int64(32)))
            T_softmax_exp = T.alloc_buffer((T.int64(2), T.int64(3), T.int64(16), T.int64(32)))
            T_softmax_expsum = T.alloc_buffer((T.int64(2), T.int64(3), T.int64(32)))
            for i0, i1, i2, k in T.grid(T.int64(2), T.int64(3), T.int64(32), T.int64(16)):
                with T.block("T_softmax_maxelem"):
                    v0, v1, v2, vk = T.axis.remap("SSSR", [i0, i1, i2, k])
                    with T.init():
                        T_softmax_maxelem[v0, v1, v2] = T.float32(-3.4028234663852886e+38)
                    T_softmax_maxelem[v0, v1, v2] = T.max(T_softmax_maxelem[v0, v1, v2], x[v0, v1, vk, v2])
            for i0, i1, i2, i3 in T.grid(T.int64(2), T.int64(3), T.int64(16), T.int64(32)):
                with T.block("T_softmax_exp"):
                    v0, v1, v2, v3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                    T_softmax_exp[v0, v1, v2, v3] = T.exp(x[v0, v1, v2, v3] - T_softmax_maxelem[v0, v1, v3])
            for i0, i1, i2, k in T.grid(T.int64(2), T.int64(3), T.int64(32), T.int64(16)):
                with T.block("T_softmax_expsum"):
                    v0, v1, v2, vk = T.axis.remap("SSSR", [i0, i1, i2, k])
                    with T.init():
                        T_softmax_expsum[v0, v1, v2] = T.float32(0)
                    T_softmax_expsum[v0, v1, v2] = T_softmax_expsum[v0, v1, v2] + T_softmax_exp[v0, v1, vk, v2]
            for i0, i1, i2, i3 in T.grid(T.int64(2), T.int64(3), T.int64(16), T.int64(32)):
                with T.block("T_softmax_norm"):
                    v0, v1, v2, v3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                    T.block_attr({"axis": 2})
                    T_softmax_norm[v0, v1, v2, v3] = T_softmax_exp[v0, v1, v2, v3] / T_softmax_expsum[v0, v1, v3]

    assert_structural_equal(LegalizeOps()(Softmax), Expected)


@pytest.mark.parametrize("op", ["gelu", "gelu_tanh", "silu"])
def test_float_activations_refuse_integer_tensors(op):
    with pytest.raises(TypeError, match=f"relax.nn.{op}: requires data to have a float dtype, "
                                        "but its dtype is int32"):
        infer(getattr(relax.op.nn, op)(var((2, 3), "int32")))


def test_relu_accepts_integers():
    assert_structural_equal(infer(relax.op.nn.relu(var((2, 3), "int32"))),
                            relax.TensorStructInfo((2, 3), "int32"))


def test_softmax_axis_out_of_range_names_the_op_and_the_rank():
    with pytest.raises(TVMError, match=r"relax.nn.softmax: axis=2 is out of range for a tensor "
                                       r"of rank 2"):
        infer(relax.op.nn.softmax(var((2, 3)), axis=2))


# -- conv2d -------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, x, w, out", [
    ({}, (2, 3, 28, 28), (4, 3, 3, 3), (2, 4, 26, 26)),
    ({"padding": 1}, (2, 3, 28, 28), (4, 3, 3, 3), (2, 4, 28, 28)),
    ({"strides": 2, "padding": (1, 1), "dilation": 2, "groups": 8},
     (2, 128, 28, 28), (64, 16, 3, 3), (2, 64, 13, 13)),
    ({"padding": (1, 2, 3, 4)}, (1, 1, 10, 10), (1, 1, 3, 3), (1, 1, 12, 14)),
    ({"data_layout": "NHWC", "kernel_layout": "HWIO"}, (2, 28, 28, 3), (3, 3, 3, 4),
     (2, 26, 26, 4)),
])
def test_conv2d_output_shape(kwargs, x, w, out):
    assert_structural_equal(infer(relax.op.nn.conv2d(var(x), var(w, name="w"), **kwargs)),
                            relax.TensorStructInfo(out, "float32"))


def test_conv2d_of_symbolic_shapes():
    n, c, h, w_, f, kh, kw = (tir.Var(v, "int64") for v in ("n", "c", "h", "w", "f", "kh", "kw"))
    sinfo = infer(relax.op.nn.conv2d(var((n, c, h, w_)), var((f, c, kh, kw), name="k")))
    assert sinfo.ndim == 4 and sinfo.dims[0] is n and sinfo.dims[1] is f
    ana = Analyzer()
    assert ana.simplify(sinfo.dims[2] - (h - kh + 1)).value == 0
    assert ana.simplify(sinfo.dims[3] - (w_ - kw + 1)).value == 0


@pytest.mark.parametrize("x, w, kwargs, words", [
    ((2, 3, 8, 8), (4, 2, 3, 3), {}, ["relax.nn.conv2d", "3 input channels", "expects 2 x groups=1"]),
    ((2, 4, 8, 8), (3, 2, 3, 3), {"groups": 2}, ["output channels", "not divisible by groups=2"]),
    ((2, 3, 2, 2), (4, 3, 3, 3), {}, ["output height would be 0"]),
    ((2, 3, 8, 8), (4, 3, 3, 3), {"data_layout": "NCHW16c"}, ["data_layout='NCHW16c'"]),
])
def test_conv2d_errors_name_the_op_and_the_shapes(x, w, kwargs, words):
    with pytest.raises(TVMError) as err:
        infer(relax.op.nn.conv2d(var(x), var(w, name="w"), **kwargs))
    for word in words:
        assert word in str(err.value)


def test_conv2d_prints_its_attributes_as_tvm_and_parses_back():
    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor((1, 4, 8, 8), "float32"), w: R.Tensor((4, 2, 3, 3), "float32")):
            gv = R.nn.conv2d(x, w, strides=2, padding=1, groups=2)
            return gv

    text = Module.script()
    assert ('R.nn.conv2d(x, w, strides=[2, 2], padding=[1, 1, 1, 1], dilation=[1, 1], '
            'groups=2, data_layout="NCHW", kernel_layout="OIHW", out_layout="NCHW", '
            'out_dtype="void")') in text
    assert_structural_equal(from_source(text), Module)


CONV_CASES = [
    dict(strides=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1), groups=1),
    dict(strides=(2, 2), padding=(1, 1, 1, 1), dilation=(1, 1), groups=1),
    dict(strides=(1, 2), padding=(1, 2, 0, 1), dilation=(2, 1), groups=1),
    dict(strides=(1, 1), padding=(1, 1, 1, 1), dilation=(1, 1), groups=2),
]


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_equals_numpy(case):
    x, w = random((2, 4, 9, 9), seed=1), random((6, 4 // case["groups"], 3, 3), seed=2)
    mod = one_call_module(lambda a, b: relax.op.nn.conv2d(a, b, **case),
                          tensor(x.shape), tensor(w.shape))
    want = conv2d_nchw(x, w, **case)
    np.testing.assert_allclose(run(mod, x, w, target="lnumpy"), want, rtol=1e-4, atol=1e-5)


def test_conv2d_in_nhwc_layout_equals_numpy():
    x, w = random((2, 7, 7, 3), seed=1), random((3, 3, 3, 5), seed=2)          # NHWC, HWIO
    mod = one_call_module(lambda a, b: relax.op.nn.conv2d(a, b, padding=1, data_layout="NHWC",
                                                          kernel_layout="HWIO"),
                          tensor(x.shape), tensor(w.shape))
    want = conv2d_nchw(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), padding=(1, 1, 1, 1))
    np.testing.assert_allclose(run(mod, x, w, target="lnumpy"), want.transpose(0, 2, 3, 1),
                               rtol=1e-4, atol=1e-5)


def test_conv2d_on_llvm_uses_the_tiled_schedule_and_equals_numpy(caplog):
    mod = one_call_module(lambda a, b: relax.op.nn.conv2d(a, b, padding=1),
                          tensor((2, 3, 8, 8)), tensor((8, 3, 3, 3)))
    with caplog.at_level(logging.INFO, logger="mlckit.strategy"):
        lowered = LegalizeOps()(mod)
    assert "relax.nn.conv2d -> conv2d.tiled (level 15) for target llvm" in caplog.text
    text = lowered["conv2d"].script()
    assert 'scope="local"' in text and "T.vectorized" in text and "pad_temp" not in text
    x, w = random((2, 3, 8, 8), seed=3), random((8, 3, 3, 3), seed=4)
    np.testing.assert_allclose(run(mod, x, w), conv2d_nchw(x, w, padding=(1, 1, 1, 1)),
                               rtol=1e-4, atol=1e-5)


def test_conv2d_of_an_untileable_shape_on_llvm_is_generic(caplog):
    mod = one_call_module(lambda a, b: relax.op.nn.conv2d(a, b, strides=2),
                          tensor((1, 2, 7, 7)), tensor((3, 2, 3, 3)))
    with caplog.at_level(logging.INFO, logger="mlckit.strategy"):
        LegalizeOps()(mod)
    assert "relax.nn.conv2d -> conv2d.generic (level 10) for target llvm" in caplog.text
    x, w = random((1, 2, 7, 7), seed=5), random((3, 2, 3, 3), seed=6)
    np.testing.assert_allclose(run(mod, x, w), conv2d_nchw(x, w, strides=(2, 2)), rtol=1e-4,
                               atol=1e-5)


def test_conv2d_with_a_different_output_layout_has_no_implementation():
    mod = one_call_module(lambda a, b: relax.op.nn.conv2d(a, b, out_layout="NHWC"),
                          tensor((1, 2, 7, 7)), tensor((3, 2, 3, 3)))
    with pytest.raises(NoApplicableImplementation, match="relax.nn.conv2d: no implementation "
                                                         "applies to this call on target 'llvm'"):
        LegalizeOps()(mod)


# -- pooling --------------------------------------------------------------------------------------
POOL_CASES = [
    ("max", dict(pool_size=(2, 2), strides=(2, 2))),
    ("max", dict(pool_size=(3, 3), strides=(2, 2), padding=(1, 1, 1, 1))),
    ("max", dict(pool_size=(3, 3), strides=(2, 2), ceil_mode=True)),
    ("max", dict(pool_size=(2, 2), strides=(1, 1), dilation=(2, 2))),
    ("avg", dict(pool_size=(3, 3), strides=(1, 1), padding=(1, 1, 1, 1))),
    ("avg", dict(pool_size=(3, 3), strides=(1, 1), padding=(1, 1, 1, 1),
                 count_include_pad=True)),
    ("avg", dict(pool_size=(2, 3), strides=(2, 2), padding=(0, 1, 0, 1), ceil_mode=True)),
]


@pytest.mark.parametrize("kind, case", POOL_CASES)
def test_pool2d_equals_numpy(kind, case):
    x = random((2, 3, 9, 9), seed=7)
    op = relax.op.nn.max_pool2d if kind == "max" else relax.op.nn.avg_pool2d
    mod = one_call_module(lambda a: op(a, **case), tensor(x.shape))
    want = pool2d_nchw(x, kind, **case)
    assert_structural_equal(mod["main"].ret_struct_info,
                            relax.TensorStructInfo(want.shape, "float32"))
    np.testing.assert_allclose(run(mod, x, target="lnumpy"), want, rtol=1e-5, atol=1e-6)


def test_max_pool2d_in_nhwc_on_llvm_equals_numpy():
    x = random((2, 8, 8, 3), seed=8)
    mod = one_call_module(lambda a: relax.op.nn.max_pool2d(a, pool_size=2, strides=2,
                                                           layout="NHWC"), tensor(x.shape))
    want = pool2d_nchw(x.transpose(0, 3, 1, 2), "max", (2, 2), (2, 2)).transpose(0, 2, 3, 1)
    np.testing.assert_allclose(run(mod, x), want, rtol=1e-6)


def test_pool2d_output_shape_with_ceil_mode_is_tvms():
    sinfo = infer(relax.op.nn.max_pool2d(var((1, 1, 6, 6)), pool_size=3, strides=2,
                                         ceil_mode=True))
    assert_structural_equal(sinfo, relax.TensorStructInfo((1, 1, 3, 3), "float32"))


@pytest.mark.parametrize("output_size", [(1, 1), (2, 3), None])
def test_adaptive_avg_pool2d_equals_numpy(output_size):
    x = random((2, 3, 7, 5), seed=9)
    mod = one_call_module(lambda a: relax.op.nn.adaptive_avg_pool2d(a, output_size),
                          tensor(x.shape))
    oh, ow = output_size or (7, 5)
    want = np.zeros((2, 3, oh, ow))
    for i in range(oh):
        for j in range(ow):
            r0, r1 = i * 7 // oh, -(-(i + 1) * 7 // oh)
            c0, c1 = j * 5 // ow, -(-(j + 1) * 5 // ow)
            want[:, :, i, j] = x[:, :, r0:r1, c0:c1].mean((2, 3))
    np.testing.assert_allclose(run(mod, x, target="lnumpy"), want, rtol=1e-5, atol=1e-6)


# -- normalizations -------------------------------------------------------------------------------
def test_layer_norm_equals_numpy_for_any_rows():
    n = tir.Var("n", "int64")
    mod = one_call_module(lambda x, g, b: relax.op.nn.layer_norm(x, g, b, axes=[-2, -1]),
                          tensor((n, 3, 4)), tensor((3, 4)), tensor((3, 4)))
    vm = vm_of(mod, "llvm")
    g, b = random((3, 4), seed=1), random((3, 4), seed=2)
    for rows in (1, 5):
        x = random((rows, 3, 4), seed=rows, low=-2, high=2)
        mean = x.mean((1, 2), keepdims=True)
        var_ = x.var((1, 2), keepdims=True)
        want = (x - mean) / np.sqrt(var_ + 1e-5) * g + b
        np.testing.assert_allclose(call(vm, x, g, b), want, rtol=1e-4, atol=1e-5)


def test_layer_norm_gamma_of_the_wrong_shape_is_an_error_naming_it():
    with pytest.raises(TVMError, match=r"relax.nn.layer_norm: gamma \(5,\) does not match data "
                                       r"\(2, 4\) on the axes \[-1\]"):
        infer(relax.op.nn.layer_norm(var((2, 4)), var((5,), name="g"), var((4,), name="b"),
                                     axes=[-1]))


def test_rms_norm_equals_numpy_for_any_rows():
    n = tir.Var("n", "int64")
    mod = one_call_module(lambda x, w: relax.op.nn.rms_norm(x, w, axes=[-1], epsilon=1e-6),
                          tensor((n, 8)), tensor((8,)))
    vm = vm_of(mod, "llvm")
    w = random((8,), seed=1)
    for rows in (1, 4):
        x = random((rows, 8), seed=rows, low=-2, high=2)
        want = x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * w
        np.testing.assert_allclose(call(vm, x, w), want, rtol=1e-5, atol=1e-6)


def test_rms_norm_over_two_axes_in_float16_accumulates_in_float32():
    mod = one_call_module(lambda x, w: relax.op.nn.rms_norm(x, w, axes=[1, 2]),
                          tensor((2, 3, 4), "float16"), tensor((3, 4), "float16"))
    x, w = random((2, 3, 4), "float16", low=-2, high=2), random((3, 4), "float16", seed=3)
    x32, w32 = x.astype("float32"), w.astype("float32")
    want = x32 / np.sqrt((x32 * x32).mean((1, 2), keepdims=True) + 1e-5) * w32
    got = run(mod, x, w, target="lnumpy")
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype("float32"), want, rtol=2e-3, atol=2e-3)


def test_rms_norm_prints_and_parses_as_tvm():
    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor(("n", 16), "float32"), w: R.Tensor((16,), "float32")):
            n = T.int64()
            y: R.Tensor((n, 16), "float32") = R.nn.rms_norm(x, w, axes=[-1], epsilon=1e-5)
            return y

    assert ("R.nn.rms_norm(x, w, axes=[-1], epsilon=1.0000000000000001e-05)"
            in Module.script())
    assert_structural_equal(from_source(Module.script()), Module)


def test_rms_norm_weight_of_the_wrong_shape_is_an_error_naming_it():
    with pytest.raises(TVMError, match=r"relax.nn.rms_norm: weight \(5,\) does not match data "
                                       r"\(2, 4\) on the axes \[-1\]"):
        infer(relax.op.nn.rms_norm(var((2, 4)), var((5,), name="w"), axes=[-1]))


def test_rms_norm_of_integers_is_refused():
    with pytest.raises(TVMError, match="relax.nn.rms_norm: requires data to have a float dtype"):
        infer(relax.op.nn.rms_norm(var((2, 4), "int32"), var((4,), "int32"), axes=[-1]))


def group_norm_numpy(x, g, b, groups, eps=1e-5):
    n, c = x.shape[:2]
    grouped = x.reshape(n, groups, -1)
    mean = grouped.mean(-1, keepdims=True)
    var_ = grouped.var(-1, keepdims=True)
    out = ((grouped - mean) / np.sqrt(var_ + eps)).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return out * g.reshape(shape) + b.reshape(shape)


def test_group_norm_equals_numpy_for_any_batch():
    n = tir.Var("n", "int64")
    mod = one_call_module(lambda x, g, b: relax.op.nn.group_norm(
        x, g, b, num_groups=2, channel_axis=1, axes=[2, 3]),
        tensor((n, 4, 3, 5)), tensor((4,)), tensor((4,)))
    vm = vm_of(mod, "llvm")
    g, b = random((4,), seed=1), random((4,), seed=2)
    for batch in (1, 2):
        x = random((batch, 4, 3, 5), seed=batch, low=-2, high=2)
        np.testing.assert_allclose(call(vm, x, g, b), group_norm_numpy(x, g, b, 2),
                                   rtol=1e-4, atol=1e-5)


def test_group_norm_prints_its_attributes_as_tvm_and_parses_back():
    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor((1, 4, 3, 3), "float32"), g: R.Tensor((4,), "float32"),
                 b: R.Tensor((4,), "float32")):
            gv = R.nn.group_norm(x, g, b, num_groups=2, channel_axis=1, axes=[2, 3])
            return gv

    text = Module.script()
    assert ("R.nn.group_norm(x, g, b, num_groups=2, channel_axis=1, axes=[2, 3], "
            "epsilon=1.0000000000000001e-05, center=True, scale=True)") in text
    assert_structural_equal(from_source(text), Module)


@pytest.mark.parametrize("x, g, kwargs, words", [
    ((1, 6, 3), (6,), {"num_groups": 4}, ["6 channels (axis 1), not divisible by num_groups=4"]),
    ((1, 6, 3), (5,), {"num_groups": 2}, ["gamma (5,) must have one value per channel",
                                          "has 6 channels on axis 1"]),
    ((1, 6, 3), (6,), {"num_groups": 2, "axes": [1]}, ["channel_axis 1 is also in axes [1]"]),
])
def test_group_norm_errors_name_the_op_and_the_shapes(x, g, kwargs, words):
    kwargs = {"channel_axis": 1, "axes": [2], **kwargs}
    with pytest.raises(TVMError) as err:
        infer(relax.op.nn.group_norm(var(x), var(g, name="g"), var(g, name="b"), **kwargs))
    for word in ["relax.nn.group_norm", *words]:
        assert word in str(err.value)


def conv1d_numpy(x, w, stride=1, padding=(0, 0), dilation=1, groups=1):
    out = conv2d_nchw(x[:, :, None, :], w[:, :, None, :], strides=(1, stride),
                      padding=(0, padding[0], 0, padding[1]), dilation=(1, dilation),
                      groups=groups)
    return out[:, :, 0, :]


@pytest.mark.parametrize("case", [
    dict(strides=1, padding=0, dilation=1, groups=1),
    dict(strides=2, padding=(1, 2), dilation=1, groups=1),
    dict(strides=1, padding=1, dilation=2, groups=2),
])
def test_conv1d_equals_numpy(case):
    x, w = random((2, 4, 11), seed=1), random((6, 4 // case["groups"], 3), seed=2)
    mod = one_call_module(lambda a, b: relax.op.nn.conv1d(a, b, **case),
                          tensor(x.shape), tensor(w.shape))
    padding = case["padding"] if isinstance(case["padding"], tuple) else (case["padding"],) * 2
    want = conv1d_numpy(x, w, case["strides"], padding, case["dilation"], case["groups"])
    np.testing.assert_allclose(run(mod, x, w, target="lnumpy"), want, rtol=1e-4, atol=1e-5)


def test_conv1d_prints_its_attributes_as_tvm_and_parses_back():
    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor((1, 4, 8), "float32"), w: R.Tensor((6, 4, 3), "float32")):
            gv = R.nn.conv1d(x, w, padding=1)
            return gv

    text = Module.script()
    assert ('R.nn.conv1d(x, w, strides=[1], padding=[1, 1], dilation=[1], groups=1, '
            'data_layout="NCW", kernel_layout="OIW", out_layout="NCW", out_dtype="void")') in text
    assert "R.Tensor((1, 6, 8), dtype=\"float32\")" in text
    assert_structural_equal(from_source(text), Module)


@pytest.mark.parametrize("x, w, kwargs, words", [
    ((2, 3, 8), (4, 2, 3), {}, ["relax.nn.conv1d", "3 input channels", "expects 2 x groups=1"]),
    ((2, 3, 2), (4, 3, 3), {}, ["output width would be 0"]),
    ((2, 3, 8, 8), (4, 3, 3), {}, ["requires data to be 3-d"]),
])
def test_conv1d_errors_name_the_op_and_the_shapes(x, w, kwargs, words):
    with pytest.raises(TVMError) as err:
        infer(relax.op.nn.conv1d(var(x), var(w, name="w"), **kwargs))
    for word in words:
        assert word in str(err.value)


def batch_norm_module(training):
    shapes = [(2, 3, 4, 4), (3,), (3,), (3,), (3,)]
    return one_call_module(lambda *a: relax.op.nn.batch_norm(*a, axis=1, training=training),
                           *[tensor(s) for s in shapes])


def test_batch_norm_returns_the_output_and_the_statistics_as_tvm():
    sinfo = batch_norm_module(False)["main"].ret_struct_info
    assert_structural_equal(sinfo, relax.TupleStructInfo([
        relax.TensorStructInfo((2, 3, 4, 4), "float32"), relax.TensorStructInfo((3,), "float32"),
        relax.TensorStructInfo((3,), "float32")]))


@pytest.mark.parametrize("target", TARGETS)
def test_batch_norm_at_inference_uses_the_moving_statistics(target):
    x, g, b = random((2, 3, 4, 4), seed=1), random((3,), seed=2), random((3,), seed=3)
    mean, var_ = random((3,), seed=4), random((3,), seed=5, low=0.5, high=2)
    out, new_mean, new_var = run(batch_norm_module(False), x, g, b, mean, var_, target=target)
    c = (1, 3, 1, 1)
    want = (x - mean.reshape(c)) / np.sqrt(var_.reshape(c) + 1e-5) * g.reshape(c) + b.reshape(c)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(new_mean, mean)
    np.testing.assert_allclose(new_var, var_)


def test_batch_norm_in_training_uses_the_batch_statistics():
    x, g, b = random((2, 3, 4, 4), seed=1), random((3,), seed=2), random((3,), seed=3)
    mean, var_ = random((3,), seed=4), random((3,), seed=5, low=0.5, high=2)
    out, new_mean, new_var = run(batch_norm_module(True), x, g, b, mean, var_, target="lnumpy")
    c = (1, 3, 1, 1)
    bm, bv = x.mean((0, 2, 3)), x.var((0, 2, 3))
    want = (x - bm.reshape(c)) / np.sqrt(bv.reshape(c) + 1e-5) * g.reshape(c) + b.reshape(c)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(new_mean, 0.9 * mean + 0.1 * bm, rtol=1e-5)
    np.testing.assert_allclose(new_var, 0.9 * var_ + 0.1 * bv, rtol=1e-5)


def test_batch_norm_of_a_non_float_tensor_is_refused():
    with pytest.raises(TypeError, match="relax.nn.batch_norm: requires data to have a float "
                                        "dtype, but its dtype is int32"):
        infer(relax.op.nn.batch_norm(*[var(s, "int32") for s in [(2, 3), (3,), (3,), (3,),
                                                                 (3,)]], axis=1))


# -- dropout --------------------------------------------------------------------------------------
def test_dropout_is_the_identity_at_inference_and_returns_a_tuple_as_tvm():
    mod = one_call_module(lambda x: relax.op.nn.dropout(x, rate=0.3), tensor((2, 5)))
    assert_structural_equal(mod["main"].ret_struct_info, relax.TupleStructInfo(
        [relax.TensorStructInfo((2, 5), "float32")] * 2))
    x = random((2, 5))
    out, mask = run(mod, x, target="lnumpy")
    np.testing.assert_array_equal(out, x)
    np.testing.assert_array_equal(mask, np.ones_like(x))


# -- symbolic spatial dims ------------------------------------------------------------------------
@I.ir_module
class SymbolicConvPool:
    @R.function
    def main(x: R.Tensor(("n", 3, "h", "w"), "float32"), k: R.Tensor((4, 3, 3, 3), "float32")):
        c = R.nn.conv2d(x, k, padding=1)
        p = R.nn.max_pool2d(c, pool_size=2, strides=2)
        a = R.nn.avg_pool2d(c, pool_size=3, padding=1)
        g = R.nn.adaptive_avg_pool2d(c, (1, 1))
        return (c, p, a, g)


@pytest.mark.parametrize("target", TARGETS)
def test_conv_and_pooling_of_symbolic_images_equal_numpy_for_any_size(target):
    vm = vm_of(SymbolicConvPool, target)
    k = random((4, 3, 3, 3), seed=1)

    @settings(max_examples=5, deadline=None, derandomize=True, database=None)
    @given(st.integers(1, 2), st.integers(2, 7), st.integers(2, 7))
    def check(n, h, w):
        x = random((n, 3, h, w), seed=h * 10 + w)
        c, p, a, g = call(vm, x, k)
        conv = conv2d_nchw(x, k, padding=(1, 1, 1, 1))
        np.testing.assert_allclose(c, conv, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(p, pool2d_nchw(conv, "max", (2, 2), (2, 2)), rtol=1e-5,
                                   atol=1e-5)
        np.testing.assert_allclose(a, pool2d_nchw(conv, "avg", (3, 3), (1, 1), (1, 1, 1, 1)),
                                   rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(g, conv.mean((2, 3), keepdims=True), rtol=1e-4, atol=1e-5)

    check()
