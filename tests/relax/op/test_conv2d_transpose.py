"""relax.op.nn.conv2d_transpose: TVM's shape rule and errors, its printing, its TOPI lowering
(dilate, pad, rotate the kernel, convolve) and NumPy's results through the VM."""

import numpy as np
import pytest

from mlckit import relax, tir
from mlckit.error import TVMError
from mlckit.ir import assert_structural_equal
from mlckit.relax.strategy import NoApplicableImplementation
from mlckit.relax.transform import LegalizeOps
from mlckit.script import from_source
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T

from .helpers import infer, one_call_module, tensor
from .numerics import TARGETS, random, run


def var(shape, dtype="float32", name="x"):
    return relax.Var(name, relax.TensorStructInfo(shape, dtype))


def conv2d_transpose_numpy(x, w, strides=(1, 1), padding=(0, 0, 0, 0), output_padding=(0, 0),
                           dilation=(1, 1), groups=1):
    """The definition: every input pixel scatters ``pixel * kernel`` into the output (IOHW
    kernel, PyTorch's ConvTranspose2d), then ``padding`` is cropped off."""
    n, c, h, wd = x.shape
    _, per_group, kh, kw = w.shape
    (sh, sw), (dh, dw), (oph, opw) = strides, dilation, output_padding
    full = np.zeros((n, per_group * groups, (h - 1) * sh + dh * (kh - 1) + 1 + oph,
                     (wd - 1) * sw + dw * (kw - 1) + 1 + opw), x.dtype)
    in_group = c // groups
    for ci in range(c):
        out_channels = slice(ci // in_group * per_group, (ci // in_group + 1) * per_group)
        for y in range(h):
            for xx in range(wd):
                for i in range(kh):
                    for j in range(kw):
                        full[:, out_channels, y * sh + i * dh, xx * sw + j * dw] += \
                            x[:, ci, y, xx, None] * w[ci, :, i, j]
    top, left, bottom, right = padding
    return full[:, :, top:full.shape[2] - bottom, left:full.shape[3] - right]


# -- struct info ----------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, x, w, out", [
    ({}, (2, 3, 8, 8), (3, 4, 3, 3), (2, 4, 10, 10)),
    ({"strides": 2, "padding": 1, "output_padding": 1}, (1, 4, 5, 5), (4, 3, 3, 3),
     (1, 3, 10, 10)),
    ({"strides": (2, 1), "padding": (1, 0, 0, 2), "dilation": 2, "groups": 2},
     (1, 4, 5, 6), (4, 3, 3, 3), (1, 6, 12, 8)),
    ({"data_layout": "NHWC", "kernel_layout": "HWIO"}, (2, 8, 8, 3), (3, 3, 3, 4),
     (2, 10, 10, 4)),
])
def test_conv2d_transpose_output_shape(kwargs, x, w, out):
    sinfo = infer(relax.op.nn.conv2d_transpose(var(x), var(w, name="w"), **kwargs))
    assert_structural_equal(sinfo, relax.TensorStructInfo(out, "float32"))


def test_conv2d_transpose_of_symbolic_shapes():
    n, h, w_ = (tir.Var(v, "int64") for v in ("n", "h", "w"))
    sinfo = infer(relax.op.nn.conv2d_transpose(var((n, 4, h, w_)), var((4, 2, 3, 3), name="k"),
                                               strides=2, padding=1, output_padding=1))
    assert_structural_equal(sinfo, tensor((n, 2, h * 2, w_ * 2)))


