"""Fixtures for the CUDA backend's tests.

``simulator``: Numba's CUDA simulator must be switched on before ``numba.cuda`` is first
imported, and this test process may already have imported it (or need it without the
simulator), so the simulator runs in one child process for the whole session.  The child
reads a kernel as TVMScript text plus its arguments, builds it with ``mode="sim"``, runs it
and sends the arrays back.
"""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]

CHILD = r'''
import base64, io, json, sys
import numpy as np
from mlckit.backend import numba_cuda
from mlckit.script import from_source

def load(text):
    return np.load(io.BytesIO(base64.b64decode(text)))

def dump(arr):
    buf = io.BytesIO(); np.save(buf, arr); return base64.b64encode(buf.getvalue()).decode()

for line in sys.stdin:
    req = json.loads(line)
    if req.get("quit"):
        break
    try:
        func = from_source(req["script"])
        f = numba_cuda.build(func, mode="sim", sync=req["sync"])
        args = [load(a) for a in req["args"]]
        f(*args)
        reply = {"args": [dump(a) for a in args], "mode": f.mode}
    except Exception as err:
        reply = {"error": f"{type(err).__name__}: {err}"}
    print(json.dumps(reply), flush=True)
'''


def _dump(arr) -> str:
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(arr))
    return base64.b64encode(buf.getvalue()).decode()


class Simulator:
    """``run(func, *arrays, sync=True)`` -> the arrays after the kernel ran on the
    simulator."""

    def __init__(self):
        env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1",
                   PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
        self.proc = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)

    def run(self, func, *arrays, sync: bool = True) -> list:
        request = {"script": func.script(), "args": [_dump(a) for a in arrays], "sync": sync}
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline())
        if "error" in reply:
            raise AssertionError(f"the simulator child failed: {reply['error']}")
        assert reply["mode"] == "sim"
        return [np.load(io.BytesIO(base64.b64decode(a))) for a in reply["args"]]

    def close(self):
        # an explicit quit: a process forked meanwhile (a meta_schedule worker pool) holds a
        # copy of our end of the pipe, so closing it would never reach the child as EOF
        self.proc.stdin.write(json.dumps({"quit": True}) + "\n")
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self.proc.stdout.close()


@pytest.fixture(scope="session")
def simulator():
    sim = Simulator()
    yield sim
    sim.close()
