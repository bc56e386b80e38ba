"""Compile latency of a course kernel, as ratios measured in one run.

1. **A distinct kernel in a warm process.**  The course's ``mm_relu`` (128³) under
   ``--kernels`` different schedules (the ``j`` and ``i`` split factors), each compiled once
   after one warm-up compile, the three systems one after the other on each schedule (this
   host's speed drifts by ±30% within minutes: each schedule's ratios are taken under the
   same load, and their medians reported):

   - mlckit: ``tvm.build(mod, target="llvm")`` with an empty ``MLCKIT_CACHE_DIR``;
   - bare Numba: ``numba.njit`` of the very source mlckit generated (``f.source``, its
     ``cache=True`` turned off), compiled for the same signature: what Numba alone costs;
   - TVM 0.27 (``--tvm PYTHON``, the interpreter of an environment with ``apache-tvm``):
     ``tvm.compile`` of the same schedule for ``llvm``, in its own process (started first,
     warmed the same way), asked for each schedule in turn.

2. **A fresh process with a warm disk cache.**  ``python -c`` that imports mlckit, parses
   ``mm_relu`` and builds it, run once to fill a cache directory, then timed; next to
   ``python -c "import numba"`` and to a process that only imports Numba and loads one
   cached ``@njit`` function (the floor of Numba's own cache).  Medians of ``--repeat``.

3. **The course's 64-trial tuning** (``--tuning``): ``ms.tune_tir`` over the built-in space
   of the course's 128³ matmul, 64 trials, seed 0, an empty cache, here and on
   ``--baseline`` (a commit, default ``85d2a77``, checked out in a temporary worktree), one
   after the other, ``--tuning-rounds`` times (the median of the pairs' ratios reported);
   the best candidate's time says whether the search found as fast a kernel.

The processes of 2. and 3. run as a learner's Python does: with its bytecode cache
(``__pycache__``), written for each tree's ``mlckit`` before the timing starts.  Where
``PYTHONDONTWRITEBYTECODE`` is set (as on some CI hosts) it is dropped for them: otherwise
every process would compile mlckit's ~400 modules from source (~0.4 s), while Numba's, as
pip installed it, comes compiled.

Usage::

    python benchmarks/compile_speed.py [--tvm /path/to/tvm-env/bin/python] [--kernels 8]
                                       [--tuning [--baseline 85d2a77] [--tuning-rounds 3]]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from schedules import COURSE_MM_RELU  # noqa: E402
from tuning import COURSE_MM  # noqa: E402

MM_RELU = COURSE_MM_RELU  # the course's mm_relu 128³, as benchmarks/schedules.py has it

TUNE_MM = COURSE_MM  # the course's matmul, as benchmarks/tuning.py tunes it

FACTORS = [(fj, fi) for fj in (4, 8, 16, 32, 2) for fi in (2, 4, 8, 16, 32)]

# TVM 0.27 in its own environment, a server: compiles the schedule of mm_relu (written in its
# names: T.sblock, @T.prim_func(s_tir=True), tvm.s_tir.Schedule) that each line of stdin
# names, and answers each with the compile's seconds
TVM_SNIPPET = textwrap.dedent('''
    import json, sys, time
    import tvm
    func = tvm.script.from_source(json.loads(sys.stdin.readline()))
    target = tvm.target.Target({"kind": "llvm", "num-cores": 1})
    for line in sys.stdin:
        fj, fi = json.loads(line)
        sch = tvm.s_tir.Schedule(func)
        block = sch.get_sblock("Y")
        i, j, k = sch.get_loops(block)
        j0, j1 = sch.split(j, factors=[None, fj])
        i0, i1 = sch.split(i, factors=[None, fi])
        sch.reorder(i0, j0, k, i1, j1)
        start = time.perf_counter()
        tvm.compile(sch.mod, target=target)
        print(time.perf_counter() - start, flush=True)
''')


def tvm_027_names(text: str) -> str:
    """v0.23 TVMScript in TVM 0.27's names (``T.sblock``, ``@T.prim_func(s_tir=True)``)."""
    text = text.replace("T.block(", "T.sblock(").replace("T.alloc_buffer(", "T.sblock_alloc_buffer(")
    return text.replace("@T.prim_func\n", "@T.prim_func(s_tir=True)\n")


# Numba alone loading one cached function: the kernel module lies in the folder given
NUMBA_CACHED_SNIPPET = textwrap.dedent('''
    import sys, numba
    sys.path.insert(0, {folder!r})
    from kernel import main
    main.compile((numba.types.Array(numba.types.float32, 2, "C"),) * 3)
''')

