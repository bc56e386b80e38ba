"""The course's MLP written with high-level Relax operators, compiled by the default
pipeline (LegalizeOps through the operator strategy, FoldConstant, FuseOps, FuseTIR, VM
lowering), against NumPy — ratios measured in one run.

The module is the one a student writes (``R.matmul(x, R.permute_dims(w0))``, ``R.add``,
``R.nn.relu``), with the shipped Fashion-MNIST weights passed as arguments, at a fixed batch
size.  The strategy's choices (library matmul for large shapes, the tiled or generic kernel for
small ones) are printed from the ``mlckit.strategy`` log.

Usage::

    python benchmarks/relax_mlp.py [--target llvm] [--repeat 5]
"""

from __future__ import annotations

import argparse
import logging
import time

import numpy as np

import mlckit as tvm
from mlckit import relax
from mlckit.models import fashion_mlp

SCRIPT = '''
@I.ir_module
class MLP:
    @R.function
    def main(x: R.Tensor(({batch}, 784), "float32"), w0: R.Tensor((128, 784), "float32"),
             b0: R.Tensor((128,), "float32"), w1: R.Tensor((10, 128), "float32"),
             b1: R.Tensor((10,), "float32")):
        with R.dataflow():
            lv0 = R.matmul(x, R.permute_dims(w0))
            lv1 = R.add(lv0, b0)
            lv2 = R.nn.relu(lv1)
            lv3 = R.matmul(lv2, R.permute_dims(w1))
            out = R.add(lv3, b1)
            R.output(out)
        return out
'''


def numpy_mlp(x, p):
    return np.maximum(x @ p["w0"].T + p["b0"], 0) @ p["w1"].T + p["b1"]


def best_of(f, repeat: int, number: int) -> float:
    f()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            f()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


class _Choices(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="llvm")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    params = fashion_mlp()
    weights = [params[k] for k in ("w0", "b0", "w1", "b1")]
    log = logging.getLogger("mlckit.strategy")
    print(f"MLP 784-128-10, high-level Relax through the default pipeline ({args.target}), "
          f"best of {args.repeat}")
    print(f"{'batch':>6} {'mlckit (us)':>12} {'NumPy (us)':>11} {'mlckit/NumPy':>13}  kernels")
    for batch in (1, 64):
        mod = tvm.script.from_source(SCRIPT.format(batch=batch))
        choices = _Choices()
        log.addHandler(choices)
        log.setLevel(logging.INFO)
        try:
            ex = tvm.compile(mod, target=args.target)
        finally:
            log.removeHandler(choices)
        vm = relax.VirtualMachine(ex, tvm.cpu())
        x = np.random.default_rng(0).random((batch, 784), dtype=np.float32)
        np.testing.assert_allclose(vm["main"](x, *weights).numpy(), numpy_mlp(x, params),
                                   rtol=1e-4, atol=1e-4)
        t_vm = best_of(lambda x=x, vm=vm: vm["main"](x, *weights), args.repeat, 50)
        t_np = best_of(lambda x=x: numpy_mlp(x, params), args.repeat, 50)
        kernels = sorted(name for name in ex.kernels)
        print(f"{batch:>6} {t_vm * 1e6:12.1f} {t_np * 1e6:11.1f} {t_vm / t_np:13.2f}  "
              f"{', '.join(kernels)}")
        for line in choices.lines:
            print(f"{'':>8}strategy: {line}")


if __name__ == "__main__":
    main()
