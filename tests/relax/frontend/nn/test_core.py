"""nn.Module, nn.Parameter and nn.Tensor: the module tree, parameter data, and tensors'
shapes, dtypes and Python operators while a model is traced."""

import numpy as np
import pytest

import mlckit as tvm
from mlckit import tir
from mlckit.error import TVMError
from mlckit.ir import assert_structural_equal
from mlckit.relax.frontend import nn
from mlckit.script import ir as I
from mlckit.script import relax as R

from .test_exporter import MLPModel


def test_named_parameters_walk_module_lists_and_dicts_in_assignment_order():
    class Net(nn.Module):
        def __init__(self):
            self.embed = nn.Embedding(10, 4)
            self.blocks = nn.ModuleList([nn.Linear(4, 4, bias=False), nn.ReLU(),
                                         nn.LayerNorm(4)])
            self.heads = nn.ModuleDict({"cls": nn.Linear(4, 2)})
            self.scale = nn.Parameter((1,))

    names = [name for name, _ in Net().named_parameters()]
    assert names == ["embed.weight", "blocks.0.weight", "blocks.2.weight", "blocks.2.bias",
                     "heads.cls.weight", "heads.cls.bias", "scale"]
    assert list(Net().state_dict()) == names


def test_parameter_shape_dtype_and_symbolic_dims():
    p = nn.Parameter((3, "vocab"), "float16")
    assert p.dtype == "float16" and p.ndim == 2
    assert p.shape[0] == 3 and isinstance(p.shape[1], tir.Var) and p.shape[1].name == "vocab"
    assert repr(nn.Parameter((2, 3))) == 'Tensor([2, 3], "float32")'


def test_parameter_data_is_checked_against_shape_and_dtype():
    p = nn.Parameter((2, 3))
    p.data = np.ones((2, 3), "float32")
    np.testing.assert_array_equal(p.data.numpy(), np.ones((2, 3)))
    with pytest.raises(TVMError, match=r"the data has shape \(3, 2\), expected \(2, 3\)"):
        p.data = np.ones((3, 2), "float32")
    with pytest.raises(TVMError, match="the data has dtype float64, expected float32"):
        p.data = np.ones((2, 3), "float64")


def test_load_state_dict_binds_data_and_reports_missing_and_unexpected_keys():
    source, target = MLPModel(), MLPModel()
    for i, (_, p) in enumerate(source.named_parameters()):
        p.data = np.full(p.shape, i, "float32")
    assert target.load_state_dict(source.state_dict()) == ([], [])
    assert target.fc2.bias.data.numpy()[0] == 3
    partial = {"fc1.weight": source.fc1.weight, "extra": source.fc1.bias}
    with pytest.raises(TVMError, match=r"missing keys \['fc1.bias', 'fc2.weight', 'fc2.bias'\], "
                                       r"unexpected keys \['extra'\]"):
        target.load_state_dict(partial)


def test_to_changes_the_dtype_of_unbound_parameters():
    model = MLPModel()
    model.to("float16")
    assert {p.dtype for p in model.parameters()} == {"float16"}


class Arith(nn.Module):
    def forward(self, x):
        assert x.shape[1] == 4 and isinstance(x.shape[0], tir.Var) and x.dtype == "float32"
        y = (x + 1.0) * x - x / 2.0
        return 1.0 - y, x > 0.0


def test_tensor_python_operators_emit_tvms_bindings_with_scalar_constants():
    mod, params = Arith().export_tvm({"forward": {"x": nn.spec.Tensor(("n", 4), "float32")}})
    assert params == []

    @I.ir_module
    class Expected:
        @R.function
        def forward(x: R.Tensor(("n", 4), dtype="float32")) -> R.Tuple(
                R.Tensor(("n", 4), dtype="float32"), R.Tensor(("n", 4), dtype="bool")):
            R.func_attr({"num_input": 1})
            with R.dataflow():
                add = R.add(x, R.const(1.0, "float32"))
                mul = R.multiply(add, x)
                divide = R.divide(x, R.const(2.0, "float32"))
                subtract = R.subtract(mul, divide)
                subtract1 = R.subtract(R.const(1.0, "float32"), subtract)
                greater = R.greater(x, R.const(0.0, "float32"))
                gv = subtract1, greater
                R.output(gv)
            return gv

    assert_structural_equal(mod, Expected)


def test_tensor_operators_tvm_does_not_have_say_what_to_write():
    class Uses(nn.Module):
        def __init__(self, how):
            self.how = how

        def forward(self, x):
            return self.how(x)

    for how, hint in ((lambda x: x @ x, "nn.op.matmul"), (lambda x: -x, "nn.op.negative"),
                      (lambda x: x[0], "nn.op.take")):
        with pytest.raises(TVMError, match=hint):
            Uses(how).export_tvm({"forward": {"x": nn.spec.Tensor((2, 2), "float32")}})


def test_pytorch_layers_tvm_lacks_are_refused_with_the_tvm_spelling():
    with pytest.raises(TVMError, match=r"no Sequential .* use nn.ModuleList"):
        nn.Sequential  # noqa: B018 - the attribute access is the test
    with pytest.raises(AttributeError):
        nn.NoSuchLayer  # noqa: B018


def test_int_spec_becomes_a_shape_parameter_and_a_symbolic_dim():
    class Reshape(nn.Module):
        def forward(self, x, n):
            return nn.op.reshape(x, [n, -1])

    mod, _ = Reshape().export_tvm({"forward": {"x": nn.spec.Tensor((6,), "float32"),
                                               "n": nn.spec.Int()}})
    params = mod["forward"].params
    assert [p.name_hint for p in params] == ["x", "n"]
    assert isinstance(params[1].struct_info, tvm.relax.ShapeStructInfo)


def test_tuple_spec_gives_forward_a_tuple_of_tensors_and_packed_params_one_tuple():
    class Pair(nn.Module):
        def __init__(self):
            self.scale = nn.Parameter((2,))

        def forward(self, pair):
            a, b = pair
            return a * self.scale + b

    spec = {"forward": {"pair": (nn.spec.Tensor((2,), "float32"),
                                 nn.spec.Tensor((2,), "float32")),
                        "$": {"param_mode": "packed"}}}
    mod, params = Pair().export_tvm(spec)
    assert [name for name, _ in params] == ["scale"]
    func = mod["forward"]
    assert [p.name_hint for p in func.params] == ["pair", "packed_params"]
    assert func.attrs["num_input"] == 1
    assert isinstance(func.params[0].struct_info, tvm.relax.TupleStructInfo)
    assert "scale: R.Tensor((2,), dtype=\"float32\") = packed_params[0]" in mod.script()
