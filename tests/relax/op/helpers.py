"""Shared helpers of the operator tests: build a module through the VM and compare with
NumPy; a one-call function around an operator; struct-info inference of one call."""

from __future__ import annotations

import numpy as np

import mlckit
from mlckit import relax

SETTINGS = dict(deadline=None, derandomize=True, database=None)


def run(mod, *args, target: str = "llvm", func: str = "main"):
    """``mod`` (not legalized) built for ``target`` and run on NumPy ``args``."""
    vm = relax.VirtualMachine(relax.build(mod, target), mlckit.cpu())
    return _numpy(vm[func](*[mlckit.nd.array(a) for a in args]))


_BUILT: dict = {}


def built(key, make_module, target: str = "llvm"):
    """A VM for ``make_module()``, built once per ``(key, target)`` (numba compiles are
    slow; hypothesis then varies only the run-time shapes and values)."""
    if (key, target) not in _BUILT:
        _BUILT[key, target] = relax.VirtualMachine(relax.build(make_module(), target),
                                                   mlckit.cpu())
    return _BUILT[key, target]


def call(vm, *args, func: str = "main"):
    return _numpy(vm[func](*[mlckit.nd.array(a) for a in args]))


def _numpy(out):
    if isinstance(out, (list, tuple)):
        return [_numpy(o) for o in out]
    return out.numpy()


def one_call_module(make_call, *param_sinfos):
    """An IRModule whose ``main(p0, p1, …)`` returns ``make_call(p0, p1, …)``."""
    params = [relax.Var(f"x{i}", s) for i, s in enumerate(param_sinfos)]
    bb = relax.BlockBuilder()
    with bb.function("main", params):
        out = bb.emit(make_call(*params))
        bb.emit_func_output(out)
    return bb.get()


def infer(call_expr):
    """The struct info a BlockBuilder deduces for ``call_expr``."""
    bb = relax.BlockBuilder()
    return bb.normalize(call_expr).struct_info


def tensor(shape, dtype: str = "float32", ndim: int = -1):
    return relax.TensorStructInfo(shape, dtype, ndim)


def assert_close(got, want, rtol=1e-5, atol=1e-6):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"shape {got.shape} != {want.shape}"
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