@pytest.mark.parametrize("x, w, kwargs, message", [
    ((2, 3, 8, 8), (4, 2, 3, 3), {},
     r"relax.nn.conv2d_transpose: data \(2, 3, 8, 8\) has 3 input channels, but weight "
     r"\(4, 2, 3, 3\) \(IOHW\) expects 4"),
    ((2, 3, 8, 8), (3, 2, 3, 3), {"groups": 2},
     r"relax.nn.conv2d_transpose: the input channels of weight \(3, 2, 3, 3\) \(3\) are not "
     r"divisible by groups=2"),
    ((2, 3, 8, 8), (3, 2, 3, 3), {"strides": 2, "output_padding": 2},
     r"relax.nn.conv2d_transpose: output_padding \[2, 2\] must be less than the strides "
     r"\[2, 2\]"),
    ((2, 3, 1, 1), (3, 2, 1, 1), {"padding": 1},
     r"relax.nn.conv2d_transpose: the output height would be -1"),
    ((2, 3, 8), (3, 2, 3, 3), {},
     r"relax.nn.conv2d_transpose: requires data to be 4-d, but its shape is \(2, 3, 8\)"),
    ((2, 3, 8, 8), (3, 2, 3, 3), {"kernel_layout": "OIHW16o"},
     r"relax.nn.conv2d_transpose: kernel_layout='OIHW16o' is not supported"),
])
def test_conv2d_transpose_errors_name_the_op_and_the_shapes(x, w, kwargs, message):
    with pytest.raises(TVMError, match=message):
        infer(relax.op.nn.conv2d_transpose(var(x), var(w, name="w"), **kwargs))


def test_conv2d_transpose_of_different_dtypes_needs_out_dtype():
    with pytest.raises(TVMError, match=r"the dtypes of data \(float32\) and weight \(float16\)"):
        infer(relax.op.nn.conv2d_transpose(var((1, 2, 4, 4)), var((2, 2, 3, 3), "float16")))
    out = infer(relax.op.nn.conv2d_transpose(var((1, 2, 4, 4)), var((2, 2, 3, 3), "float16"),
                                             out_dtype="float32"))
    assert_structural_equal(out, tensor((1, 2, 6, 6)))


def test_conv2d_transpose_prints_its_attributes_as_tvm_and_parses_back():
    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor((1, 4, 5, 5), "float32"), w: R.Tensor((4, 3, 3, 3), "float32")):
            gv = R.nn.conv2d_transpose(x, w, strides=2, padding=1, output_padding=1)
            return gv

    text = Module.script()
    assert ('R.nn.conv2d_transpose(x, w, strides=[2, 2], padding=[1, 1, 1, 1], '
            'output_padding=[1, 1], dilation=[1, 1], groups=1, data_layout="NCHW", '
            'kernel_layout="IOHW", out_layout="NCHW", out_dtype="void")') in text
    assert_structural_equal(from_source(text), Module)


