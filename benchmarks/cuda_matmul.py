"""Matmul N x N x N float32 on a CUDA GPU: mlckit's schedules against hand-written
``numba.cuda`` kernels of the same tiling and against cuBLAS; and the launch overhead.

Kernels (each checked against cuBLAS/NumPy before it is timed):

- ``numba.cuda naive``: hand-written, one thread per output, 16 x 16 threads per block;
- ``numba.cuda shared 16x16``: hand-written, 16 x 16 tiles of A and B in shared memory,
  one output per thread (the textbook kernel);
- ``mlckit naive``: the TVMScript matmul with ``i``/``j`` split by 16 and bound to
  ``blockIdx``/``threadIdx`` (the same work as the hand-written naive kernel);
- ``mlckit shared 16x16``: ``schedule_shared``, the same tiling as the hand-written shared
  kernel, written with ``cache_read(..., "shared")`` + ``compute_at`` + a cooperative fetch;
- ``mlckit register 8x8``: ``schedule_register``, the course's ``blocking_with_shared`` with
  the two loops over each thread's 8 x 8 tile of C unrolled, so that the tile lives in
  registers (scalar variables in the generated kernel);
- ``cuBLAS``: through CuPy or PyTorch, where installed.

Times are medians of ``--repeat`` launches, each synchronised, after a warm-up; arrays stay
on the device.  The launch overhead is the time of a launch of a one-element vector add,
through ``numba.cuda`` directly and through an mlckit-built function (which adds its
argument checks).

    python benchmarks/cuda_matmul.py [--size 2048] [--repeat 20]

Without a GPU it says so and exits (the simulator is far too slow to time).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

MATMUL = '''
@T.prim_func
def main(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n}, {n}), "float32"),
         C: T.Buffer(({n}, {n}), "float32")):
    T.func_attr({{"global_symbol": "main", "tir.noalias": True}})
    for i, j, k in T.grid({n}, {n}, {n}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''


def matmul(n):
    from mlckit.script import from_source

    return from_source(MATMUL.format(n=n))


def schedule_naive(sch, tile=16):
    i, j, _ = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [None, tile])
    j0, j1 = sch.split(j, [None, tile])
    sch.reorder(i0, j0, i1, j1)
    sch.bind(i0, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    sch.bind(i1, "threadIdx.y")
    sch.bind(j1, "threadIdx.x")
    return sch


def schedule_shared(sch, tile=16):
    """16 x 16 threads, each one output (accumulated in a register); A and B tiles of 16 x 16
    in shared memory, each thread fetching one element of each."""
    block = sch.get_block("C")
    c_local = sch.cache_write(block, 0, "local")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, [None, tile])
    j0, j1 = sch.split(j, [None, tile])
    k0, k1 = sch.split(k, [None, tile])
    sch.reorder(i0, j0, i1, j1, k0, k1)
    sch.reverse_compute_at(c_local, j1)
    sch.bind(i0, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    sch.bind(i1, "threadIdx.y")
    sch.bind(j1, "threadIdx.x")
    for index in (0, 1):
        cache = sch.cache_read(block, index, "shared")
        sch.compute_at(cache, k0)
        ty, tx = sch.get_loops(cache)[-2:]
        sch.bind(ty, "threadIdx.y")
        sch.bind(tx, "threadIdx.x")
    sch.unroll(k1)
    sch.decompose_reduction(block, k0)
    return sch


def schedule_register(sch, local=8, threads=16, tile_k=8):
    """The course's ``blocking_with_shared`` (``threads`` x ``threads`` threads, each a
    ``local`` x ``local`` tile of C) with the inner loops unrolled: the tile becomes scalars."""
    block = sch.get_block("C")
    c_local = sch.cache_write(block, 0, "local")
    i, j, k = sch.get_loops(block)
    i0, i1, i2 = sch.split(i, [None, threads, local])
    j0, j1, j2 = sch.split(j, [None, threads, local])
    k0, k1 = sch.split(k, [None, tile_k])
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2)
    sch.reverse_compute_at(c_local, j1)
    sch.bind(i0, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    tx = sch.fuse(i1, j1)
    sch.bind(tx, "threadIdx.x")
    nthread = threads * threads
    for index in (0, 1):
        cache = sch.cache_read(block, index, "shared")
        sch.compute_at(cache, k0)
        inner = sch.fuse(*sch.get_loops(cache)[-2:])
        _, t, vec = sch.split(inner, [None, nthread, 4])
        sch.vectorize(vec)
        sch.bind(t, "threadIdx.x")
    init = sch.decompose_reduction(block, k0)
    for b in (init, block, c_local):  # k1 stays a loop: a smaller kernel compiles faster
        for loop in sch.get_loops(b)[-2:]:
            sch.unroll(loop)
    return sch


def hand_kernels(cuda):
    from numba import float32

    @cuda.jit
    def naive(A, B, C):
        j = cuda.blockIdx.x * 16 + cuda.threadIdx.x
        i = cuda.blockIdx.y * 16 + cuda.threadIdx.y
        acc = float32(0)
        for k in range(A.shape[1]):
            acc += A[i, k] * B[k, j]
        C[i, j] = acc

    @cuda.jit
    def shared16(A, B, C):
        sa = cuda.shared.array((16, 16), float32)
        sb = cuda.shared.array((16, 16), float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        i = cuda.blockIdx.y * 16 + ty
        j = cuda.blockIdx.x * 16 + tx
        acc = float32(0)
        for k0 in range(A.shape[1] // 16):
            sa[ty, tx] = A[i, k0 * 16 + tx]
            sb[ty, tx] = B[k0 * 16 + ty, j]
            cuda.syncthreads()
            for k1 in range(16):
                acc += sa[ty, k1] * sb[k1, tx]
            cuda.syncthreads()
        C[i, j] = acc

    @cuda.jit
    def add1(A, B, C):
        i = cuda.threadIdx.x
        if i < C.shape[0]:
            C[i] = A[i] + B[i]

    return naive, shared16, add1


def timed(cuda, fn, repeat):
    fn()
    cuda.synchronize()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        cuda.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def cublas(a, b):
    """A function running cuBLAS's matmul on copies of ``a``, ``b`` and its name, or None."""
    try:
        import cupy

        da, db = cupy.asarray(a), cupy.asarray(b)
        return (lambda: da @ db), "cuBLAS (CuPy)", (lambda: cupy.cuda.runtime.deviceSynchronize())
    except Exception:  # noqa: BLE001 - CuPy missing or broken: try torch
        pass
    try:
        import torch

        torch.backends.cuda.matmul.allow_tf32 = False
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        return (lambda: ta @ tb), "cuBLAS (torch)", torch.cuda.synchronize
    except Exception:  # noqa: BLE001
        return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2048)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args(argv)
    from mlckit import tir
    from mlckit.backend import numba_cuda
    from mlckit.runtime import cuda_driver

    if not cuda_driver.has_gpu():
        print("no CUDA GPU found: nothing to time (the simulator is far too slow for this)")
        return 0
    cuda = cuda_driver.numba_cuda()
    n = args.size
    flop = 2.0 * n ** 3
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (n, n)).astype("float32")
    b = rng.uniform(-1, 1, (n, n)).astype("float32")
    ref = a.astype("float64") @ b.astype("float64")
    da, db = cuda.to_device(a), cuda.to_device(b)
    dc = cuda.device_array((n, n), "float32")
    naive, shared16, add1 = hand_kernels(cuda)
    grid16 = (n // 16, n // 16)
    rows = []

    def check(name):
        out = dc.copy_to_host()
        err = np.linalg.norm(out - ref) / np.linalg.norm(ref)
        if not err < 1e-4:
            raise SystemExit(f"{name}: wrong result (relative error {err:.2e})")
        dc.copy_to_device(np.full((n, n), np.nan, "float32"))

    def run(name, fn):
        dc.copy_to_device(np.full((n, n), np.nan, "float32"))
        fn()
        cuda.synchronize()
        check(name)
        seconds = timed(cuda, fn, args.repeat)
        rows.append((name, seconds))
        print(f"  {name:32s} {seconds * 1e3:9.3f} ms {flop / seconds / 1e12:7.2f} TFLOP/s",
              flush=True)

    print(f"matmul {n}x{n}x{n} float32 on {cuda.get_current_device().name.decode()}"
          if isinstance(cuda.get_current_device().name, bytes)
          else f"matmul {n}x{n}x{n} float32 on {cuda.get_current_device().name}")
    run("numba.cuda naive", lambda: naive[grid16, (16, 16)](da, db, dc))
    run("numba.cuda shared 16x16", lambda: shared16[grid16, (16, 16)](da, db, dc))
    for name, sched in (("mlckit naive", schedule_naive), ("mlckit shared 16x16", schedule_shared),
                        ("mlckit register 8x8", schedule_register)):
        sch = sched(tir.Schedule(matmul(n)))
        start = time.perf_counter()
        f = numba_cuda.build(sch.mod["main"], mode="gpu")
        f(da, db, dc)  # numba.cuda compiles at the first launch
        cuda.synchronize()
        print(f"  ({name}: built and compiled in {time.perf_counter() - start:.1f} s)")
        run(name, lambda f=f: f(da, db, dc))
    blas = cublas(a, b)
    if blas is not None:
        fn, name, sync = blas
        fn()
        sync()
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            fn()
            sync()
            times.append(time.perf_counter() - start)
        seconds = statistics.median(times)
        rows.append((name, seconds))
        print(f"  {name:32s} {seconds * 1e3:9.3f} ms {flop / seconds / 1e12:7.2f} TFLOP/s")
    times = dict(rows)
    print("\nratios")
    print(f"  mlckit naive / numba.cuda naive (same work):       "
          f"{times['numba.cuda naive'] / times['mlckit naive']:.3f}")
    print(f"  mlckit shared / numba.cuda shared (same tiling):   "
          f"{times['numba.cuda shared 16x16'] / times['mlckit shared 16x16']:.3f}")
    if blas is not None:
        for name in ("mlckit register 8x8", "numba.cuda shared 16x16"):
            print(f"  {name} / {blas[1]}: {times[blas[1]] / times[name]:.3f}")
    # launch overhead: a one-element vector add, device arrays
    x = cuda.to_device(np.ones(1, "float32"))
    y = cuda.to_device(np.ones(1, "float32"))
    z = cuda.device_array(1, "float32")
    from mlckit.script import from_source

    add = from_source('''
@T.prim_func
def main(A: T.Buffer((1,), "float32"), B: T.Buffer((1,), "float32"), C: T.Buffer((1,), "float32")):
    for i in T.thread_binding(1, thread="threadIdx.x"):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = A[vi] + B[vi]
''')
    f_add = numba_cuda.build(add, mode="gpu")
    launches = 2000
    for name, fn in (("numba.cuda", lambda: add1[1, 32](x, y, z)), ("mlckit", lambda: f_add(x, y, z))):
        fn()
        cuda.synchronize()
        start = time.perf_counter()
        for _ in range(launches):
            fn()
        cuda.synchronize()
        per = (time.perf_counter() - start) / launches
        print(f"launch overhead {name:10s} {per * 1e6:8.1f} us per launch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