TUNE_SNIPPET = textwrap.dedent('''
    import sys, tempfile, time
    from mlckit import meta_schedule as ms
    from mlckit.script import from_source
    mod = from_source({text!r})
    with tempfile.TemporaryDirectory() as work_dir:
        start = time.perf_counter()
        db = ms.tune_tir(mod, "llvm --num-cores=1", work_dir=work_dir, max_trials_global=64,
                         num_trials_per_iter=64, seed=0)
        seconds = time.perf_counter() - start
    best = min(sum(r.run_secs) / len(r.run_secs) for r in db.get_all_tuning_records() if r.run_secs)
    print(seconds, best)
''')

FRESH_SNIPPET = textwrap.dedent('''
    import mlckit as tvm
    from mlckit.script import from_source
    f = tvm.build(from_source({text!r}), target="llvm")
''')


def scheduled(func, fj: int, fi: int):
    """``mm_relu`` with ``j`` split by ``fj`` and ``i`` by ``fi``, the inner loops innermost."""
    from mlckit import tir

    sch = tir.Schedule(func)
    block = sch.get_block("Y")
    i, j, k = sch.get_loops(block)
    j0, j1 = sch.split(j, factors=[None, fj])
    i0, i1 = sch.split(i, factors=[None, fi])
    sch.reorder(i0, j0, k, i1, j1)
    return sch.mod


def bare_numba_seconds(source: str, name: str, signature) -> float:
    """Seconds Numba alone takes to compile ``source`` (mlckit's generated module)."""
    namespace: dict = {}
    exec(compile(source.replace("cache=True", "cache=False"), f"<bare {name}>", "exec"),  # noqa: S102
         namespace)
    start = time.perf_counter()
    namespace[name].compile(signature)
    return time.perf_counter() - start


