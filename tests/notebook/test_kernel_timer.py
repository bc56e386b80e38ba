"""KernelTimer: a PrimFunc built with Numba, run on fixed random inputs, timed."""

import numpy as np
import pytest

from mlckit import TVMError
from mlckit.notebook.kernel_timer import KernelTimer
from mlckit.script import tir as T
from tests.kernels import make_mm_relu


def test_the_outputs_are_the_kernels_results_on_the_random_inputs():
    m = KernelTimer(seed=3).measure(make_mm_relu(16, 8, 32, "mm"))
    a, b, c = m.outputs
    assert (a.shape, b.shape, c.shape) == ((16, 32), (32, 8), (16, 8))
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-5, atol=1e-5)
    assert m.seconds > 0


def test_the_same_inputs_are_used_for_every_measurement():
    timer = KernelTimer(seed=3)
    func = make_mm_relu(16, 8, 32, "mm")
    first, second = timer.measure(func), timer.measure(func)
    assert all(np.array_equal(x, y) for x, y in zip(first.outputs, second.outputs))
    assert first.agrees_with(second)
    assert timer.inputs(func)[0] is timer.inputs(func)[0]


def test_different_results_do_not_agree():
    timer = KernelTimer(seed=3)
    m = timer.measure(make_mm_relu(16, 8, 32, "mm"))
    other = type(m)(m.seconds, [m.outputs[0], m.outputs[1], m.outputs[2] + 1])
    assert not m.agrees_with(other)


def test_a_symbolic_shape_cannot_be_timed():
    @T.prim_func
    def scale(a: T.handle, b: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,), "float32")
        B = T.match_buffer(b, (n,), "float32")
        for i in range(n):
            with T.block("B"):
                vi = T.axis.spatial(n, i)
                B[vi] = A[vi] * T.float32(2)

    with pytest.raises(TVMError, match="symbolic dimension n"):
        KernelTimer().measure(scale)
