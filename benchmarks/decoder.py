"""The character decoder (``mlckit.models.decoder``) compiled by
``relax.get_default_pipeline("llvm")`` against its NumPy reference: one forward pass at
batch 1, sequence 64, the ratio measured in one run, then the VM profile of one call (which
kernels take the time).

The VM and NumPy are timed in alternation (best of ``--repeat`` rounds of ``--number`` calls
each), so that a busy machine slows both alike.

Usage::

    python benchmarks/decoder.py [--repeat 10] [--number 20] [--seq 64]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import mlckit as tvm
from mlckit.models.decoder import char_decoder, compile_decoder, decoder_numpy


def interleaved_best(fs: list, repeat: int, number: int) -> list[float]:
    """The best time per call of each of ``fs``, timed in alternation."""
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--number", type=int, default=20)
    parser.add_argument("--seq", type=int, default=64)
    args = parser.parse_args()

    weights = char_decoder()
    config = weights.config
    t0 = time.perf_counter()
    vm, params = compile_decoder(weights)
    compile_s = time.perf_counter() - t0
    ids = np.random.default_rng(0).integers(0, config.vocab_size, (1, args.seq)).astype("int32")
    ids_tensor = tvm.runtime.tensor(ids)
    forward = vm["forward"]
    np.testing.assert_allclose(forward(ids_tensor, *params).numpy(),
                               decoder_numpy(config, weights.params, ids), rtol=1e-4, atol=1e-4)

    t_vm, t_np = interleaved_best([lambda: forward(ids_tensor, *params),
                                   lambda: decoder_numpy(config, weights.params, ids)],
                                  args.repeat, args.number)
    print(f"decoder: {config.n_layer} layers, {config.n_head} heads, {config.n_embd} features, "
          f"vocab {config.vocab_size}; batch 1, sequence {args.seq}; compiled in "
          f"{compile_s:.1f} s (relax.get_default_pipeline('llvm'))")
    print(f"best of {args.repeat} x {args.number} calls, in alternation:")
    print(f"  mlckit VM  {t_vm * 1e6:10.1f} us")
    print(f"  NumPy      {t_np * 1e6:10.1f} us")
    print(f"  mlckit/NumPy = {t_vm / t_np:.2f}")
    print()
    print(vm.profile("forward", ids_tensor, *params))


if __name__ == "__main__":
    main()
