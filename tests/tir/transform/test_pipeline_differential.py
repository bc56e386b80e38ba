"""The whole TIR lowering pipeline (tvm.lower) keeps what a kernel computes: random
element-wise, broadcast and reduction PrimFuncs and random tiling schedules of a matmul
(split, reorder, cache_write "local", vectorize / unroll / parallel, decompose_reduction),
lowered and run by lnumpy, give NumPy's result; random chains of stages (the intermediate
buffers StorageRewrite shares) and randomly scheduled course mm_relu kernels, lowered and run
by lnumpy and by Numba, give NumPy's result."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mlckit as tvm
from mlckit import tir
from mlckit.backend import lnumpy, numba_cpu
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


def _symbolic(func, kind) -> bool:
    """Whether ``func`` has a loop of ``kind`` whose extent is not a constant."""
    found = []

    def visit(s):
        if (isinstance(s, tvm.tir.For) and s.kind == kind
                and not isinstance(s.extent, tvm.tir.IntImm)):
            found.append(s)
        return s

    post_order_rewrite(func.body, visit)
    return bool(found)


def _check_case(case, sizes, seed):
    func = from_source(case.text)
    if _symbolic(func, tvm.tir.ForKind.VECTORIZED):  # TVM refuses to lower it: so does mlckit
        with pytest.raises(tvm.error.InternalError, match="Failed to vectorize loop with extent"):
            tvm.lower(func)
        return
    if _symbolic(func, tvm.tir.ForKind.UNROLLED):  # the same for UnrollLoop
        with pytest.raises(tvm.error.InternalError, match="Cannot unroll non-constant loop"):
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


# -- lnumpy and Numba on lowered TIR: stage chains and the course's mm_relu ----------------------
_FEW = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# (TVMScript of stage k from its input P, NumPy of it); "rev" stages read P backwards, so
# their output cannot be written in place of P
_STAGES = {
    "scale": ("P[vi, vj] * T.float32(1.5)", lambda p: p * np.float32(1.5)),
    "shift": ("P[vi, vj] + T.float32(-0.25)", lambda p: p - np.float32(0.25)),
    "relu": ("T.max(P[vi, vj], T.float32(0))", lambda p: np.maximum(p, 0)),
    "rev": ("P[vi, {m} - 1 - vj] * T.float32(2)", lambda p: p[:, ::-1] * np.float32(2)),
}


@st.composite
def stage_chains(draw):
    """A chain X -> B0 -> B1 -> ... -> Y of element-wise stages, each intermediate maybe
    computed at its consumer's row loop (compute_at)."""
    n_stages = draw(st.integers(2, 4))
    return {"n": draw(st.sampled_from([2, 3, 5])), "m": draw(st.sampled_from([4, 8])),
            "ops": draw(st.lists(st.sampled_from(sorted(_STAGES)), min_size=n_stages,
                                 max_size=n_stages)),
            "at": draw(st.lists(st.booleans(), min_size=n_stages, max_size=n_stages))}


def _chain(choice):
    n, m, ops = choice["n"], choice["m"], choice["ops"]
    names = [f"B{k}" for k in range(len(ops) - 1)]
    lines = ["@T.prim_func",
             f"def chain(X: T.Buffer(({n}, {m}), \"float32\"), "
             f"Y: T.Buffer(({n}, {m}), \"float32\")):"]
    lines += [f"    {b} = T.alloc_buffer(({n}, {m}))" for b in names]
    sources, outs = ["X", *names], [*names, "Y"]
    for k, op in enumerate(ops):
        value = _STAGES[op][0].format(m=m).replace("P[", f"{sources[k]}[")
        lines += [f"    for i, j in T.grid({n}, {m}):",
                  f"        with T.block(\"{outs[k]}\"):",
                  "            vi, vj = T.axis.remap(\"SS\", [i, j])",
                  f"            {outs[k]}[vi, vj] = {value}"]
    sch = tir.Schedule(from_source("\n".join(lines) + "\n"))
    for k in reversed(range(len(names))):  # producer into its consumer's row loop
        if choice["at"][k]:
            sch.compute_at(sch.get_block(names[k]), sch.get_loops(sch.get_block(outs[k + 1]))[0])
    return sch.mod["main"]


def _run_lowered(func, args, expected, msg):
    lowered = _lowered(func)
    for build in (lnumpy.build, lambda f: numba_cpu.build(f, cache=False)):
        out = [a.copy() for a in args]
        build(lowered)(*out)
        np.testing.assert_allclose(out[-1], expected, rtol=1e-5, atol=1e-5,
                                   err_msg=f"{msg}\n{lowered.script()}")


@_FEW
@given(choice=stage_chains(), seed=st.integers(0, 2**16))
def test_lowered_stage_chains_agree_with_numpy_on_lnumpy_and_numba(choice, seed):
    x = np.random.default_rng(seed).uniform(-1, 1, (choice["n"], choice["m"])).astype("float32")
    expected = x
    for op in choice["ops"]:
        expected = _STAGES[op][1](expected)
    y = np.full_like(x, 99)
    _run_lowered(_chain(choice), [x, y], expected, str(choice))


@st.composite
def mm_relu_schedules(draw):
    """The course's mm_relu transformations in random measure: split j (and k), reorder,
    reverse_compute_at C, decompose_reduction, vectorize / unroll / parallel."""
    return {"tj": draw(st.sampled_from([2, 4, 8])), "tk": draw(st.sampled_from([1, 4])),
            "at": draw(st.booleans()), "decompose": draw(st.booleans()),
            "vectorize": draw(st.booleans()), "unroll": draw(st.booleans()),
            "parallel": draw(st.booleans())}


MM_RELU = """@T.prim_func
def mm_relu(A: T.Buffer((8, 16), "float32"), B: T.Buffer((16, 8), "float32"),
            C: T.Buffer((8, 8), "float32")):
    Y = T.alloc_buffer((8, 8))
    for i, j, k in T.grid(8, 8, 16):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
"""


def _mm_relu(choice):
    sch = tir.Schedule(from_source(MM_RELU))
    block = sch.get_block("Y")
    i, j, k = sch.get_loops(block)
    j0, j1 = sch.split(j, [None, choice["tj"]])
    k0, k1 = sch.split(k, [None, choice["tk"]])
    sch.reorder(j0, k0, k1, j1)
    if choice["at"]:
        sch.reverse_compute_at(sch.get_block("C"), j0)
    if choice["parallel"]:  # before decompose_reduction, as TVM requires
        sch.parallel(i)
    if choice["decompose"]:
        sch.decompose_reduction(block, k0)
    if choice["vectorize"]:
        sch.vectorize(sch.get_loops(sch.get_block("C"))[-1])
    if choice["unroll"]:
        sch.unroll(j1)
    return sch.mod["main"]


@_FEW
@given(choice=mm_relu_schedules(), seed=st.integers(0, 2**16))
def test_lowered_course_mm_relu_agrees_with_numpy_on_lnumpy_and_numba(choice, seed):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (8, 16)).astype("float32")
    b = rng.uniform(-1, 1, (16, 8)).astype("float32")
    c = np.full((8, 8), 99, "float32")
    _run_lowered(_mm_relu(choice), [a, b, c], np.maximum(a @ b, 0), str(choice))
