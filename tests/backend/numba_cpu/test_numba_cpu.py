"""numba_cpu: generated source, loop kinds, argument checks and compile caches."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from mlckit.backend import ArgumentError, numba_cpu
from mlckit.backend.numba_cpu import entry as entry_module
from mlckit.backend.numba_cpu.entry import entry
from mlckit.script import from_source
from mlckit.script import tir as T

from .. import kernels as K


def test_source_is_kept_and_uses_prange_unroll_and_hoisting():
    tiled = numba_cpu.build(K.mm_relu_tiled)
    assert "@njit(cache=True, parallel=True)" in tiled.source
    assert "for i in prange(32):" in tiled.source
    # the T.unroll loop over j1 copied out by UnrollLoop, each copy's index into Y named
    # once (CommonSubexprElimTIR); the parameters in their 2-D form (codegen_flat.ParamViews)
    assert "cse_var_5 = i * 32 + j0 * 4\n" in tiled.source
    for j1, at in enumerate(["cse_var_5", "cse_var_8", "cse_var_7", "cse_var_6"]):
        if j1:
            assert f"{at} = cse_var_5 + {j1}\n" in tiled.source
        b = f"B[k, j0 * 4{f' + {j1}' if j1 else ''}]"
        assert f"Y[{at}] = Y[{at}] + A[i, k] * {b}" in tiled.source
    local = numba_cpu.build(K.row_sum_local)
    first_loop = local.source.index("for i in range(6):")
    assert local.source.index('acc = workspace_alloc((1,), np.float32)') < first_loop
    assert local.source.index('workspace_free(acc)') > first_loop  # where its scope ends


def test_allocation_is_not_hoisted_out_of_a_parallel_loop():
    func = from_source(textwrap.dedent('''
        @T.prim_func
        def f(A: T.Buffer((4, 3), "float32"), B: T.Buffer((4,), "float32")):
            for i in T.parallel(4):
                with T.block("row"):
                    vi = T.axis.spatial(4, i)
                    t = T.alloc_buffer((3,), "float32")
                    for k in range(3):
                        with T.block("t"):
                            vk = T.axis.spatial(3, k)
                            t[vk] = A[vi, vk] * T.float32(2)
                    B[vi] = t[0] + t[1] + t[2]
    '''))
    f = numba_cpu.build(func)
    assert f.source.index("for i in prange(4):") < f.source.index("t = np.empty")
    # np.empty, not a workspace, in a parallel loop: Numba's runtime stays (needs_runtime)
    assert "workspace_alloc" not in f.source and "_nrt=False" not in f.source
    a = np.arange(12, dtype="float32").reshape(4, 3)
    out = np.zeros(4, "float32")
    f(a, out)
    np.testing.assert_allclose(out, 2 * a.sum(axis=1))


def test_float32_constants_are_typed():
    src = numba_cpu.build(K.mm_relu).source
    assert "max(Y[cse_var_1], np.float32(0.0))" in src


@pytest.mark.parametrize(
    "args, match",
    [
        ((np.zeros((32, 48), "float32"),), r"takes 3 arguments \(A, B, C\) but 1 was given"),
        ((np.zeros((32, 48), "float32"), np.zeros((48, 40), "float32"), np.zeros((32, 40), "int32")),
         r"argument 3 \(C\) does not match .*expected dtype float32, got int32"),
        ((np.zeros((32, 48), "float32"), np.zeros((40, 48), "float32"), np.zeros((32, 40), "float32")),
         r"argument 2 \(B\) does not match .*dimension 0 is 40, expected 48 \(its shape is \(40, 48\)\)"),
    ],
)
def test_wrong_arguments_are_rejected_before_running(args, match):
    with pytest.raises(ArgumentError, match=match):
        numba_cpu.build(K.mm_relu_small)(*args)


def test_symbolic_sizes_must_agree_across_buffers():
    f = numba_cpu.build(K.mm_symbolic)
    with pytest.raises(ArgumentError, match=r"dimension 1 is 4, but the symbolic size m = 3"):
        f(np.zeros((5, 16), "float32"), np.zeros((16, 3), "float32"), np.zeros((5, 4), "float32"))


def test_structurally_equal_functions_share_one_compiled_kernel():
    text = textwrap.dedent('''
        @T.prim_func
        def add_one(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    B[vi] = A[vi] + T.float32(1)
    ''')
    assert numba_cpu.build(from_source(text)) is numba_cpu.build(from_source(text))


def test_a_non_contiguous_input_works_and_a_non_contiguous_output_is_refused():
    # as TVM: a kernel writes compact rows; an output view would get its result in a copy
    # (tests/bad_input/test_array_views.py has every kind of view)
    f = numba_cpu.build(K.relu)
    a = np.linspace(-1, 1, 2048, dtype="float32")[::2]
    out = np.zeros(1024, "float32")
    f(a, out)
    np.testing.assert_array_equal(out, np.maximum(a, 0))
    with pytest.raises(ArgumentError, match="argument 2 .* is a strided view"):
        f(a, np.zeros(2048, "float32")[::2])


def test_a_second_process_loads_the_kernel_from_the_disk_cache(tmp_path):
    script = textwrap.dedent('''
        import time, numpy as np
        from mlckit.backend import numba_cpu
        from tests.backend import kernels as K
        t = time.perf_counter()
        f = numba_cpu.build(K.conv2d_nchw)
        print(time.perf_counter() - t, sum(f.dispatcher.stats.cache_hits.values()))
    ''')
    env = {**os.environ, "MLCKIT_CACHE_DIR": str(tmp_path)}
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))

    def run():
        out = subprocess.run([sys.executable, "-c", script], env=env, cwd=root, check=True,
                             capture_output=True, text=True)
        seconds, hits = out.stdout.split()[-2:]
        return float(seconds), hits

    _, cold_hits = run()
    _, warm_hits = run()
    assert cold_hits == "0"  # compiled
    assert warm_hits == "1"  # loaded from Numba's cache
    # one folder per kernel: the module, Numba's machine code beside it (backend.disk_cache)
    [module] = (tmp_path / "numba").glob("conv2d_nchw_*/conv2d_nchw.py")
    assert list((module.parent / "__pycache__").glob("*.nbi"))


def test_unsupported_construct_names_itself():
    from mlckit import tir
    from mlckit.ir import register_op

    op = register_op("test.my_fn")
    A = tir.decl_buffer((8,), "float32", "A")
    i = tir.Var("i", "int32")
    store = tir.BufferStore(A, tir.Call("float32", op, [A[i]]), [i])
    func = tir.PrimFunc([A.data], tir.For(i, 0, 8, tir.ForKind.SERIAL, store), buffer_map={A.data: A})
    with pytest.raises(NotImplementedError, match="test.my_fn"):
        numba_cpu.build(func)


def test_unrolled_blocks_directly_in_a_prange_index_with_the_prange_variable():
    # Numba refuses a copy of the prange index (`vj = j`) assigned twice in the prange body;
    # the lowered TIR has no block iterators: each unrolled copy indexes with j itself
    @T.prim_func
    def col_sum(A: T.Buffer((2, 3, 3), "float32"), C: T.Buffer((3, 3), "float32")):
        for i in range(2):
            for j in T.parallel(3):
                for k in T.unroll(3):
                    with T.block("C"):
                        vi, vj, vk = T.axis.remap("RSS", [i, j, k])
                        with T.init():
                            C[vj, vk] = T.float32(0)
                        C[vj, vk] = C[vj, vk] + A[vi, vj, vk]

    f = numba_cpu.build(col_sum)
    assert "C[j, 2] = C[j, 2] + A[i, j, 2]" in f.source and "vj" not in f.source
    a = np.random.default_rng(0).random((2, 3, 3), dtype="float32")
    c = np.zeros((3, 3), "float32")
    f(a, c)
    np.testing.assert_allclose(c, a.sum(axis=0), rtol=1e-5)


@T.prim_func
def _matmul128(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
               C: T.Buffer((128, 128), "float32")):
    for i, j, k in T.grid(128, 128, 128):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@pytest.mark.parametrize("steps", [
    ("parallel j", "decompose k"),
    ("parallel j", "vectorize i", "decompose k"),
    ("reorder j i", "parallel i", "decompose k"),
])
def test_a_parallel_loop_holding_a_decomposed_reduction_builds(steps):
    # C_init and C_update both copy the prange index (`vj = j`); Numba refuses a copy of it
    # assigned twice ("Overwrite of parallel loop index"), so the second gets a name of its
    # own.  TVM 0.27 accepts these schedules and computes NumPy's numbers.
    from mlckit import tir

    sch = tir.Schedule(_matmul128)
    block = sch.get_block("C")
    loops = dict(zip("ijk", sch.get_loops(block)))
    for step in steps:
        op, *names = step.split()
        if op == "decompose":
            sch.decompose_reduction(block, loops[names[0]])
        elif op == "reorder":
            sch.reorder(*[loops[n] for n in names])
        else:
            getattr(sch, op)(loops[names[0]])
    f = numba_cpu.build(sch.mod["main"])
    assert "prange" in f.source
    rng = np.random.default_rng(0)
    a, b = rng.random((128, 128), dtype="float32"), rng.random((128, 128), dtype="float32")
    c = np.zeros((128, 128), "float32")
    f(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)


@T.prim_func
def _add_one_upper(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    T.func_attr({"global_symbol": "add_one"})
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi] + T.float32(1)


@T.prim_func
def _add_one_lower(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
    T.func_attr({"global_symbol": "add_one"})
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            b[vi] = a[vi] + T.float32(1)


def test_structurally_equal_kernels_with_other_names_keep_their_own_names():
    # one cache entry per structure would show the first kernel's names in the second's
    # source and argument errors
    upper, lower = numba_cpu.build(_add_one_upper), numba_cpu.build(_add_one_lower)
    assert upper is not lower
    assert "def add_one(a, b):" in lower.source.splitlines()
    with pytest.raises(ArgumentError, match=r"argument 2 \(b\) does not match"):
        lower(np.zeros(4, "float32"), np.zeros(3, "float32"))
    out = np.zeros(4, "float32")
    lower(np.arange(4, dtype="float32"), out)
    np.testing.assert_array_equal(out, np.arange(4) + 1)
    assert numba_cpu.build(_add_one_upper) is upper


def test_the_unchecked_entry_is_given_only_for_arrays_the_check_would_pass_unchanged(
        monkeypatch):
    monkeypatch.setattr(entry_module, "REPEATS", 1)  # the entry from the first kernel on
    f = numba_cpu.build(K.relu, cache=False)  # A, B: (1024,) float32
    f32 = np.dtype("float32")
    run = f.unchecked_entry([((1024,), f32), ((1024,), f32)])
    assert run.func is entry(2) and run.args == (f.address,)  # the kernel's entry, no check
    a = np.linspace(-1, 1, 1024, dtype="float32")
    b = np.zeros(1024, "float32")
    run(a, b)
    np.testing.assert_array_equal(b, np.maximum(a, 0))
    assert f.unchecked_entry([((1024,), f32), ((512,), f32)]) is None  # a shape differs
    assert f.unchecked_entry([((1024,), f32), ((1024,), np.dtype("float64"))]) is None
    assert f.unchecked_entry([((1024,), f32)]) is None  # an argument missing
    # a symbolic shape: the check computes its size
    assert numba_cpu.build(K.mm_symbolic).unchecked_entry([((4, 4), f32)] * 3) is None