class TVMServer:
    """TVM 0.27's process compiling the schedules it is asked for (``TVM_SNIPPET``)."""

    def __init__(self, python: str):
        self.proc = subprocess.Popen([python, "-c", TVM_SNIPPET], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        self.proc.stdin.write(json.dumps(tvm_027_names(MM_RELU)) + "\n")

    def seconds(self, fj: int, fi: int) -> float:
        self.proc.stdin.write(json.dumps([fj, fi]) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit("TVM's process ended: run it by hand to see why")
        return float(line)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def warm_process(n: int, tvm_python: str | None) -> None:
    import numba

    import mlckit as tvm
    from mlckit.backend.numba_cpu import llvm_pipeline
    from mlckit.script import from_source

    os.environ["MLCKIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="mlckit-compile-bench-")
    func = from_source(MM_RELU)
    signature = (numba.types.Array(numba.types.float32, 2, "C"),) * 3
    server = TVMServer(tvm_python) if tvm_python else None
    rows = []  # per schedule: mlckit, bare numba, TVM (None without --tvm) seconds
    for k, factors in enumerate(FACTORS[:n + 1]):
        mod = scheduled(func, *factors)
        start = time.perf_counter()
        built = tvm.build(mod, target="llvm")
        seconds = time.perf_counter() - start
        with llvm_pipeline():  # the same LLVM settings as mlckit's own compile
            bare = bare_numba_seconds(built["main"].source, "main", signature)
        theirs = server.seconds(*factors) if server else None
        if k:  # the first is the warm-up
            rows.append((seconds, bare, theirs))
    if server:
        server.close()
    ours, alone = (statistics.median(r[i] for r in rows) for i in (0, 1))
    print(f"1. a distinct kernel in a warm process ({n} schedules of mm_relu 128^3, medians)")
    print(f"  mlckit tvm.build          {ours * 1e3:8.1f} ms")
    print(f"  bare numba.njit           {alone * 1e3:8.1f} ms   mlckit / bare numba "
          f"{statistics.median(r[0] / r[1] for r in rows):5.2f}x")
    if server:
        theirs = statistics.median(r[2] for r in rows)
        print(f"  TVM 0.27 tvm.compile      {theirs * 1e3:8.1f} ms   mlckit / TVM "
              f"{statistics.median(r[0] / r[2] for r in rows):5.2f}x (median of the "
              f"schedules' ratios; bare numba / TVM "
              f"{statistics.median(r[1] / r[2] for r in rows):5.2f}x)")


def learner_env(**settings: str) -> dict:
    """This process's environment with ``settings``, bytecode caching on (see the module)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, **settings}


def write_bytecode(root: Path) -> None:
    """Compile ``root``'s mlckit to bytecode, as its first import by a learner would."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "mlckit")],
                   env=learner_env(), check=True, stdout=subprocess.DEVNULL)


def seconds_of(code: str, env: dict) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    return time.perf_counter() - start


def fresh_process(repeat: int) -> None:
    cache = tempfile.mkdtemp(prefix="mlckit-compile-bench-")
    write_bytecode(ROOT)
    env = learner_env(PYTHONPATH=str(ROOT), MLCKIT_CACHE_DIR=cache)
    build = FRESH_SNIPPET.format(text=MM_RELU)
    cold = seconds_of(build, env)
    [module] = Path(cache, "numba").glob("*/mm_relu.py")
    folder = tempfile.mkdtemp(prefix="numba-cached-")
    Path(folder, "kernel.py").write_text(module.read_text().replace("def mm_relu(", "def main("))
    cached = NUMBA_CACHED_SNIPPET.format(folder=folder)
    seconds_of(cached, env)  # fills Numba's cache of that module
    times: dict = {"build": [], "numba": [], "cached": []}
    for _ in range(repeat):  # alternating, so that the host's load hits all three alike
        times["build"].append(seconds_of(build, env))
        times["numba"].append(seconds_of("import numba", env))
        times["cached"].append(seconds_of(cached, env))
    warm, numba_alone, floor = (statistics.median(times[k]) for k in ("build", "numba", "cached"))
    print(f"2. a fresh process building mm_relu (medians of {repeat})")
    print(f"  empty cache               {cold * 1e3:8.1f} ms")
    print(f"  warm disk cache           {warm * 1e3:8.1f} ms   / import numba "
          f"{warm / numba_alone:5.2f}x")
    print(f"  import numba alone        {numba_alone * 1e3:8.1f} ms")
    print(f"  numba loading one cached function {floor * 1e3:8.1f} ms   / import numba "
          f"{floor / numba_alone:5.2f}x (the floor through Numba's cache)")


def tuning(baseline: str, rounds: int) -> None:
    code = TUNE_SNIPPET.format(text=TUNE_MM)
    pairs = []  # per round: (label, seconds, best candidate) of this tree, then the baseline
    with tempfile.TemporaryDirectory() as tree:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", tree,
                        baseline], check=True)
        try:
            for root in (ROOT, Path(tree)):
                write_bytecode(root)
            for _ in range(rounds):  # alternating: this host's speed drifts within minutes
                pair = []
                for label, root in (("this tree", ROOT), (f"at {baseline}", Path(tree))):
                    env = learner_env(PYTHONPATH=str(root), MLCKIT_CACHE_DIR=tempfile.mkdtemp(
                        prefix="mlckit-tune-bench-"))
                    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=root,
                                         check=True, capture_output=True, text=True)
                    seconds, best = (float(x) for x in out.stdout.split()[-2:])
                    pair.append((label, seconds, best))
                pairs.append(pair)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", tree],
                           check=False)
    print(f"3. the course's 64-trial tuning (built-in space, seed 0, empty cache; {rounds} "
          "alternating round(s))")
    for (_, ours, our_best), (label, theirs, their_best) in pairs:
        print(f"  this tree {ours:6.1f} s (best candidate {our_best * 1e3:.3f} ms), {label} "
              f"{theirs:6.1f} s ({their_best * 1e3:.3f} ms): {theirs / ours:.2f}x")
    ratios = [theirs / ours for (_, ours, _), (_, theirs, _) in pairs]
    print(f"  speed-up against {baseline}: {statistics.median(ratios):.2f}x (median of "
          f"{len(ratios)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tvm", help="python of an environment with apache-tvm 0.27")
    parser.add_argument("--kernels", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=15,
                        help="fresh processes of each kind (medians of 5 swing by ±15 % here)")
    parser.add_argument("--tuning", action="store_true", help="also time the 64-trial tuning")
    parser.add_argument("--baseline", default="85d2a77", help="the commit tuning compares with")
    parser.add_argument("--tuning-rounds", type=int, default=1,
                        help="alternating pairs of tuning runs (the median ratio reported)")
    args = parser.parse_args()
    warm_process(min(args.kernels, len(FACTORS) - 1), args.tvm)
    fresh_process(args.repeat)
    if args.tuning:
        tuning(args.baseline, args.tuning_rounds)


if __name__ == "__main__":
    main()
