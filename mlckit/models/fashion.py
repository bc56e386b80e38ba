"""The course's Fashion-MNIST models written as ``relax.frontend.nn`` modules, loading the
shipped weights (``fashion_mlp()``, ``fashion_cnn()``).

Example::

    import mlckit as tvm
    from mlckit import relax
    from mlckit.datasets import fashion_mnist
    from mlckit.models.fashion import FashionMLP

    images = fashion_mnist("test").flat()[:100]     # (100, 784)
    model = FashionMLP.trained()
    mod, params = model.export_tvm(FashionMLP.SPEC)
    vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    logits = vm["forward"](tvm.runtime.tensor(images), *FashionMLP.weights(params))
"""

from __future__ import annotations

from mlckit.relax.frontend import nn

from . import fashion_cnn, fashion_mlp


def _bind(model: nn.Module, arrays: dict, names: dict) -> nn.Module:
    """``model`` with ``arrays[k]`` bound to its parameter ``names[k]``."""
    own = dict(model.named_parameters())
    for key, array in arrays.items():
        own[names[key]].data = array
    return model


def _weights(params: list) -> list:
    """The bound data of ``export_tvm``'s parameters (runtime tensors) in their order."""
    return [p.data for _, p in params]


class FashionMLP(nn.Module):
    """784 → 128 → ReLU → 10: the MLP of the course (``fashion_mlp()``'s ``w0, b0, w1, b1``
    are ``fc1.weight, fc1.bias, fc2.weight, fc2.bias``).

    Example::

        mod, params = FashionMLP().export_tvm(FashionMLP.SPEC)     # x: (n, 784) float32
    """

    SPEC = {"forward": {"x": nn.spec.Tensor(("n", 784), "float32")}}
    # the shipped file's names → the module's
    NAMES = {"w0": "fc1.weight", "b0": "fc1.bias", "w1": "fc2.weight", "b1": "fc2.bias"}

    def __init__(self):
        self.fc1 = nn.Linear(784, 128)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x: nn.Tensor) -> nn.Tensor:
        return self.fc2(self.relu(self.fc1(x)))

    @classmethod
    def trained(cls) -> FashionMLP:
        """The model with the shipped weights bound to its parameters."""
        return _bind(cls(), fashion_mlp(), cls.NAMES)

    weights = staticmethod(_weights)


class FashionCNN(nn.Module):
    """conv 3×3 (1 → 8, padding 1) → ReLU → 2×2 max-pool → flatten → linear (1568 → 10):
    the CNN of ``fashion_cnn()``. The pool is a reshape to ``(n, 8, 14, 2, 14, 2)`` and a
    max over the two window axes (``nn.op`` has no pooling operator).

    Example::

        mod, params = FashionCNN().export_tvm(FashionCNN.SPEC)     # x: (n, 1, 28, 28) float32
    """

    SPEC = {"forward": {"x": nn.spec.Tensor(("n", 1, 28, 28), "float32")}}
    NAMES = {"conv_w": "conv.weight", "conv_b": "conv.bias", "w": "fc.weight", "b": "fc.bias"}

    def __init__(self):
        self.conv = nn.Conv2D(1, 8, kernel_size=3, padding=1)
        self.relu = nn.ReLU()
        self.fc = nn.Linear(8 * 14 * 14, 10)

    def forward(self, x: nn.Tensor) -> nn.Tensor:
        n = x.shape[0]
        h = self.relu(self.conv(x))
        h = nn.op.max(nn.op.reshape(h, [n, 8, 14, 2, 14, 2]), axis=[3, 5])
        return self.fc(nn.op.reshape(h, [n, 8 * 14 * 14]))

    @classmethod
    def trained(cls) -> FashionCNN:
        """The model with the shipped weights bound to its parameters."""
        return _bind(cls(), fashion_cnn(), cls.NAMES)

    weights = staticmethod(_weights)


__all__ = ["FashionCNN", "FashionMLP"]
