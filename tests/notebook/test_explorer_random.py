"""Random explorations: at each step a block and a loop are picked, then one of the
primitives the explorer offers there (with the parameters it proposes), or an undo.
Whatever is offered applies; every step keeps the function computing relu(A @ B); undo
gives back the module of the step before; the trace replays to the module explored.

Hypothesis is derandomized, so every run sees the same explorations."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlckit import tir
from mlckit.backend.lnumpy import build
from mlckit.ir import assert_structural_equal
from mlckit.notebook import ScheduleExplorer
from mlckit.notebook.explorer_primitives import PRIMITIVES
from mlckit.tir.schedule import Trace
from tests.kernels import make_mm_relu

MM = make_mm_relu(6, 8, 12, "mm_relu")


def relu_matmul_holds(mod) -> None:
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (6, 12)).astype("float32")
    b = rng.uniform(-1, 1, (12, 8)).astype("float32")
    c = np.zeros((6, 8), "float32")
    build(mod["main"])(a, b, c)
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-5, atol=1e-5)


@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(data=st.data(), length=st.integers(1, 6))
def test_random_explorations_keep_the_results_and_replay(data, length):
    ex = ScheduleExplorer(MM, measure=False)
    for _ in range(length):
        if ex.can_undo and data.draw(st.integers(0, 5)) == 0:
            before = ex.history[-2].sch.mod
            ex.undo()
            assert_structural_equal(ex.sch.mod, before)
            continue
        block = data.draw(st.sampled_from(ex.blocks()))
        loop = data.draw(st.sampled_from([None, *ex.loops(block), *ex.other_loops(block)]))
        offered = ex.legal_primitives(block, loop)
        if not offered:
            continue
        name = data.draw(st.sampled_from(offered))
        params = PRIMITIVES[name].defaults(ex.selection(block, loop))
        step = ex.apply(name, block=block, loop=loop, **params)
        assert step.ok, f"{name} was offered for ({block}, {loop}) but refused: {step}"
        relu_matmul_holds(ex.sch.mod)
    replayed = tir.Schedule(MM)
    Trace.from_json(ex.sch.trace.as_json()).apply_to_schedule(replayed)
    assert_structural_equal(replayed.mod, ex.sch.mod)
