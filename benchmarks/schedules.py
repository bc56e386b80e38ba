"""The schedules students write, on mlckit's numba_cpu backend and on Apache TVM.

Ten standard schedules (matmul naive, tiled, +vectorize, +unroll, +parallel, cache_write
"local", the packed schedule; a tiled NCHW conv2d; softmax and layer_norm row kernels) are
written once, as TVMScript text and a schedule function, and run on both systems: mlckit in
this interpreter, TVM in the interpreter ``--tvm`` names (or ``$MLCKIT_TVM_PYTHON``), e.g. a
separate ``python3 -m venv /tmp/tvmenv && /tmp/tvmenv/bin/pip install
apache-tvm==0.27.0.post1 numpy``.  TVM builds for its generic ``llvm`` target.

Each system runs on its own runtime's tensors, as its users' code does: ``tvm.runtime.tensor``
and ``mlckit.nd.array``, both 64-byte aligned (NumPy's own arrays start 16 bytes into a
page, and vector loads that straddle cache lines slow the vectorized schedules by up to 1.5x).
``--numpy-args`` gives mlckit plain NumPy arrays instead, timed through ``time_evaluator``
(which times arrays off a 64-byte boundary on aligned copies), against TVM on its tensors.

Every measurement runs in a fresh child process with the thread count fixed before NumPy,
Numba and TVM start (``OPENBLAS/OMP/MKL/NUMBA/TVM_NUM_THREADS``), once with 1 thread and once
with 2.  The mlckit and TVM children alternate (``--rounds`` times) and each figure is the
best of all runs (best of ``--repeat`` per child): the machine is shared, so single figures
are noisy.  Printed per schedule: mlckit GFLOP/s (GB/s for the memory-bound row kernels),
the ratio to NumPy measured in the same child (>1: faster than NumPy) and the ratio to TVM
running the same schedule (>1: mlckit faster), with the geometric mean and the worst case.

    python benchmarks/schedules.py [--tvm /tmp/tvmenv/bin/python] [--rounds 2] [--repeat 5]

This file is also the child: ``--child mlckit|tvm --threads N`` prints one JSON line.  It
imports only the standard library and NumPy at the top, so TVM's interpreter can run it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time

import numpy as np

N_MM = int(os.environ.get("MLCKIT_BENCH_MM", 512))  # matmul N x N x N (--mm-size)
CONV = {"ci": 64, "co": 64, "h": 32, "w": 32}  # 3x3, input padded by hand
ROWS = {"n": 256, "m": 1024}  # softmax / layer_norm: n rows of m

MATMUL = '''
@T.prim_func{s_tir}
def matmul(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n}, {n}), "float32"),
           C: T.Buffer(({n}, {n}), "float32")):
    T.func_attr({{"global_symbol": "matmul", "tir.noalias": True}})
    for i, j, k in T.grid({n}, {n}, {n}):
        with T.sblock("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''

CONV2D = '''
@T.prim_func{s_tir}
def conv2d(I: T.Buffer((1, {ci}, {hp}, {wp}), "float32"), W: T.Buffer(({co}, {ci}, 3, 3), "float32"),
           O: T.Buffer((1, {co}, {h}, {w}), "float32")):
    T.func_attr({{"global_symbol": "conv2d", "tir.noalias": True}})
    for n, co, h, w, ci, rh, rw in T.grid(1, {co}, {h}, {w}, {ci}, 3, 3):
        with T.sblock("conv"):
            vn, vco, vh, vw, vci, vrh, vrw = T.axis.remap("SSSSRRR", [n, co, h, w, ci, rh, rw])
            with T.init():
                O[vn, vco, vh, vw] = T.float32(0)
            O[vn, vco, vh, vw] = O[vn, vco, vh, vw] + I[vn, vci, vh + vrh, vw + vrw] * W[vco, vci, vrh, vrw]
'''

SOFTMAX = '''
@T.prim_func{s_tir}
def softmax(A: T.Buffer(({n}, {m}), "float32"), B: T.Buffer(({n}, {m}), "float32")):
    T.func_attr({{"global_symbol": "softmax", "tir.noalias": True}})
    maxelem = T.alloc_buffer(({n},), "float32")
    expo = T.alloc_buffer(({n}, {m}), "float32")
    expsum = T.alloc_buffer(({n},), "float32")
    for i, k in T.grid({n}, {m}):
        with T.sblock("maxelem"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                maxelem[vi] = T.float32(-3.4028234663852886e38)
            maxelem[vi] = T.max(maxelem[vi], A[vi, vk])
    for i, j in T.grid({n}, {m}):
        with T.sblock("exp"):
            vi, vj = T.axis.remap("SS", [i, j])
            expo[vi, vj] = T.exp(A[vi, vj] - maxelem[vi])
    for i, k in T.grid({n}, {m}):
        with T.sblock("expsum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                expsum[vi] = T.float32(0)
            expsum[vi] = expsum[vi] + expo[vi, vk]
    for i, j in T.grid({n}, {m}):
        with T.sblock("norm"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = expo[vi, vj] / expsum[vi]
'''

LAYER_NORM = '''
@T.prim_func{s_tir}
def layer_norm(A: T.Buffer(({n}, {m}), "float32"), gamma: T.Buffer(({m},), "float32"),
               beta: T.Buffer(({m},), "float32"), B: T.Buffer(({n}, {m}), "float32")):
    T.func_attr({{"global_symbol": "layer_norm", "tir.noalias": True}})
    s = T.alloc_buffer(({n},), "float32")
    sq = T.alloc_buffer(({n},), "float32")
    for i, k in T.grid({n}, {m}):
        with T.sblock("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                s[vi] = T.float32(0)
            s[vi] = s[vi] + A[vi, vk]
    for i, k in T.grid({n}, {m}):
        with T.sblock("sqsum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                sq[vi] = T.float32(0)
            sq[vi] = sq[vi] + (A[vi, vk] - s[vi] * T.float32({inv_m})) * (A[vi, vk] - s[vi] * T.float32({inv_m}))
    for i, j in T.grid({n}, {m}):
        with T.sblock("norm"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = (A[vi, vj] - s[vi] * T.float32({inv_m})) / T.sqrt(
                sq[vi] * T.float32({inv_m}) + T.float32(1e-5)) * gamma[vj] + beta[vj]
'''


# -- schedules: the same primitive calls on mlckit's and TVM's Schedule ------------------------
def mm_tile(sch, vectorize=False, unroll=False, parallel=False, local=False):
    """The course's / TVM tutorial's tiling: i, j by 32, k by 4, ``reorder(i0, j0, k0, i1,
    k1, j1)``, then optionally ``vectorize(j1)``, ``unroll(k1)``, ``parallel(i0)``, and a
    ``cache_write(C, 0, "local")`` tile written back at ``j0``."""
    block = sch.get_sblock("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, [None, 32])
    j0, j1 = sch.split(j, [None, 32])
    k0, k1 = sch.split(k, [None, 4])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    if local:
        c_local = sch.cache_write(block, 0, "local")
        sch.reverse_compute_at(c_local, j0)
    if vectorize:
        sch.vectorize(j1)
    if unroll:
        sch.unroll(k1)
    if parallel:
        sch.parallel(i0)
    sch.decompose_reduction(block, k0)


def mm_packed(sch):
    """``benchmarks/matmul.py``'s packed schedule: a 2x8 register tile (``cache_write`` local,
    unrolled) over a transposed, packed panel of B (``cache_read`` + ``compute_at`` +
    ``transform_layout``)."""
    block = sch.get_sblock("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, [None, 2])
    j0, j1 = sch.split(j, [None, 8])
    sch.reorder(j0, i0, k, i1, j1)
    c_local = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(c_local, i0)
    init = sch.decompose_reduction(block, k)
    b_global = sch.cache_read(block, 2, "global")
    sch.compute_at(b_global, j0)
    sch.transform_layout(block, ("read", 2), lambda k, j: (j, k))
    for b in (init, block, c_local):
        for loop in sch.get_loops(b)[-2:]:
            sch.unroll(loop)


def conv_tile(sch):
    """Output channels by 4 (unrolled), the width by 16 (vectorized), reduction outside them:
    ``reorder(n, co0, h, w0, ci, rh, rw, co1, w1)``."""
    block = sch.get_sblock("conv")
    n, co, h, w, ci, rh, rw = sch.get_loops(block)
    co0, co1 = sch.split(co, [None, 4])
    w0, w1 = sch.split(w, [None, 16])
    sch.reorder(n, co0, h, w0, ci, rh, rw, co1, w1)
    sch.unroll(co1)
    sch.vectorize(w1)
    sch.decompose_reduction(block, ci)


def row_kernel(first: str, consumers: tuple, vectorized: tuple):
    """One row at a time: the later stages ``reverse_compute_at`` the row loop of the first
    (TVM 0.27 refuses ``compute_at`` of a stage that writes a root-allocated buffer: "is an
    output block"); the element-wise loops ``vectorized`` split by 16 and vectorized."""

    def schedule(sch):
        i = sch.get_loops(sch.get_sblock(first))[0]
        for name in consumers:
            sch.reverse_compute_at(sch.get_sblock(name), i)
        for name in vectorized:
            inner = sch.get_loops(sch.get_sblock(name))[-1]
            _, j1 = sch.split(inner, [None, 16])
            sch.vectorize(j1)

    return schedule


def _mm_inputs(rng):
    a = rng.uniform(-1, 1, (N_MM, N_MM)).astype("float32")
    b = rng.uniform(-1, 1, (N_MM, N_MM)).astype("float32")
    return [a, b], np.zeros((N_MM, N_MM), "float32"), lambda: a @ b


def _conv_inputs(rng):
    c = CONV
    i = rng.uniform(-1, 1, (1, c["ci"], c["h"] + 2, c["w"] + 2)).astype("float32")
    w = rng.uniform(-1, 1, (c["co"], c["ci"], 3, 3)).astype("float32")

    def ref():
        win = np.lib.stride_tricks.sliding_window_view(i[0], (3, 3), axis=(1, 2))
        return np.tensordot(w, win, axes=([1, 2, 3], [0, 3, 4]))[None]

    return [i, w], np.zeros((1, c["co"], c["h"], c["w"]), "float32"), ref


def _softmax_inputs(rng):
    a = rng.uniform(-4, 4, (ROWS["n"], ROWS["m"])).astype("float32")

    def ref():
        e = np.exp(a - a.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    return [a], np.zeros_like(a), ref


def _layer_norm_inputs(rng):
    a = rng.uniform(-1, 1, (ROWS["n"], ROWS["m"])).astype("float32")
    g = rng.uniform(0.5, 1.5, ROWS["m"]).astype("float32")
    b = rng.uniform(-1, 1, ROWS["m"]).astype("float32")

    def ref():
        mean = a.mean(axis=1, keepdims=True)
        var = a.var(axis=1, keepdims=True)
        return (a - mean) / np.sqrt(var + np.float32(1e-5)) * g + b

    return [a, g, b], np.zeros_like(a), ref


_MM = (MATMUL, {"n": N_MM}, _mm_inputs, 2.0 * N_MM**3, "GFLOP/s")
_CONV = (CONV2D, {**CONV, "hp": CONV["h"] + 2, "wp": CONV["w"] + 2}, _conv_inputs,
         2.0 * CONV["co"] * CONV["ci"] * CONV["h"] * CONV["w"] * 9, "GFLOP/s")
_ROW_BYTES = 2.0 * 4 * ROWS["n"] * ROWS["m"]  # read A once, write B once
_SOFTMAX = (SOFTMAX, ROWS, _softmax_inputs, _ROW_BYTES, "GB/s")
_LAYER_NORM = (LAYER_NORM, {**ROWS, "inv_m": 1.0 / ROWS["m"]}, _layer_norm_inputs, _ROW_BYTES, "GB/s")

# label -> (kernel, schedule, mlckit build options)
SCHEDULES = {
    "matmul naive": (_MM, None, {}),
    "matmul tile": (_MM, mm_tile, {}),
    "matmul tile+vectorize": (_MM, lambda s: mm_tile(s, vectorize=True), {}),
    "matmul +unroll": (_MM, lambda s: mm_tile(s, vectorize=True, unroll=True), {}),
    "matmul +parallel": (_MM, lambda s: mm_tile(s, vectorize=True, unroll=True, parallel=True), {}),
    "matmul cache_write local": (_MM, lambda s: mm_tile(s, vectorize=True, unroll=True, local=True), {}),
    "matmul packed 2x8 (fm)": (_MM, mm_packed, {"fastmath": True}),
    "conv2d NCHW tiled": (_CONV, conv_tile, {}),
    "softmax rows": (_SOFTMAX, row_kernel("maxelem", ("exp", "expsum", "norm"), ("exp", "norm")), {}),
    "layer_norm rows": (_LAYER_NORM, row_kernel("sum", ("sqsum", "norm"), ("norm",)), {}),
}


# -- the children ---------------------------------------------------------------------------
def _best(fn, repeat: int) -> float:
    fn()
    best = math.inf
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def child(system: str, repeat: int, only: list | None, numpy_args: bool = False):
    """Measure every schedule in this process; print ``{label: [seconds, numpy seconds]}``.
    ``numpy_args``: mlckit is given plain NumPy arrays (where NumPy places them) and timed
    through ``time_evaluator``, as a learner calls a built function."""
    if system == "tvm":
        import tvm
        from tvm.script import tirx as T

        def build(text, fmt, schedule, _options):
            func = tvm.script.from_source(text.format(s_tir="(s_tir=True)", **fmt),
                                          extra_vars={"T": T})
            sch = tvm.s_tir.Schedule(func)
            if schedule:
                schedule(sch)
            ex = tvm.compile(sch.mod, target="llvm")
            name = next(iter(sch.mod.functions)).name_hint
            f = ex[name]
            return lambda *arrays: f(*arrays), lambda x: tvm.runtime.tensor(x), lambda x: x.numpy()
    else:
        import mlckit
        from mlckit import tir
        from mlckit.script import from_source

        def build(text, fmt, schedule, options):
            sch = tir.Schedule(from_source(text.format(s_tir="", **fmt)))
            if schedule:
                schedule(sch)
            f = mlckit.build(sch.mod["main"], target="llvm", **options)
            if numpy_args:
                return f, lambda x: x, lambda x: x
            return f, lambda x: mlckit.nd.array(x), lambda x: x.numpy()

    results = {}
    rng = np.random.default_rng(0)
    for label, ((text, fmt, inputs, _work, _unit), schedule, options) in SCHEDULES.items():
        if only and label not in only:
            continue
        args, out, ref = inputs(rng)
        f, wrap, unwrap = build(text, fmt, schedule, options)
        wrapped = [wrap(a) for a in args] + [wrap(out)]
        f(*wrapped)
        expected = ref()
        np.testing.assert_allclose(unwrap(wrapped[-1]), expected, rtol=2e-3, atol=2e-3,
                                   err_msg=f"{system}: {label}")
        if numpy_args and system == "mlckit":
            from mlckit.runtime.module import time_evaluator

            t = time_evaluator(f, number=1, repeat=repeat)(*wrapped).min
        else:
            t = _best(lambda f=f, w=wrapped: f(*w), repeat)
        t_np = _best(ref, repeat)
        results[label] = [t, t_np]
    print(json.dumps(results))


# -- the parent -----------------------------------------------------------------------------
COMPILE = """
import time
t0 = time.perf_counter()
import mlckit
from mlckit.script import from_source
text = open({path!r}).read()
t1 = time.perf_counter()
mlckit.build(from_source(text), target="llvm")
t2 = time.perf_counter()
mlckit.build(from_source(text), target="llvm")  # structurally equal: not compiled again
t3 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2)
"""

COURSE_MM_RELU = '''
@T.prim_func
def mm_relu(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
            C: T.Buffer((128, 128), "float32")):
    T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
    Y = T.alloc_buffer((128, 128), dtype="float32")
    for i, j, k in T.grid(128, 128, 128):
        with T.block("Y"):
            vi = T.axis.spatial(128, i)
            vj = T.axis.spatial(128, j)
            vk = T.axis.reduce(128, k)
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(128, 128):
        with T.block("C"):
            vi = T.axis.spatial(128, i)
            vj = T.axis.spatial(128, j)
            C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
'''


def compile_times():
    """The course's mm_relu compiled cold (fresh process, empty cache) and again in that
    process from a new, structurally equal PrimFunc."""
    import tempfile

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mm_relu.py")
        with open(path, "w") as f:
            f.write(COURSE_MM_RELU)
        env = {**os.environ, "MLCKIT_CACHE_DIR": tmp,
               "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
        out = subprocess.run([sys.executable, "-c", COMPILE.format(path=path)], env=env,
                             cwd=root, check=True, capture_output=True, text=True)
    imports, cold, again = map(float, out.stdout.split())
    print(f"\ncourse mm_relu (128x128x128): cold compile {cold * 1e3:.0f} ms (after importing "
          f"mlckit, {imports * 1e3:.0f} ms; empty cache, new process); a structurally equal "
          f"PrimFunc again in that process {again * 1e3:.1f} ms")


def thread_env(threads: int) -> dict:
    """Environment fixing NumPy's BLAS, Numba's and TVM's thread pools to ``threads``."""
    t = str(threads)
    return {"OPENBLAS_NUM_THREADS": t, "OMP_NUM_THREADS": t, "MKL_NUM_THREADS": t,
            "NUMBA_NUM_THREADS": t, "TVM_NUM_THREADS": t}


def run_child(python: str, system: str, threads: int, args) -> dict:
    cmd = [python, os.path.abspath(__file__), "--child", system, "--repeat", str(args.repeat)]
    for label in args.only or ():
        cmd += ["--only", label]
    if getattr(args, "numpy_args", False):
        cmd.append("--numpy-args")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, **thread_env(threads)}
    if system == "mlckit":
        env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run(cmd, env=env, cwd=root, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def merge(best: dict, new: dict):
    for label, (t, t_np) in new.items():
        old = best.get(label, [math.inf, math.inf])
        best[label] = [min(old[0], t), min(old[1], t_np)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tvm", default=os.environ.get("MLCKIT_TVM_PYTHON"),
                        help="a Python interpreter with apache-tvm installed")
    parser.add_argument("--rounds", type=int, default=2, help="alternating runs of each system")
    parser.add_argument("--repeat", type=int, default=5, help="timed calls per run (best kept)")
    parser.add_argument("--threads", type=int, nargs="*", default=[1, 2])
    parser.add_argument("--only", action="append", help="a schedule label (repeatable)")
    parser.add_argument("--numpy-args", action="store_true",
                        help="mlckit gets plain NumPy arrays, timed through time_evaluator "
                             "(TVM keeps its own tensors)")
    parser.add_argument("--mm-size", type=int,
                        help=f"the matmuls' N (default {N_MM}; issue 27 measures 1024)")
    parser.add_argument("--child", choices=["mlckit", "tvm"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.mm_size:  # the children read it when they import this file
        os.environ["MLCKIT_BENCH_MM"] = str(args.mm_size)
    if args.child:
        return child(args.child, args.repeat, args.only, args.numpy_args)
    print(f"{os.cpu_count()} cores; each figure the best of {args.rounds} alternating runs x "
          f"{args.repeat} calls; ratios > 1 mean mlckit is faster")
    if not args.tvm:
        print("(no TVM: pass --tvm /path/to/python with apache-tvm installed, or set "
              "MLCKIT_TVM_PYTHON)")
    for threads in args.threads:
        mine, tvm = {}, {}
        for _ in range(args.rounds):
            merge(mine, run_child(sys.executable, "mlckit", threads, args))
            if args.tvm:
                merge(tvm, run_child(args.tvm, "tvm", threads, args))
        print_table(threads, mine, tvm)
    compile_times()


def print_table(threads: int, mine: dict, tvm: dict):
    print(f"\n{threads} thread(s)")
    head = f"{'schedule':<28}{'mlckit':>16}{'vs NumPy':>10}"
    if tvm:
        head += f"{'TVM':>16}{'vs TVM':>9}"
    print(head)
    ratios = []
    for label, (t, t_np) in mine.items():
        (_, _, _, work, unit), _, _ = SCHEDULES[label]
        line = f"{label:<28}{work / t / 1e9:>9.2f} {unit:<6}{t_np / t:>10.3f}"
        if label in tvm:
            t_tvm = tvm[label][0]
            ratios.append((t_tvm / t, label))
            line += f"{work / t_tvm / 1e9:>9.2f} {unit:<6}{t_tvm / t:>9.2f}"
        print(line)
    if ratios:
        geo = math.exp(sum(math.log(r) for r, _ in ratios) / len(ratios))
        worst = min(ratios)
        print(f"vs TVM: geometric mean {geo:.2f}, worst {worst[0]:.2f} ({worst[1]})")


if __name__ == "__main__":
    main()
