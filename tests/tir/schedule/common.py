"""Helpers for schedule tests: structure, numbers, trace round trip, errors."""

from __future__ import annotations

import numpy as np
import pytest

import mlckit
from mlckit import tir
from mlckit.ir import IRModule, assert_structural_equal, structural_equal
from mlckit.tir import PrimFunc

TARGETS = ("lnumpy", "llvm")


def as_mod(mod_or_func) -> IRModule:
    if isinstance(mod_or_func, PrimFunc):
        return IRModule({"main": mod_or_func})
    return mod_or_func


def check(sch: tir.Schedule, expected, func_name: str = "main") -> None:
    """The scheduled function equals ``expected`` (a PrimFunc or IRModule)."""
    if isinstance(expected, PrimFunc):
        assert_structural_equal(_strip(sch.mod[func_name]), _strip(expected))
    else:
        assert_structural_equal(sch.mod, expected)


def _strip(func: PrimFunc) -> PrimFunc:
    """The function without its ``global_symbol`` (its name differs between the original
    and the expected function, as in TVM's ``assert_structural_equal_ignore_global_symbol``)."""
    return func.without_attr("global_symbol")


def _random_args(func: PrimFunc, rng):
    args = []
    for p in func.params:
        buf = func.buffer_map[p]
        shape = [int(s.value) for s in buf.shape]
        if buf.dtype.startswith("float"):
            args.append(rng.uniform(-1, 1, size=shape).astype(buf.dtype))
        else:
            args.append(rng.integers(-5, 5, size=shape).astype(buf.dtype))
    return args


def verify_numeric(original, scheduled, func_name: str = "main", targets=TARGETS,
                   rtol=1e-4, atol=1e-4) -> None:
    """The scheduled function computes what the original computes, on random inputs,
    through every backend in ``targets`` (all parameters compared after the call).  The
    original runs on numba (``llvm``): a 128³ course kernel takes lnumpy 12 s."""
    original, scheduled = as_mod(original), as_mod(scheduled)
    ref_func = original[func_name]
    rng = np.random.default_rng(0)
    args = _random_args(ref_func, rng)
    expected = [a.copy() for a in args]
    mlckit.build(ref_func, target="llvm")(*expected)
    for target in targets:
        got = [a.copy() for a in args]
        mlckit.build(scheduled[func_name], target=target)(*got)
        for e, g in zip(expected, got):
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=f"target {target}")


def verify_trace_roundtrip(sch: tir.Schedule, mod) -> None:
    """The trace printed, serialized to JSON and replayed on a fresh schedule gives the same
    module."""
    text = str(sch.trace)
    assert "def apply_trace" in text
    fresh = tir.Schedule(as_mod(mod))
    tir.Trace.apply_json_to_schedule(sch.trace.to_json(), fresh)
    assert_structural_equal(fresh.mod, sch.mod)
    # replaying the printed Python gives the same result too
    fresh2 = tir.Schedule(as_mod(mod))
    env: dict = {"tir": tir}
    exec(text.replace("# from tvm import tir", ""), env)  # noqa: S102 - test of as_python
    env["apply_trace"](fresh2)
    assert_structural_equal(fresh2.mod, sch.mod)


def expect_error(sch: tir.Schedule, fn, *phrases) -> tir.ScheduleError:
    """``fn()`` raises ScheduleError mentioning every phrase; ``sch.mod`` is unchanged."""
    before = sch.mod
    before_trace = _effects(sch)
    with pytest.raises(tir.ScheduleError) as info:
        fn()
    msg = str(info.value)
    for p in phrases:
        assert p in msg, msg
    assert sch.mod is before
    assert structural_equal(sch.mod, before)
    assert _effects(sch) == before_trace  # the failed primitive is not in the trace
    return info.value


def _effects(sch) -> int:
    return sum(1 for inst in sch.trace.insts if not inst.kind.is_pure)
