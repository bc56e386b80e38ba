"""Models as Python classes (TVM's ``relax.frontend.nn``): a PyTorch-like ``nn.Module``
whose ``export_tvm(spec)`` traces its methods into a Relax IRModule and lists its
parameters.

Example::

    from mlckit.relax.frontend import nn

    class MLPModel(nn.Module):
        def __init__(self):
            self.fc1 = nn.Linear(784, 256)
            self.relu1 = nn.ReLU()
            self.fc2 = nn.Linear(256, 10)

        def forward(self, x):
            return self.fc2(self.relu1(self.fc1(x)))

    mod, params = MLPModel().export_tvm({"forward": {"x": nn.spec.Tensor((1, 784), "float32")}})
    mod.show()      # def forward(x, fc1_weight, fc1_bias, fc2_weight, fc2_bias) ...
"""

from mlckit.error import TVMAttributeError

from . import op, spec
from .core import (
    Effect,
    Module,
    ModuleDict,
    ModuleList,
    NotTracingError,
    Object,
    Parameter,
    Tensor,
    get_default_dtype,
    set_default_dtype,
)
from .exporter import ExportError
from .modules import (
    GELU,
    Conv1D,
    Conv2D,
    Embedding,
    GroupNorm,
    Identity,
    IOEffect,
    LayerNorm,
    Linear,
    ReLU,
    RMSNorm,
    SiLU,
)
from .op import *  # noqa: F403 - TVM exposes every operator as nn.<op> too

# PyTorch names TVM's nn does not have: say what to write instead.
_NOT_IN_TVM = {
    "Sequential": "nn.ModuleList([...]) (calling it runs its modules in order)",
    "Flatten": "nn.op.reshape(x, [batch, -1])",
    "Dropout": "nothing: an exported model is for inference, where dropout is the identity",
    "Softmax": "nn.op.softmax(x, axis=-1)",
}


def __getattr__(name: str):
    if name in _NOT_IN_TVM:
        raise TVMAttributeError(f"relax.frontend.nn has no {name} (TVM's nn does not either); "
                                f"use {_NOT_IN_TVM[name]}")
    raise AttributeError(f"module 'mlckit.relax.frontend.nn' has no attribute {name!r}")
