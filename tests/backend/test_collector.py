"""backend.collector: a kernel is built with the cyclic garbage collector paused, and the
collector is as it was afterwards."""

import gc
import threading

import numpy as np

from mlckit.backend import collector, numba_cpu
from mlckit.backend.collector import collector_paused
from mlckit.script import tir as T


def test_the_collector_is_paused_inside_and_on_again_after():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():  # a build within a build
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_switched_off_by_the_caller_stays_off():
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_builds_side_by_side_resume_it_when_the_last_ends():
    first_inside, second_done = threading.Event(), threading.Event()
    seen = []

    def first():
        with collector_paused():
            first_inside.set()
            second_done.wait(10)
            seen.append(gc.isenabled())  # the other build ended: still paused for this one

    thread = threading.Thread(target=first)
    thread.start()
    first_inside.wait(10)
    with collector_paused():
        pass
    second_done.set()
    thread.join(10)
    assert seen == [False] and gc.isenabled() and collector._builds == 0


# a kernel of this file's own: one structurally equal to another test's would come from
# numba_cpu's in-process cache, built already, without a compile to observe
@T.prim_func
def triple(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    for i in range(128):
        with T.block("B"):
            vi = T.axis.spatial(128, i)
            B[vi] = A[vi] * T.float32(3)


def test_numba_cpu_builds_with_the_collector_paused(monkeypatch):
    states = []
    compile_version = numba_cpu.NumbaFunction.compile

    def compile_recording(self):
        states.append(gc.isenabled())
        return compile_version(self)

    monkeypatch.setattr(numba_cpu.NumbaFunction, "compile", compile_recording)
    f = numba_cpu.build(triple, cache=False)
    assert states == [False] and gc.isenabled()
    a = np.arange(128, dtype="float32")
    b = np.zeros(128, "float32")
    f(a, b)
    np.testing.assert_array_equal(b, a * 3)
