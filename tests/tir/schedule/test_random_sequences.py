"""Random primitive sequences: each either raises ScheduleError (schedule unchanged) or keeps
the function numerically equal to the original."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlckit import tir
from mlckit.ir import structural_equal

from .common import verify_numeric
from .workloads import elementwise, matmul, mm_relu_small

WORKLOADS = {"matmul": matmul, "elementwise": elementwise, "mm_relu": mm_relu_small}
SCOPES = ("global", "shared", "local")


def _blocks(sch):
    root = sch.get_block("root")
    out = []

    def rec(b):
        for c in sch.get_child_blocks(b):
            out.append(c)
            rec(c)

    rec(root)
    return out


def _step(sch, data):
    blocks = _blocks(sch)
    block = data.draw(st.sampled_from(blocks))
    loops = sch.get_loops(block)
    kind = data.draw(st.sampled_from([
        "split", "reorder", "fuse", "parallel", "unroll", "vectorize", "compute_at",
        "reverse_compute_at", "cache_read", "cache_write", "decompose_reduction",
        "compute_inline",
    ]))
    if kind in ("split", "parallel", "unroll", "vectorize", "fuse", "reorder",
                "decompose_reduction") and not loops:
        return
    if kind == "split":
        loop = data.draw(st.sampled_from(loops))
        f = data.draw(st.integers(1, 8))
        factors = data.draw(st.sampled_from([[None, f], [f, None], [2, None, f]]))
        sch.split(loop, factors=factors)
    elif kind == "reorder":
        order = data.draw(st.permutations(loops))
        sch.reorder(*order[: data.draw(st.integers(2, max(2, len(order))))])
    elif kind == "fuse":
        start = data.draw(st.integers(0, len(loops) - 1))
        sch.fuse(*loops[start: start + data.draw(st.integers(1, 3))])
    elif kind in ("parallel", "unroll", "vectorize"):
        getattr(sch, kind)(data.draw(st.sampled_from(loops)))
    elif kind in ("compute_at", "reverse_compute_at"):
        other = data.draw(st.sampled_from(blocks))
        other_loops = sch.get_loops(other)
        if other_loops:
            getattr(sch, kind)(block, data.draw(st.sampled_from(other_loops)))
    elif kind == "cache_read":
        n = len(sch.get(block).reads)
        if n:
            sch.cache_read(block, data.draw(st.integers(0, n - 1)), data.draw(st.sampled_from(SCOPES)))
    elif kind == "cache_write":
        sch.cache_write(block, 0, data.draw(st.sampled_from(SCOPES)))
    elif kind == "decompose_reduction":
        sch.decompose_reduction(block, data.draw(st.sampled_from(loops)))
    elif kind == "compute_inline":
        sch.compute_inline(block)


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), name=st.sampled_from(sorted(WORKLOADS)), length=st.integers(1, 8))
def test_random_schedule_sequences(data, name, length):
    func = WORKLOADS[name]
    sch = tir.Schedule(func)
    for _ in range(length):
        before = sch.mod
        try:
            _step(sch, data)
        except tir.ScheduleError:
            assert sch.mod is before and structural_equal(sch.mod, before)
    try:
        verify_numeric(func, sch.mod, targets=("lnumpy",))
    except AssertionError as err:
        raise AssertionError(f"{err}\n{sch.trace}\n{sch.mod.script()}") from None
