"""The course's MLP written with high-level Relax operators, compiled by the default
pipelines, against NumPy — ratios measured in one run.

The module is the one a student writes (``R.matmul(x, R.permute_dims(w0))``, ``R.add``,
``R.nn.relu``), with the shipped Fashion-MNIST weights passed as arguments, at a fixed batch
size, compiled two ways:

- ``target``: ``tvm.compile(mod, target, relax_pipeline=relax.get_default_pipeline(target))``,
  the target's default pipeline (FuseTransposeMatmul, LegalizeOps through the operator
  strategy, FoldConstant, FuseOps, FuseTIR, the VM lowering);
- ``build``: ``tvm.compile(mod, target)``, TVM's ``default_build_pipeline`` (LegalizeOps and the
  VM lowering: no fusion, a weight transposed on every call).

The VM and NumPy are timed in alternation (best of ``--repeat`` rounds of ``--number`` calls
each), so that a busy machine slows both alike.  The strategy's choices are printed from the
``mlckit.strategy`` log.

Usage::

    python benchmarks/relax_mlp.py [--target llvm] [--repeat 15] [--number 100]
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


def interleaved_best(fs: list, repeat: int, number: int) -> list[float]:
    """The best time per call of each of ``fs``, timed in alternation: each round times
    ``number`` calls of every function in turn."""
    for f in fs:
        f()
    best = [float("inf")] * len(fs)
    for _ in range(repeat):
        for i, f in enumerate(fs):
            t0 = time.perf_counter()
            for _ in range(number):
                f()
            best[i] = min(best[i], (time.perf_counter() - t0) / number)
    return best


class _Choices(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(record.getMessage())


PIPELINES = ("target", "build")


def compile_mlp(batch: int, target: str, pipeline: str):
    """The executable and the strategy's log lines for the MLP at ``batch``."""
    mod = tvm.script.from_source(SCRIPT.format(batch=batch))
    log = logging.getLogger("mlckit.strategy")
    choices = _Choices()
    log.addHandler(choices)
    level = log.level
    log.setLevel(logging.INFO)
    try:
        if pipeline == "target":
            ex = tvm.compile(mod, target=target,
                             relax_pipeline=relax.get_default_pipeline(target))
        else:
            ex = tvm.compile(mod, target=target)
    finally:
        log.removeHandler(choices)
        log.setLevel(level)
    return ex, choices.lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="llvm")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--number", type=int, default=100)
    parser.add_argument("--pipelines", default=",".join(PIPELINES))
    args = parser.parse_args()

    params = fashion_mlp()
    weights = [params[k] for k in ("w0", "b0", "w1", "b1")]
    print(f"MLP 784-128-10, high-level Relax ({args.target}), VM and NumPy timed in "
          f"alternation, best of {args.repeat} x {args.number} calls")
    print(f"{'batch':>6} {'pipeline':>9} {'mlckit (us)':>12} {'NumPy (us)':>11} "
          f"{'mlckit/NumPy':>13}  kernels")
    for batch in (1, 64):
        x = np.random.default_rng(0).random((batch, 784), dtype=np.float32)
        for pipeline in args.pipelines.split(","):
            ex, lines = compile_mlp(batch, args.target, pipeline)
            vm = relax.VirtualMachine(ex, tvm.cpu())
            run = vm["main"]
            np.testing.assert_allclose(run(x, *weights).numpy(), numpy_mlp(x, params),
                                       rtol=1e-4, atol=1e-4)
            t_vm, t_np = interleaved_best([lambda run=run, x=x: run(x, *weights),
                                           lambda x=x: numpy_mlp(x, params)],
                                          args.repeat, args.number)
            kernels = sorted(ex.kernels)
            print(f"{batch:>6} {pipeline:>9} {t_vm * 1e6:12.1f} {t_np * 1e6:11.1f} "
                  f"{t_vm / t_np:13.2f}  {', '.join(kernels)}")
            for line in lines:
                print(f"{'':>8}strategy: {line}")


if __name__ == "__main__":
    main()
