"""Differential tests: random element-wise, broadcast and reduction PrimFuncs, random
schedules of a matmul (vectorized lanes, unrolling, prange, local tiles, elements held in
scalars over innermost loops, flat views) and random in-place row kernels (elements held in
scalars only where their accesses cannot meet) give the same result through lnumpy,
numba_cpu and NumPy (exact for int32, rtol 1e-5 for floats)."""

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


MATMUL = '''
@T.prim_func
def matmul(A: T.Buffer(({m}, {k}), "float32"), B: T.Buffer(({k}, {n}), "float32"),
           C: T.Buffer(({m}, {n}), "float32")):
    T.func_attr({{"global_symbol": "matmul", "tir.noalias": True}})
    for i, j, k in T.grid({m}, {n}, {k}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''


@st.composite
def matmul_schedules(draw):
    """The sizes of a matmul and the choices of a random tiling schedule of the kind students
    write: split, reorder, vectorize / unroll / parallel, cache_write "local",
    decompose_reduction (applied by ``_schedule``)."""
    pick = st.sampled_from
    n = draw(pick([4, 6, 8, 32]))
    return {
        "sizes": (draw(pick([4, 6, 8])), n, draw(pick([4, 6, 8]))),
        # n = 32: 32 vectorized lanes, written in 2 chunks of 16; 3: a T.where tail
        "ti": draw(pick([1, 2, 4])), "tj": 32 if n == 32 else draw(pick([2, 3, 4, 8])),
        "tk": draw(pick([1, 2, 4])), "local": draw(st.booleans()),
        "vectorize_local": draw(st.booleans()),
        "j1": draw(pick(["vectorize", "unroll", "serial"])), "unroll_k1": draw(st.booleans()),
        "parallel": draw(st.booleans()), "decompose": draw(st.booleans()),
        # k1 innermost: C[vi, vj] is the same element over it (held in a scalar, with the
        # init inside the loop unless decomposed); j1 innermost: A[vi, vk] is
        "k1_inner": draw(st.booleans()),
    }


def _schedule(choice):
    from mlckit import tir

    m, n, k = choice["sizes"]
    sch = tir.Schedule(_func(MATMUL.format(m=m, n=n, k=k)))
    block = sch.get_block("C")
    i, j, kk = sch.get_loops(block)
    i0, i1 = sch.split(i, [None, choice["ti"]])
    j0, j1 = sch.split(j, [None, choice["tj"]])
    k0, k1 = sch.split(kk, [None, choice["tk"]])
    sch.reorder(i0, j0, k0, i1, *((j1, k1) if choice["k1_inner"] else (k1, j1)))
    if choice["local"]:
        c_local = sch.cache_write(block, 0, "local")
        sch.reverse_compute_at(c_local, j0)
        if choice["vectorize_local"]:
            sch.vectorize(sch.get_loops(c_local)[-1])
    if choice["j1"] != "serial":
        getattr(sch, choice["j1"])(j1)
    if choice["unroll_k1"]:
        sch.unroll(k1)
    if choice["parallel"]:
        sch.parallel(i0)
    if choice["decompose"]:
        sch.decompose_reduction(block, k0)
    return sch.mod["main"]


@_settings(40)
@given(choice=matmul_schedules(), seed=st.integers(0, 2**16))
def test_scheduled_matmuls_agree_with_numpy(choice, seed):
    m, n, k = choice["sizes"]
    func = _schedule(choice)
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (m, k)).astype("float32")
    b = rng.uniform(-1, 1, (k, n)).astype("float32")
    results = []
    for backend in (lnumpy, numba_cpu):
        c = np.full((m, n), 99, "float32")
        backend.build(func)(a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5,
                                   err_msg=f"{backend.__name__}\n{func.script()}")
        results.append(c)
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5, atol=1e-6)


INPLACE = '''
@T.prim_func
def inplace(X: T.Buffer((4, 5), "float32"), Y: T.Buffer((4, 5), "float32")):
    for i in T.{outer}(4):
        for k in T.{inner}(4):
            with T.block("B"):
                vi, vk = T.axis.remap("SS", [i, k])
{where}                X[vi, {w}] = X[vi, {r1}] * T.float32(0.5) + Y[vi, {r2}] + X[vi, {r3}]
{second}'''
_INDEX = {"0": lambda k: 0, "4": lambda k: 4, "vk": lambda k: k, "vk + 1": lambda k: k + 1,
          "3 - vk": lambda k: 3 - k}


@st.composite
def inplace_kernels(draw):
    """A loop over rows whose body reads and writes one buffer at indices that do or do not
    move with the inner loop, and may meet (X[vi, 0] and X[vi, vk]) or not (X[vi, vk + 1]):
    the elements held in scalars must be exactly those whose accesses cannot meet."""
    pick = st.sampled_from
    idx = pick(sorted(_INDEX))
    return {"outer": draw(pick(["serial", "parallel"])), "inner": draw(pick(["serial", "unroll"])),
            "w": draw(idx), "r1": draw(idx), "r2": draw(idx), "r3": draw(idx),
            "where": draw(st.booleans()), "second": draw(st.sampled_from([None, *sorted(_INDEX)]))}


def _inplace_reference(choice, x, y):
    x, y = x.copy(), y.copy()
    w, r1, r2, r3 = (_INDEX[choice[n]] for n in ("w", "r1", "r2", "r3"))
    for i in range(4):
        for k in range(4):
            if choice["where"] and not k < 3:
                continue
            x[i, w(k)] = x[i, r1(k)] * np.float32(0.5) + y[i, r2(k)] + x[i, r3(k)]
            if choice["second"] is not None:
                y[i, _INDEX[choice["second"]](k)] = x[i, w(k)]
    return x, y


@_settings(40)
@given(choice=inplace_kernels(), seed=st.integers(0, 2**16))
def test_elements_held_in_scalars_keep_the_sequential_result(choice, seed):
    where = "                T.where(k < 3)\n" if choice["where"] else ""
    second = ""
    if choice["second"] is not None:
        second = (f'            with T.block("Y"):\n'
                  f'                vi, vk = T.axis.remap("SS", [i, k])\n{where}'
                  f'                Y[vi, {choice["second"]}] = X[vi, {choice["w"]}]\n')
    text = INPLACE.format(where=where, second=second,
                          **{n: choice[n] for n in ("outer", "inner", "w", "r1", "r2", "r3")})
    func = _func(text)
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (4, 5)).astype("float32")
    y = rng.uniform(-1, 1, (4, 5)).astype("float32")
    ex, ey = _inplace_reference(choice, x, y)
    results = []
    for backend in (lnumpy, numba_cpu):
        args = [x.copy(), y.copy()]
        backend.build(func)(*args)
        np.testing.assert_allclose(args[0], ex, rtol=1e-5, atol=1e-6, err_msg=f"{backend.__name__}\n{text}")
        np.testing.assert_allclose(args[1], ey, rtol=1e-5, atol=1e-6, err_msg=f"{backend.__name__}\n{text}")
        results.append(args)
    for a, b in zip(*results):  # the same float32 operations in the same order
        np.testing.assert_array_equal(a, b)
