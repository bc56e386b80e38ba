"""The whole TIR lowering pipeline (tvm.lower) keeps what a kernel computes: random
element-wise, broadcast and reduction PrimFuncs and random tiling schedules of a matmul
(split, reorder, cache_write "local", vectorize / unroll / parallel, decompose_reduction),
lowered and run by lnumpy, give NumPy's result."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mlckit as tvm
from mlckit.backend import lnumpy
from mlckit.script import from_source
from mlckit.tir.transform._pass import post_order_rewrite
from tests.backend.random_kernels import elementwise_cases, random_inputs, reduction_cases
from tests.backend.test_differential import _schedule, matmul_schedules

_SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _lowered(func):
    lowered = tvm.lower(func)
    (only,) = lowered.functions.values()
    assert "T.block" not in only.script()  # lowered: no blocks left
    return only


def _vectorized_symbolic(func) -> bool:
    """Whether ``func`` has a T.vectorized loop whose extent is not a constant."""
    found = []

    def visit(s):
        if (isinstance(s, tvm.tir.For) and s.kind == tvm.tir.ForKind.VECTORIZED
                and not isinstance(s.extent, tvm.tir.IntImm)):
            found.append(s)
        return s

    post_order_rewrite(func.body, visit)
    return bool(found)


def _check_case(case, sizes, seed):
    func = from_source(case.text)
    if _vectorized_symbolic(func):  # TVM refuses to lower it: so does mlckit
        with pytest.raises(tvm.error.InternalError, match="Failed to vectorize loop with extent"):
            tvm.lower(func)
        return
    func = _lowered(func)
    rng = np.random.default_rng(seed)
    env = random_inputs(rng, case, sizes)
    out_shape = tuple(sizes.get(d, d) for d in case.out_shape)
    env["__shape__"] = out_shape
    expected = case.expected(env)
    out = np.full(out_shape, 99, dtype=case.out_dtype)
    lnumpy.build(func)(*[env[name] for name, _, _ in case.inputs], out)
    msg = f"lowered kernel differs from NumPy for\n{case.text}\nsizes={sizes}\n{func.script()}"
    if case.out_dtype == "int32":
        np.testing.assert_array_equal(out, expected, err_msg=msg)
    else:
        scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
        np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6 * scale, err_msg=msg)


sizes_st = st.fixed_dictionaries({"n": st.integers(1, 5), "m": st.integers(1, 4)})


@_SETTINGS
@given(case=elementwise_cases(broadcast=True), sizes=sizes_st, seed=st.integers(0, 2**16))
def test_lowered_broadcast_kernels_agree_with_numpy(case, sizes, seed):
    _check_case(case, sizes, seed)


@_SETTINGS
@given(case=reduction_cases(), sizes=sizes_st, seed=st.integers(0, 2**16))
def test_lowered_reduction_kernels_agree_with_numpy(case, sizes, seed):
    _check_case(case, sizes, seed)


@_SETTINGS
@given(choice=matmul_schedules(), seed=st.integers(0, 2**16))
def test_lowered_scheduled_matmuls_agree_with_numpy(choice, seed):
    m, n, k = choice["sizes"]
    func = _lowered(_schedule(choice))
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (m, k)).astype("float32")
    b = rng.uniform(-1, 1, (k, n)).astype("float32")
    c = np.full((m, n), 99, "float32")
    lnumpy.build(func)(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5, err_msg=func.script())
