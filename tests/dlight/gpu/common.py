"""Helpers shared by the dlight GPU rules' tests: apply one rule, run a kernel in a given
mode of the CUDA backend, list a kernel's thread bindings."""

from __future__ import annotations

import numpy as np

import mlckit.dlight as dl
from mlckit import relax
from mlckit.backend import numba_cuda
from mlckit.target import Target
from mlckit.tir import stmt as S
from mlckit.tir.schedule.ir_utils import walk


def scheduled(mod, *rules, target="cuda"):
    """``mod`` after ``ApplyDefaultSchedule(*rules)`` under ``target``."""
    with Target(target):
        return dl.ApplyDefaultSchedule(*rules)(mod)


def legalized(mod):
    """``mod`` legalized for CUDA (plain TensorIR kernels, as dlight expects them)."""
    with Target("cuda"):
        return relax.transform.LegalizeOps()(mod)


def run(func, *arrays, mode="cpu"):
    """Run the PrimFunc ``func`` on copies of ``arrays`` in ``mode``; the arrays after."""
    arrays = [np.array(a) for a in arrays]
    numba_cuda.build(func, mode=mode)(*arrays)
    return arrays


def bindings(func) -> list[tuple[str, int, str]]:
    """(loop variable, extent, thread) of each thread-bound loop, in program order."""
    found = []

    def visit(s):
        if isinstance(s, S.For) and s.kind == S.ForKind.THREAD_BINDING:
            extent = s.extent.value if hasattr(s.extent, "value") else str(s.extent)
            found.append((s.loop_var.name_hint, extent, s.thread_binding.thread_tag))
        return True

    walk(func.body, visit)
    return found


def rand(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype("float32")
