"""Differential tests: random element-wise, broadcast and reduction PrimFuncs give the same
result through lnumpy, numba_cpu and NumPy (exact for int32, rtol 1e-5 for floats)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlckit.backend import lnumpy, numba_cpu
from mlckit.script import from_source

from .random_kernels import elementwise_cases, random_inputs, reduction_cases

_PARSED: dict = {}


def _settings(n: int) -> settings:
    return settings(max_examples=n, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _func(text: str):
    """Parse once per text: the same PrimFunc object hits numba_cpu's compile cache."""
    func = _PARSED.get(text)
    if func is None:
        func = _PARSED[text] = from_source(text)
    return func


def _check(case, sizes, seed):
    func = _func(case.text)
    rng = np.random.default_rng(seed)
    env = random_inputs(rng, case, sizes)
    out_shape = tuple(sizes.get(d, d) for d in case.out_shape)
    env["__shape__"] = out_shape
    expected = case.expected(env)
    args = [env[name] for name, _, _ in case.inputs]
    results = {}
    for backend in (lnumpy, numba_cpu):
        out = np.full(out_shape, 99, dtype=case.out_dtype)
        backend.build(func)(*args, out)
        results[backend.__name__.rsplit(".", 1)[-1]] = out
    for name, out in results.items():
        msg = f"{name} differs from NumPy for\n{case.text}\nsizes={sizes}"
        if case.out_dtype == "int32":
            np.testing.assert_array_equal(out, expected, err_msg=msg)
        else:
            scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
            np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6 * scale, err_msg=msg)
    if case.out_dtype == "int32":
        np.testing.assert_array_equal(results["lnumpy"], results["numba_cpu"])
    else:
        np.testing.assert_allclose(results["lnumpy"], results["numba_cpu"], rtol=1e-5, atol=1e-6)


sizes_st = st.fixed_dictionaries({"n": st.integers(1, 5), "m": st.integers(1, 4)})


@_settings(90)
@given(case=elementwise_cases(), sizes=sizes_st, seed=st.integers(0, 2**16))
def test_elementwise_kernels_agree_with_numpy(case, sizes, seed):
    _check(case, sizes, seed)


@_settings(60)
@given(case=elementwise_cases(broadcast=True), sizes=sizes_st, seed=st.integers(0, 2**16))
def test_broadcast_kernels_agree_with_numpy(case, sizes, seed):
    _check(case, sizes, seed)


@_settings(60)
@given(case=reduction_cases(), sizes=sizes_st, seed=st.integers(0, 2**16))
def test_reduction_kernels_agree_with_numpy(case, sizes, seed):
    _check(case, sizes, seed)
