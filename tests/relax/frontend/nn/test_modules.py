"""The built-in layers: parameters shaped as TVM's (PyTorch's) and, exported and run, equal
to NumPy."""

from math import erf

import numpy as np
import pytest

import mlckit as tvm
from mlckit import relax
from mlckit.error import TVMError
from mlckit.relax.frontend import nn

from ...op.numerics import conv2d_nchw


def random(shape, seed, dtype="float32"):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(dtype)


def export_and_run(model, inputs: dict, target="lnumpy"):
    """Export ``model.forward`` for the NumPy ``inputs``, bind random parameters, run it;
    returns (output, {parameter name: data})."""
    spec = {name: nn.spec.Tensor(a.shape, str(a.dtype)) for name, a in inputs.items()}
    mod, params = model.export_tvm({"forward": spec})
    weights = {name: random(p.shape, seed=i, dtype=p.dtype) for i, (name, p) in enumerate(params)}
    vm = relax.VirtualMachine(relax.build(mod, target), tvm.cpu())
    args = [tvm.nd.array(a) for a in [*inputs.values(), *weights.values()]]
    return vm["forward"](*args).numpy(), weights


class One(nn.Module):
    """Wraps one layer (its parameters are named ``layer.*``)."""

    def __init__(self, layer):
        self.layer = layer

    def forward(self, x):
        return self.layer(x)


def test_linear_without_bias_is_x_times_weight_transposed():
    x = random((3, 5), seed=9)
    layer = nn.Linear(5, 2, bias=False)
    assert layer.weight.shape == [2, 5] and layer.bias is None
    out, w = export_and_run(One(layer), {"x": x})
    np.testing.assert_allclose(out, x @ w["layer.weight"].T, rtol=1e-5, atol=1e-6)


def test_layer_norm_without_affine_normalizes_only():
    x = random((2, 3, 8), seed=9)
    out, w = export_and_run(One(nn.LayerNorm(8, eps=1e-6, elementwise_affine=False)), {"x": x})
    assert w == {}
    want = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)


def test_rms_norm_with_bias_adds_it_after_scaling():
    x = random((4, 8), seed=9)
    out, w = export_and_run(One(nn.RMSNorm(8, axes=-1)), {"x": x})
    want = x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-5) * w["layer.weight"]
    np.testing.assert_allclose(out, want + w["layer.bias"], rtol=1e-5, atol=1e-6)


def test_embedding_looks_up_rows_for_ids_of_any_rank():
    ids = np.array([[1, 0, 6], [6, 2, 2]], dtype="int32")
    out, w = export_and_run(One(nn.Embedding(7, 4)), {"x": ids})
    np.testing.assert_array_equal(out, w["layer.weight"][ids])


def test_conv2d_with_bias_and_padding_equals_numpy():
    x = random((1, 3, 6, 6), seed=9)
    layer = nn.Conv2D(3, 4, kernel_size=3, padding=1)
    assert layer.weight.shape == [4, 3, 3, 3] and layer.bias.shape == [4]
    out, w = export_and_run(One(layer), {"x": x})
    want = conv2d_nchw(x, w["layer.weight"], padding=(1, 1, 1, 1))
    want += w["layer.bias"].reshape(1, -1, 1, 1)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(("layer", "reference"), [
    (nn.SiLU(), lambda x: x / (1 + np.exp(-x))),
    (nn.GELU(), lambda x: x * 0.5 * (1 + np.vectorize(erf)(x / np.sqrt(2)))),
    (nn.ReLU(), lambda x: np.maximum(x, 0)),
    (nn.Identity(), lambda x: x),
])
def test_activations_equal_numpy(layer, reference):
    x = random((3, 4), seed=9)
    out, _ = export_and_run(One(layer), {"x": x})
    np.testing.assert_allclose(out, reference(x), rtol=1e-5, atol=1e-6)


def test_conv1d_with_bias_equals_numpy():
    x = random((2, 4, 9), seed=9)
    layer = nn.Conv1D(4, 6, kernel_size=3, padding=1)
    assert layer.weight.shape == [6, 4, 3] and layer.bias.shape == [6]
    out, w = export_and_run(One(layer), {"x": x})
    want = conv2d_nchw(x[:, :, None, :], w["layer.weight"][:, :, None, :],
                       padding=(0, 1, 0, 1))[:, :, 0, :]
    np.testing.assert_allclose(out, want + w["layer.bias"].reshape(1, -1, 1), rtol=1e-4,
                               atol=1e-5)


def test_group_norm_normalizes_each_channel_group_then_scales_per_channel():
    x = random((2, 6, 3, 3), seed=9)
    out, w = export_and_run(One(nn.GroupNorm(3, 6)), {"x": x})
    grouped = x.reshape(2, 3, -1)
    normed = ((grouped - grouped.mean(-1, keepdims=True))
              / np.sqrt(grouped.var(-1, keepdims=True) + 1e-5)).reshape(x.shape)
    want = normed * w["layer.weight"].reshape(1, -1, 1, 1) + w["layer.bias"].reshape(1, -1, 1, 1)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)


def test_group_norm_without_affine_is_refused_as_tvm_cannot_build_it():
    with pytest.raises(TVMError, match=r"(?s)in layer layer \(GroupNorm\).*without weight and "
                                       r"bias"):
        One(nn.GroupNorm(2, 4, affine=False)).export_tvm(
            {"forward": {"x": nn.spec.Tensor((1, 4, 2, 2), "float32")}})


def test_where_and_comparisons_select_elements():
    class ReluByWhere(nn.Module):
        def forward(self, x):
            return nn.op.where(x > 0.0, x, nn.op.zeros(x.shape, x.dtype))

    x = random((3, 4), seed=9)
    out, _ = export_and_run(ReluByWhere(), {"x": x})
    np.testing.assert_array_equal(out, np.where(x > 0, x, 0))
