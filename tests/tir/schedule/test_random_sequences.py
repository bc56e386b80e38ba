"""Random primitive sequences on matmul, conv2d and softmax (loop transformations, compute
locations, caches, inlining, ``rfactor``, ``blockize``, ``transform_layout`` of the kernel's own
buffers, ``add_unit_loop``): each primitive either raises
ScheduleError (and leaves ``sch.mod`` and the trace exactly as they were) or keeps the
function numerically equal to the original; the trace of what succeeded replays to the same
module.

Arguments are drawn to look legal (a loop of the block being scheduled, the loop of a
consumer for ``compute_at``, a reduction block for ``decompose_reduction`` …), with a little
noise so that the error paths run too.  Hypothesis is derandomized (examples derived from the
test's name), so CI sees the same examples on every run; 3 workloads × ``EXAMPLES``
examples ≥ 300.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlckit import tir
from mlckit.ir import assert_structural_equal, structural_equal

from .common import verify_numeric
from .workloads import conv2d_nchw, matmul, softmax

WORKLOADS = {"matmul": matmul, "conv2d": conv2d_nchw, "softmax": softmax}
EXAMPLES = 110  # per workload: 330 sequences in all
SCOPES = ("global", "shared", "local")
KINDS = (
    "split", "reorder", "fuse", "parallel", "unroll", "vectorize", "compute_at",
    "reverse_compute_at", "cache_read", "cache_write", "decompose_reduction",
    "compute_inline", "reverse_compute_inline", "rfactor", "blockize", "transform_layout",
    "add_unit_loop",
)


def _index_map(data, shape):
    """A lambda laying out a buffer of ``shape`` anew: its axes permuted, one split by a
    factor (the remainder innermost; a factor not dividing the extent pads, refused), or
    two neighbours fused."""
    n = len(shape)
    axes = [f"v{d}" for d in range(n)]
    out = list(axes)
    kind = data.draw(st.sampled_from(("permute", "pack", "fuse")))
    d = data.draw(st.integers(0, n - 1))
    if kind == "permute":
        out = list(data.draw(st.permutations(axes)))
    elif kind == "pack":
        f = data.draw(st.sampled_from((2, 3, 4)))
        out = out[:d] + [f"{axes[d]} // {f}"] + out[d + 1:] + [f"{axes[d]} % {f}"]
    elif d + 1 < n:
        out = out[:d] + [f"{axes[d]} * {shape[d + 1]} + {axes[d + 1]}"] + out[d + 2:]
    return eval(f"lambda {', '.join(axes)}: ({', '.join(out)},)")  # noqa: S307


def _blocks(sch):
    out = []

    def rec(b):
        for c in sch.get_child_blocks(b):
            out.append(c)
            rec(c)

    rec(sch.get_block("root"))
    return out


def _loop(data, loops, noise_loops):
    """Usually one of ``loops``; sometimes (noise) any loop of the function."""
    if noise_loops and data.draw(st.integers(0, 9)) == 0:
        return data.draw(st.sampled_from(noise_loops))
    return data.draw(st.sampled_from(loops))


def _step(sch, data, kind):
    """Apply one primitive of ``kind`` with drawn arguments (may raise ScheduleError)."""
    blocks = _blocks(sch)
    block = data.draw(st.sampled_from(blocks))
    loops = sch.get_loops(block)
    all_loops = [lp for b in blocks for lp in sch.get_loops(b)]
    if kind in ("split", "reorder", "fuse", "parallel", "unroll", "vectorize") and not loops:
        return
    if kind == "split":
        loop = _loop(data, loops, all_loops)
        extent = sch.get(loop).extent
        ext = int(extent.value) if hasattr(extent, "value") else 8
        f = data.draw(st.sampled_from(sorted({1, 2, 3, 4, max(1, ext // 2), ext})))
        factors = data.draw(st.sampled_from([[None, f], [f, None], [2, None, f], [None, 2, 2]]))
        sch.split(loop, factors=factors)
    elif kind == "reorder":
        order = data.draw(st.permutations(loops))
        n = data.draw(st.integers(min(2, len(order)), len(order)))
        sch.reorder(*order[:n])
    elif kind == "fuse":
        start = data.draw(st.integers(0, len(loops) - 1))
        sch.fuse(*loops[start: start + data.draw(st.integers(1, 3))])
    elif kind in ("parallel", "unroll", "vectorize"):
        getattr(sch, kind)(_loop(data, loops, all_loops))
    elif kind in ("compute_at", "reverse_compute_at"):
        others = sch.get_consumers(block) if kind == "compute_at" else sch.get_producers(block)
        if not others or data.draw(st.integers(0, 9)) == 0:
            others = blocks
        target_loops = sch.get_loops(data.draw(st.sampled_from(others)))
        if target_loops:
            getattr(sch, kind)(block, data.draw(st.sampled_from(target_loops)),
                               preserve_unit_loops=data.draw(st.booleans()))
    elif kind == "cache_read":
        n = len(sch.get(block).reads)
        if n:
            sch.cache_read(block, data.draw(st.integers(0, n - 1)),
                           data.draw(st.sampled_from(SCOPES)))
    elif kind == "cache_write":
        sch.cache_write(block, 0, data.draw(st.sampled_from(SCOPES)))
    elif kind == "decompose_reduction":
        reductions = [b for b in blocks if sch.get(b).init is not None]
        if reductions and data.draw(st.integers(0, 9)) != 0:
            block = data.draw(st.sampled_from(reductions))
            loops = sch.get_loops(block)
        if loops:
            sch.decompose_reduction(block, _loop(data, loops, all_loops))
    elif kind == "compute_inline":
        sch.compute_inline(block)
    elif kind == "reverse_compute_inline":
        sch.reverse_compute_inline(block)
    elif kind in ("rfactor", "blockize") and loops:
        loop = _loop(data, loops, all_loops)
        if kind == "rfactor":
            sch.rfactor(loop, data.draw(st.integers(0, 1)))
        else:
            sch.blockize(loop, preserve_unit_iters=data.draw(st.booleans()))
    elif kind == "transform_layout":
        # the kernel's own buffers: a parameter laid out anew takes other inputs
        params = {b.name for b in sch.mod["main"].buffer_map.values()}
        regions = [("write", i, w) for i, w in enumerate(sch.get(block).writes)]
        regions += [("read", i, r) for i, r in enumerate(sch.get(block).reads)]
        regions = [x for x in regions if x[2].buffer.name not in params and x[2].buffer.shape]
        if regions:
            side, i, region = data.draw(st.sampled_from(regions))
            shape = [int(e.value) for e in region.buffer.shape]
            sch.transform_layout(block, (side, i), _index_map(data, shape))
    elif kind == "add_unit_loop":
        sch.add_unit_loop(_loop(data, loops, all_loops) if loops and data.draw(st.booleans())
                          else block)


def _effects(sch) -> int:
    return sum(1 for inst in sch.trace.insts if not inst.kind.is_pure)


def _run(func, data, length):
    sch = tir.Schedule(func)
    applied = []
    for _ in range(length):
        kind = data.draw(st.sampled_from(KINDS))
        before, n_effects = sch.mod, _effects(sch)
        try:
            _step(sch, data, kind)
            applied.append(kind)
        except tir.ScheduleError as err:
            # a failed primitive leaves the schedule exactly as it was
            assert sch.mod is before and structural_equal(sch.mod, before), str(err)
            assert _effects(sch) == n_effects, str(err)
            assert str(err).startswith("ScheduleError: "), str(err)
    try:
        verify_numeric(func, sch.mod, targets=("lnumpy",))
        fresh = tir.Schedule(func)
        tir.Trace.apply_json_to_schedule(sch.trace.to_json(), fresh)
        assert_structural_equal(fresh.mod, sch.mod)
    except Exception as err:
        raise AssertionError(f"{type(err).__name__}: {err}\n-- trace --\n{sch.trace}\n"
                             f"-- scheduled --\n{sch.mod.script()}") from None


@pytest.mark.parametrize("name", sorted(WORKLOADS))
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(data=st.data(), length=st.integers(1, 8))
def test_random_schedule_sequences(name, data, length):
    _run(WORKLOADS[name], data, length)
