"""The built-in layers: parameters shaped as TVM's (PyTorch's) and, exported and run, equal
to NumPy; layers whose Relax operator mlckit lacks are refused by name."""

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


@pytest.mark.parametrize(("layer", "shape", "op"), [
    (nn.GroupNorm(2, 4), (1, 4, 3, 3), "R.nn.group_norm"),
    (nn.Conv1D(2, 3, 3), (1, 2, 8), "R.nn.conv1d"),
])
def test_layers_whose_relax_operator_mlckit_lacks_are_refused_naming_it(layer, shape, op):
    with pytest.raises(TVMError, match=f"(?s)in layer layer \\({type(layer).__name__}\\).*{op}"):
        One(layer).export_tvm({"forward": {"x": nn.spec.Tensor(shape, "float32")}})
