"""Compile every numba.cuda kernel the tests generate to PTX, with no GPU.

Numba's CUDA simulator runs NumPy code a real kernel cannot (``np.sqrt`` in a kernel runs on
the simulator and fails on a GPU), and it says nothing about registers or local memory. This
script checks both without a GPU, in two steps:

1. ``collect DIR [pytest args]``, in mlckit's environment: runs the tests with a plugin that
   saves each ``CudaFunction`` called (its module source and its arguments' shapes) to
   ``DIR/<hash>.json``.
2. ``compile DIR``, with a Python that has numba-cuda and NVVM (``pip install numba
   'numba-cuda[cu12]'``): runs each saved host part on zero arrays with every ``@cuda.jit``
   kernel replaced by one that compiles to PTX for the launch's argument types
   (``numba.cuda.compile_ptx``), then, when the ``ptxas`` of the same wheels is found, prints
   each kernel's registers and stack frame.

Example::

    python tools/cuda_ptx_check.py collect /tmp/ptx tests/backend/numba_cuda tests/dlight
    /tmp/ptxenv/bin/python tools/cuda_ptx_check.py compile /tmp/ptx
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


# -- step 1: the pytest plugin (loaded by ``collect`` as ``-p cuda_ptx_check``) ----------------
def pytest_configure(config):
    import numpy as np

    from mlckit.backend import numba_cuda

    out = Path(os.environ["CUDA_PTX_DIR"])
    call = numba_cuda.CudaFunction.__call__

    def saving_call(self, *args):
        specs = []
        for a in args:
            inner = getattr(a, "_mlckit_device_array", None)
            a = inner() if inner is not None else a
            if hasattr(a, "shape") and hasattr(a, "dtype") and not np.isscalar(a):
                specs.append(["array", list(a.shape), str(a.dtype)])
            else:
                specs.append(["scalar", repr(a)])
        record = {"name": self.name, "source": self.source, "args": specs}
        text = json.dumps(record)
        (out / f"{hashlib.sha1(text.encode()).hexdigest()[:16]}.json").write_text(text)
        return call(self, *args)

    numba_cuda.CudaFunction.__call__ = saving_call


def collect(directory: str, pytest_args: list) -> int:
    Path(directory).mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, CUDA_PTX_DIR=directory,
               PYTHONPATH=os.pathsep.join([str(ROOT / "tools"), str(ROOT),
                                           os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "cuda_ptx_check", *pytest_args], env=env, cwd=ROOT)
    print(f"{len(glob.glob(directory + '/*.json'))} modules saved in {directory}")
    return done.returncode


# -- step 2: compile what was saved -------------------------------------------------------------
def _ptxas() -> str | None:
    try:
        import nvidia.cuda_nvcc as nvcc  # the wheel numba-cuda[cu12] installs
    except ImportError:
        return None
    found = [p for base in nvcc.__path__ for p in glob.glob(f"{base}/bin/ptxas")]
    return found[0] if found else None


def compile_all(directory: str, cc: tuple) -> int:
    import numba.cuda as cuda
    import numpy as np
    from numba import typeof

    real_jit = cuda.jit

    class PtxKernel:
        """Stands in for a ``@cuda.jit`` kernel: a launch compiles it to PTX instead."""

        def __init__(self, pyfunc, options):
            self.pyfunc, self.options, self.ptx = pyfunc, options, {}

        def __getitem__(self, launch_config):
            def launch(*args):
                sig = tuple(typeof(a) for a in args)
                if sig not in self.ptx:
                    self.ptx[sig], _ = cuda.compile_ptx(
                        self.pyfunc, sig, cc=cc, fastmath=self.options.get("fastmath", False))
            return launch

    def ptx_jit(*args, **options):
        if options.get("device"):
            return real_jit(*args, **options)
        if args and callable(args[0]):
            return PtxKernel(args[0], options)
        return lambda f: PtxKernel(f, options)

    cuda.jit = ptx_jit
    ptxas = _ptxas()
    failed = kernels = 0
    totals = {"registers": 0, "stack bytes": 0}
    for path in sorted(glob.glob(directory + "/*.json")):
        record = json.loads(Path(path).read_text())
        namespace = {"__name__": f"ptx_{record['name']}",
                     "empty": lambda shape, dtype: np.zeros(shape, dtype)}
        try:
            exec(compile(record["source"], path, "exec"), namespace)  # noqa: S102
            args = [np.zeros(spec[1], spec[2]) if spec[0] == "array" else eval(spec[1])  # noqa: S307
                    for spec in record["args"]]
            host = re.findall(r"^def (\w+)\(", record["source"], re.M)[-1]
            namespace[host](*args)
        except Exception as err:  # noqa: BLE001 - every failure is reported
            failed += 1
            print(f"FAILED {record['name']} ({Path(path).name}): {type(err).__name__}: "
                  f"{str(err).splitlines()[0] if str(err) else ''}")
            continue
        for kernel in (v for v in namespace.values() if isinstance(v, PtxKernel)):
            for ptx in kernel.ptx.values():
                kernels += 1
                if ptxas is None:
                    continue
                with tempfile.NamedTemporaryFile("w", suffix=".ptx") as f:
                    f.write(ptx)
                    f.flush()
                    info = subprocess.run([ptxas, "-c", f"-arch=sm_{cc[0]}{cc[1]}", "-v",
                                           f.name, "-o", os.devnull],
                                          capture_output=True, text=True).stderr
                registers = int(re.search(r"Used (\d+) registers", info).group(1))
                stack = int(re.search(r"(\d+) bytes stack frame", info).group(1))
                totals["registers"] += registers
                totals["stack bytes"] += stack
                print(f"{record['name']:>28} {kernel.pyfunc.__name__:<32} "
                      f"{registers:4d} registers {stack:5d} bytes of stack")
    print(f"{kernels} kernels compiled to PTX (sm_{cc[0]}{cc[1]}), {failed} modules failed"
          + (f"; in all {totals['registers']} registers, {totals['stack bytes']} bytes of "
             "stack" if ptxas else "; no ptxas found, so no register counts"))
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    c = sub.add_parser("collect", help="run tests, saving every CUDA module they call")
    c.add_argument("directory")
    p = sub.add_parser("compile", help="compile the saved modules to PTX (needs numba-cuda)")
    p.add_argument("directory")
    p.add_argument("--cc", default="9.0", help="compute capability (default 9.0)")
    args, rest = parser.parse_known_args()
    if args.step == "collect":
        return collect(args.directory, rest or ["tests/backend/numba_cuda"])
    return compile_all(args.directory, tuple(int(x) for x in args.cc.split(".")))


if __name__ == "__main__":
    sys.exit(main())
