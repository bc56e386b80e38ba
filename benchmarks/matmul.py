"""Matmul 1024x1024x1024 float32 on the numba_cpu backend: GFLOP/s and ratio to NumPy.

Kernels: the naive TVMScript matmul, and the same computation tiled by hand in TVMScript
(parallel over 4-row groups, the 4 rows unrolled, a vectorized 64-wide strip of C), as a
learner would write it before schedule primitives exist.  Also prints the cold-compile latency
(fresh cache dir) and the cached-compile latency (a second process loading Numba's cache).

    python benchmarks/matmul.py [--size 1024] [--repeat 3]
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
    args = parser.parse_args()
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
    print(f"matmul {n}x{n}x{n} float32 on {os.cpu_count()} cores (best of {args.repeat})")
    print(f"{'kernel':<28}{'ms':>10}{'GFLOP/s':>10}{'vs NumPy':>10}")
    print(f"{'numpy (BLAS)':<28}{t_np * 1e3:10.2f}{flops / t_np / 1e9:10.2f}{1.0:10.3f}")
    reference = a @ b
    for label, text in (("numba_cpu naive", NAIVE), ("numba_cpu hand-tiled", TILED)):
        src = textwrap.dedent(text.format(n=n))
        func = from_source(src)
        rt = mlckit.build(func, target="llvm")
        t = timeit(lambda rt=rt: rt(a, b, c))
        np.testing.assert_allclose(c, reference, rtol=1e-3, atol=1e-3)
        print(f"{label:<28}{t * 1e3:10.2f}{flops / t / 1e9:10.2f}{t_np / t:10.3f}")
    with tempfile.TemporaryDirectory() as cache:
        for label, text in (("naive", NAIVE), ("hand-tiled", TILED)):
            src = textwrap.dedent(text.format(n=n))
            cold = compile_latency(src, cache)
            warm = compile_latency(src, cache)
            print(f"compile latency {label:<11} cold {cold * 1e3:8.1f} ms   "
                  f"cached (new process) {warm * 1e3:8.1f} ms")


if __name__ == "__main__":
    main()
