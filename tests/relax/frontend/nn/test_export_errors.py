"""Bad input to export_tvm: each a TVMError naming the method, the argument or layer, and
the shapes involved; the model stays usable afterwards."""

import numpy as np
import pytest

from mlckit.error import TVMError
from mlckit.relax.frontend import nn

from .test_exporter import MLPModel


def spec(*shape, dtype="float32"):
    return {"forward": {"x": nn.spec.Tensor(shape, dtype)}}


def test_input_shape_that_disagrees_with_the_first_layer_names_layer_argument_and_shapes():
    with pytest.raises(TVMError) as info:
        MLPModel().export_tvm(spec(1, 100))
    message = str(info.value)
    assert "tracing MLPModel.forward(x: Tensor([1, 100], 'float32')) failed" in message
    assert 'in layer fc1 (Linear) called with (Tensor([1, 100], "float32"))' in message
    assert "relax.matmul: the reduction dims differ: x1 (1, 100) has 100 columns but x2 " \
           "(784, 256) has 784 rows" in message


def test_a_failure_inside_a_module_list_names_the_innermost_layer():
    class Stack(nn.Module):
        def __init__(self):
            self.layers = nn.ModuleList([nn.Linear(4, 8), nn.ReLU(), nn.Linear(6, 2)])

        def forward(self, x):
            return self.layers(x)

    with pytest.raises(TVMError, match=r"in layer layers\.2 \(Linear\) called with "
                                       r"\(Tensor\(\[3, 8\], \"float32\"\)\)"):
        Stack().export_tvm(spec(3, 4))


def test_symbolic_dims_of_different_names_that_must_agree_are_refused_with_both_shapes():
    class AddTwo(nn.Module):
        def forward(self, a, b):
            return a + b

    with pytest.raises(TVMError, match=r"nn operator 'add': the shape of its result is not "
                                       r"known .* \(Tensor\(\[n, 4\], \"float32\"\), "
                                       r"Tensor\(\[m, 4\], \"float32\"\)\)"):
        AddTwo().export_tvm({"forward": {"a": nn.spec.Tensor(("n", 4), "float32"),
                                         "b": nn.spec.Tensor(("m", 4), "float32")}})


def test_missing_spec_for_an_argument_names_it():
    with pytest.raises(TVMError, match=r"no spec for argument 'x' of MLPModel.forward\(x\)"):
        MLPModel().export_tvm({"forward": {}})


def test_spec_for_an_argument_that_does_not_exist_names_it():
    with pytest.raises(TVMError, match=r"the spec of MLPModel.forward names \['y'\], which is "
                                       r"not an argument of MLPModel.forward\(x\)"):
        MLPModel().export_tvm({"forward": {"y": nn.spec.Tensor((1, 784), "float32")}})


def test_spec_for_a_method_that_does_not_exist_names_it():
    with pytest.raises(TVMError, match="MLPModel has no method 'fwd' to export"):
        MLPModel().export_tvm({"fwd": {"x": nn.spec.Tensor((1, 784), "float32")}})


def test_a_bare_shape_as_spec_says_how_to_write_the_tensor_spec():
    with pytest.raises(TVMError, match=r"the spec of argument 'x' of MLPModel.forward is the "
                                       r"tuple \(1, 784\).*nn.spec.Tensor\(\(1, 784\), "
                                       r"\"float32\"\)"):
        MLPModel().export_tvm({"forward": {"x": (1, 784)}})


def test_calling_a_model_or_a_layer_outside_export_is_refused():
    model = MLPModel()
    x = np.zeros((1, 784), "float32")
    with pytest.raises(TVMError, match="MLPModel \\(an nn.Module\\) is used outside export_tvm"):
        model(x)
    with pytest.raises(TVMError, match="Linear \\(an nn.Module\\) is used outside export_tvm"):
        model.fc1(x)


def test_an_nn_operator_outside_export_is_refused():
    x = nn.Tensor.placeholder((2, 3), "float32", "x")
    with pytest.raises(TVMError, match="nn operator 'relu' is used outside export_tvm"):
        nn.op.relu(x)


def test_a_non_tensor_given_to_a_layer_names_operator_and_layer():
    class Feeds(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(4, 2)

        def forward(self, x):
            return self.fc(np.ones((1, 4), "float32"))

    with pytest.raises(TVMError, match=r"(?s)in layer fc \(Linear\) called with \(ndarray\).*"
                                       r"nn.op.matmul: argument a must be an nn.Tensor, got "
                                       r"ndarray"):
        Feeds().export_tvm(spec(1, 4))


def test_a_method_returning_a_non_tensor_is_refused():
    class Returns(nn.Module):
        def forward(self, x):
            return 3

    with pytest.raises(TVMError, match="Returns.forward returned int 3"):
        Returns().export_tvm(spec(2))


def test_the_model_exports_again_after_a_failed_export():
    model = MLPModel()
    with pytest.raises(TVMError):
        model.export_tvm(spec(1, 100))
    mod, params = model.export_tvm(spec(1, 784))
    assert len(params) == 4 and "forward" in mod


def test_parameters_hidden_in_a_plain_list_are_refused_with_the_fix():
    class Hidden(nn.Module):
        def __init__(self):
            self.layers = [nn.Linear(4, 4)]  # a plain list: the exporter cannot see it

        def forward(self, x):
            return self.layers[0](x)

    with pytest.raises(TVMError, match=r"Hidden.forward uses 2 parameter\(s\) that are not in "
                                       r"the model \(Tensor\(\[4, 4\], \"float32\"\), "
                                       r"Tensor\(\[4\], \"float32\"\)\).*nn.ModuleList"):
        Hidden().export_tvm(spec(1, 4))
