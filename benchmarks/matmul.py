"""Matmul 1024x1024x1024 float32 on the numba_cpu backend: GFLOP/s and ratio to NumPy.

Kernels: the naive TVMScript matmul; the same computation tiled by hand in TVMScript
(parallel over 4-row groups, the 4 rows unrolled, a vectorized 64-wide strip of C), as a
learner would write it before schedule primitives exist; and schedules of the naive kernel
built with ``tir.Schedule`` primitives (split/reorder tiling, ``cache_write("local")``,
``cache_read`` + ``compute_at`` + ``transform_layout`` packing, ``decompose_reduction``,
``vectorize``, ``unroll``, ``parallel``; see ``SCHEDULES``; the best single-thread one is
``schedule_packed``).
Also prints the cold-compile latency (fresh cache dir) and the cached-compile latency (a
second process loading Numba's cache).

Each table is measured twice, in a fresh child process each time: single-threaded and with
all cores.  Thread counts must be fixed before NumPy and Numba are imported, so the parent
sets them in the child's environment: ``OPENBLAS_NUM_THREADS`` / ``OMP_NUM_THREADS`` /
``MKL_NUM_THREADS`` (NumPy's BLAS) and ``NUMBA_NUM_THREADS`` (``prange``) = 1, or = the
number of cores.  Run one mode by hand with ``--threads N`` (and those variables set).

    python benchmarks/matmul.py [--size 1024] [--repeat 3] [--threads N] [--no-compile]

On a machine whose environment pins OpenBLAS to a core type (``OPENBLAS_CORETYPE``,
``OPENBLAS_L2_SIZE``), unset them for this command only, so NumPy uses its best kernels::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/matmul.py
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np

NAIVE = '''
@T.prim_func
def matmul(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n}, {n}), "float32"),
           C: T.Buffer(({n}, {n}), "float32")):
    T.func_attr({{"global_symbol": "matmul", "tir.noalias": True}})
    for i, j, k in T.grid({n}, {n}, {n}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''

# i split by 4 (4 rows unrolled), j split by 64 (a vectorized strip), k in between:
# the strip of C stays in cache and B is read contiguously.
TILED = '''
@T.prim_func
def matmul_tiled(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n}, {n}), "float32"),
                 C: T.Buffer(({n}, {n}), "float32")):
    T.func_attr({{"global_symbol": "matmul_tiled", "tir.noalias": True}})
    for i0 in T.parallel({n} // 4):
        for j0 in range({n} // 64):
            for i1 in T.unroll(4):
                for j1 in T.vectorized(64):
                    with T.block("init"):
                        vi = T.axis.spatial({n}, i0 * 4 + i1)
                        vj = T.axis.spatial({n}, j0 * 64 + j1)
                        C[vi, vj] = T.float32(0)
            for k in range({n}):
                for i1 in T.unroll(4):
                    for j1 in T.vectorized(64):
                        with T.block("C"):
                            vi = T.axis.spatial({n}, i0 * 4 + i1)
                            vj = T.axis.spatial({n}, j0 * 64 + j1)
                            vk = T.axis.reduce({n}, k)
                            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''

COMPILE_SNIPPET = textwrap.dedent('''
    import time
    t0 = time.perf_counter()
    from mlckit.backend import numba_cpu
    from mlckit.script import from_source
    func = from_source({text!r})
    t1 = time.perf_counter()
    numba_cpu.build(func)
    print(time.perf_counter() - t1)
''')


def schedule_tiled(func, parallel: bool, ti: int = 4, tj: int = 64):
    """Register-style tiling: i by ``ti`` (unrolled), j by ``tj`` (vectorized, contiguous in
    B and C), k between them; the init separated from the update."""
    from mlckit import tir

    sch = tir.Schedule(func)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, ti])
    j0, j1 = sch.split(j, factors=[None, tj])
    sch.reorder(i0, j0, k, i1, j1)
    sch.decompose_reduction(block, k)
    sch.vectorize(j1)
    sch.unroll(i1)
    if parallel:
        sch.parallel(i0)
    return sch


def schedule_local(func, parallel: bool, ti: int = 4, tj: int = 64):
    """As the course's blocked matmul: the ``ti`` x ``tj`` tile of C accumulated in a
    ``cache_write("local")`` buffer, written back after the k loop (``reverse_compute_at``).
    Single-threaded, j-tiles are outermost so one strip of B is reused by all rows; in
    parallel, row tiles are outermost and parallel (a ``prange`` over the j-tiles measured
    ~7x slower here)."""
    from mlckit import tir

    sch = tir.Schedule(func)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, ti])
    j0, j1 = sch.split(j, factors=[None, tj])
    outer, inner = (i0, j0) if parallel else (j0, i0)
    sch.reorder(outer, inner, k, i1, j1)
    c_local = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(c_local, inner)
    sch.decompose_reduction(block, k)
    sch.vectorize(j1)
    sch.unroll(i1)
    if parallel:
        sch.parallel(outer)
    return sch


def schedule_panel(func, parallel: bool, ti: int = 4, tj: int = 64, tk: int = 256):
    """``schedule_local`` with k split by ``tk`` outside the rows: a ``tk`` x ``tj`` panel of
    B stays in cache while every row block of C accumulates into the local buffer
    (single-threaded only: its only parallel loop, the j-tiles, runs slowly as a prange)."""
    from mlckit import tir

    sch = tir.Schedule(func)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, ti])
    j0, j1 = sch.split(j, factors=[None, tj])
    k0, k1 = sch.split(k, factors=[None, tk])
    sch.reorder(j0, k0, i0, k1, i1, j1)
    c_local = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(c_local, j0)
    sch.decompose_reduction(block, k0)
    sch.vectorize(j1)
    sch.unroll(i1)
    return sch


def schedule_packed(func, parallel: bool, ti: int = 2, tj: int = 8):
    """Register blocking with a packed ``B``: a ``ti`` x ``tj`` tile of C accumulated over the
    whole k loop in a ``cache_write("local")`` buffer whose loops are all unrolled (the numba
    backend compacts it to ``(ti, tj)`` and keeps it in scalar variables), and the ``tj``
    columns of ``B`` the tile needs copied, transposed, into ``B_global`` once per j-tile
    (``cache_read`` + ``compute_at`` + ``transform_layout``), so that the k loop reads both
    ``A`` and ``B_global`` contiguously.  Built with ``fastmath=True``, LLVM vectorizes the
    k loop: ``ti * tj`` vector accumulators of 16 float32.  In parallel the j-tiles
    (``j_0``, outermost, each packing its own panel) run as a ``prange``."""
    from mlckit import tir

    sch = tir.Schedule(func)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, ti])
    j0, j1 = sch.split(j, factors=[None, tj])
    sch.reorder(j0, i0, k, i1, j1)
    c_local = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(c_local, i0)
    init = sch.decompose_reduction(block, k)
    b_global = sch.cache_read(block, 2, "global")  # reads: C_local, A, B
    sch.compute_at(b_global, j0)
    sch.transform_layout(block, ("read", 2), lambda k, j: (j, k))
    for b in (init, block, c_local):
        for loop in sch.get_loops(b)[-2:]:
            sch.unroll(loop)
    if parallel:
        sch.parallel(j0)
    return sch


# label, schedule function, build options
SCHEDULES = (
    ("sched tile 4x64", schedule_tiled, {}),
    ("sched tile+cache_write", schedule_local, {}),
    ("sched panel+cache_write", schedule_panel, {}),
    ("sched tile+cache_write fm", schedule_local, {"fastmath": True}),
    ("sched packed 2x8 fm", schedule_packed, {"fastmath": True}),
)


def compile_latency(text: str, cache_dir: str) -> float:
    env = {**os.environ, "MLCKIT_CACHE_DIR": cache_dir}
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", COMPILE_SNIPPET.format(text=text)], env=env,
                         cwd=root, check=True, capture_output=True, text=True)
    return float(out.stdout.split()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0,
                        help="measure in this process with N threads (set before import)")
    parser.add_argument("--no-compile", action="store_true", help="skip compile latency")
    args = parser.parse_args()
    if args.threads:
        return run_tables(args)
    cores = os.cpu_count() or 1
    for threads in dict.fromkeys((1, cores)):
        env = {**os.environ, **thread_env(threads)}
        cmd = [sys.executable, os.path.abspath(__file__), "--size", str(args.size),
               "--repeat", str(args.repeat), "--threads", str(threads)]
        subprocess.run(cmd, env=env, check=True)
        print()
    if not args.no_compile:
        compile_table(args.size)


def thread_env(threads: int) -> dict:
    """Environment fixing NumPy's BLAS and Numba's thread pools to ``threads``."""
    t = str(threads)
    return {"OPENBLAS_NUM_THREADS": t, "OMP_NUM_THREADS": t, "MKL_NUM_THREADS": t,
            "NUMBA_NUM_THREADS": t}


def run_tables(args):
    for key, value in thread_env(args.threads).items():
        if os.environ.get(key) != value:  # NumPy is imported already: too late to change
            print(f"warning: {key}={os.environ.get(key)} (set {key}={value} before running "
                  f"with --threads {args.threads}, or run without --threads)")
    n = args.size

    import mlckit
    from mlckit.script import from_source

    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (n, n)).astype("float32")
    b = rng.uniform(-1, 1, (n, n)).astype("float32")
    c = np.zeros((n, n), "float32")
    flops = 2.0 * n**3

    def timeit(fn, number=1):
        fn()
        best = float("inf")
        for _ in range(args.repeat):
            t = time.perf_counter()
            for _ in range(number):
                fn()
            best = min(best, (time.perf_counter() - t) / number)
        return best

    t_np = timeit(lambda: np.matmul(a, b, out=c), number=3)
    threads = args.threads
    print(f"matmul {n}x{n}x{n} float32, {threads} thread(s) of {os.cpu_count()} cores "
          f"(best of {args.repeat})")
    print(f"{'kernel':<30}{'ms':>10}{'GFLOP/s':>10}{'vs NumPy':>10}")
    print(f"{'numpy (BLAS)':<30}{t_np * 1e3:10.2f}{flops / t_np / 1e9:10.2f}{1.0:10.3f}")
    reference = a @ b
    naive = from_source(textwrap.dedent(NAIVE.format(n=n)))
    kernels = [] if threads > 1 else [("numba_cpu naive", naive, {})]
    kernels.append(("numba_cpu hand-tiled", from_source(textwrap.dedent(TILED.format(n=n))), {}))
    for label, schedule, options in SCHEDULES:
        if threads > 1 and schedule is schedule_panel:
            continue
        kernels.append((label, schedule(naive, parallel=threads > 1).mod["main"], options))
    for label, func, options in kernels:
        rt = mlckit.build(func, target="llvm", **options)
        c[:] = 0
        t = timeit(lambda rt=rt: rt(a, b, c))
        np.testing.assert_allclose(c, reference, rtol=1e-3, atol=1e-3)
        print(f"{label:<30}{t * 1e3:10.2f}{flops / t / 1e9:10.2f}{t_np / t:10.3f}", flush=True)


def compile_table(n: int):
    with tempfile.TemporaryDirectory() as cache:
        for label, text in (("naive", NAIVE), ("hand-tiled", TILED)):
            src = textwrap.dedent(text.format(n=n))
            cold = compile_latency(src, cache)
            warm = compile_latency(src, cache)
            print(f"compile latency {label:<11} cold {cold * 1e3:8.1f} ms   "
                  f"cached (new process) {warm * 1e3:8.1f} ms")


if __name__ == "__main__":
    main()