# -- lowering -------------------------------------------------------------------------------------
def test_conv2d_transpose_legalizes_to_tvms_dilate_pad_and_rotated_kernel():
    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor((1, 4, 3, 3), "float32"), w: R.Tensor((4, 2, 3, 3), "float32")):
            gv = R.nn.conv2d_transpose(x, w, strides=2, padding=1, output_padding=1, groups=2)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((1, 4, 3, 3), "float32"), w: R.Tensor((4, 2, 3, 3), "float32")):
            gv = R.call_tir(Expected.conv2d_transpose, (x, w),
                            out_sinfo=R.Tensor((1, 4, 6, 6), "float32"))
            return gv

        @T.prim_func(private=True)
        def conv2d_transpose(x: T.Buffer((T.int64(1), T.int64(4), T.int64(3), T.int64(3)), "float32"),
                             w: T.Buffer((T.int64(4), T.int64(2), T.int64(3), T.int64(3)), "float32"),
                             compute: T.Buffer((T.int64(1), T.int64(4), T.int64(6), T.int64(6)), "float32")):
            T.func_attr({"tir.noalias": True})
            data_dilate = T.alloc_buffer((T.int64(1), T.int64(4), T.int64(5), T.int64(5)))
            data_pad = T.alloc_buffer((T.int64(1), T.int64(4), T.int64(8), T.int64(8)))
            kernel_transform = T.alloc_buffer((T.int64(2), T.int64(4), T.int64(3), T.int64(3)))
            for i0, i1, i2, i3 in T.grid(T.int64(1), T.int64(4), T.int64(5), T.int64(5)):
                with T.block("data_dilate"):
                    v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                    data_dilate[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(
                        v_i2 % T.int64(2) == T.int64(0) and v_i3 % T.int64(2) == T.int64(0),
                        x[v_i0, v_i1, v_i2 // T.int64(2), v_i3 // T.int64(2)], T.float32(0))
            for i0, i1, i2, i3 in T.grid(T.int64(1), T.int64(4), T.int64(8), T.int64(8)):
                with T.block("data_pad"):
                    v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                    data_pad[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(
                        T.int64(1) <= v_i2 and v_i2 < T.int64(6) and T.int64(1) <= v_i3
                        and v_i3 < T.int64(6),
                        data_dilate[v_i0, v_i1, v_i2 - T.int64(1), v_i3 - T.int64(1)],
                        T.float32(0))
            for i, o, h, w_ in T.grid(T.int64(2), T.int64(4), T.int64(3), T.int64(3)):
                with T.block("kernel_transform"):
                    v_i, v_o, v_h, v_w = T.axis.remap("SSSS", [i, o, h, w_])
                    kernel_transform[v_i, v_o, v_h, v_w] = w[v_o, v_i, T.int64(2) - v_h,
                                                             T.int64(2) - v_w]
            for b, c, h, w_, dc, dh, dw in T.grid(T.int64(1), T.int64(4), T.int64(6), T.int64(6),
                                                  T.int64(2), T.int64(3), T.int64(3)):
                with T.block("compute"):
                    v_b, v_c, v_h, v_w, v_dc, v_dh, v_dw = T.axis.remap(
                        "SSSSRRR", [b, c, h, w_, dc, dh, dw])
                    with T.init():
                        compute[v_b, v_c, v_h, v_w] = T.float32(0)
                    compute[v_b, v_c, v_h, v_w] = compute[v_b, v_c, v_h, v_w] + data_pad[
                        v_b, v_c // T.int64(2) * T.int64(2) + v_dc, v_h + v_dh, v_w + v_dw] \
                        * kernel_transform[v_c % T.int64(2), v_c // T.int64(2) * T.int64(2)
                                           + v_dc, v_dh, v_dw]

    assert_structural_equal(LegalizeOps()(Module), Expected)


TRANSPOSE_CASES = [
    dict(strides=(1, 1), padding=(0, 0, 0, 0), output_padding=(0, 0), groups=1),
    dict(strides=(2, 2), padding=(1, 1, 1, 1), output_padding=(1, 1), groups=1),
    dict(strides=(3, 2), padding=(2, 0, 1, 1), output_padding=(1, 0), groups=1),
    dict(strides=(2, 2), padding=(1, 1, 1, 1), output_padding=(0, 1), groups=2),
]


@pytest.mark.parametrize("case", TRANSPOSE_CASES)
@pytest.mark.parametrize("target", TARGETS)
def test_conv2d_transpose_equals_numpy(case, target):
    x, w = random((2, 4, 5, 4), seed=1), random((4, 3, 3, 2), seed=2)
    mod = one_call_module(lambda a, b: relax.op.nn.conv2d_transpose(a, b, **case),
                          tensor(x.shape), tensor(w.shape))
    np.testing.assert_allclose(run(mod, x, w, target=target),
                               conv2d_transpose_numpy(x, w, **case), rtol=1e-4, atol=1e-5)


def test_conv2d_transpose_of_a_symbolic_batch_runs_on_any_batch():
    n = tir.Var("n", "int64")
    mod = one_call_module(lambda a, b: relax.op.nn.conv2d_transpose(a, b, strides=2),
                          tensor((n, 2, 3, 3)), tensor((2, 2, 2, 2)))
    w = random((2, 2, 2, 2), seed=3)
    for batch in (1, 3):
        x = random((batch, 2, 3, 3), seed=batch)
        np.testing.assert_allclose(run(mod, x, w), conv2d_transpose_numpy(x, w, strides=(2, 2)),
                                   rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kwargs", [{"dilation": 2},
                                    {"data_layout": "NHWC", "kernel_layout": "HWIO"}])
def test_conv2d_transpose_beyond_topi_has_no_implementation(kwargs):
    shape = (1, 5, 5, 2) if kwargs.get("data_layout") == "NHWC" else (1, 2, 5, 5)
    weight = (3, 3, 2, 2) if kwargs.get("kernel_layout") == "HWIO" else (2, 2, 3, 3)
    mod = one_call_module(lambda a, b: relax.op.nn.conv2d_transpose(a, b, **kwargs),
                          tensor(shape), tensor(weight))
    with pytest.raises(NoApplicableImplementation,
                       match="relax.nn.conv2d_transpose: no implementation applies"):
        LegalizeOps()(mod)
