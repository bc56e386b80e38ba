"""Running te-built PrimFuncs on both CPU backends."""

import numpy as np

import mlckit

TARGETS = ("llvm", "lnumpy")
# a 128³ kernel runs on numba only: lnumpy's Python loops take 12 s over it (the small
# kernels of these tests run on both)
LARGE = ("llvm",)


def run(func, *arrays, target: str):
    """Call ``func`` built for ``target`` on copies of ``arrays``; returns the copies (the
    outputs written in place)."""
    copies = [np.array(a, copy=True) for a in arrays]
    mlckit.build(func, target=target)(*copies)
    return copies


def assert_runs_like(func, arrays, outputs, expected, rtol=1e-5, atol=1e-6, targets=TARGETS):
    """On every target, ``func(*arrays)`` leaves ``expected[i]`` in ``arrays[outputs[i]]``."""
    for target in targets:
        results = run(func, *arrays, target=target)
        for index, want in zip(outputs, expected):
            np.testing.assert_allclose(results[index], want, rtol=rtol, atol=atol,
                                       err_msg=f"target {target}, argument {index}")
