"""s_tir: TVM >= 0.24's names for the TensorIR schedule are mlckit's tir.Schedule, with the
trace printed in TVM 0.27's names."""

import pytest

import mlckit as tvm
from mlckit import s_tir, tir
from mlckit.ir import IRModule, assert_structural_equal
from tests.kernels import mm_relu


def _mod():
    return IRModule({"main": mm_relu})


def _tile(sch, get):
    block_Y = get("Y")
    i, j, k = sch.get_loops(block_Y)
    j0, j1 = sch.split(j, factors=[None, 8])
    sch.reorder(j0, k, j1)
    sch.reverse_compute_at(get("C"), j0)
    sch.decompose_reduction(block_Y, k)


def test_a_schedule_through_s_tir_names_gives_the_module_of_tir_names():
    new = tvm.s_tir.Schedule(_mod())
    _tile(new, new.get_sblock)
    old = tvm.tir.Schedule(_mod())
    _tile(old, old.get_block)
    assert_structural_equal(new.mod, old.mod)


def test_the_s_tir_trace_prints_tvm_027_names():
    sch = s_tir.Schedule(_mod())
    b0 = sch.get_sblock("Y")
    sch.split(sch.get_loops(b0)[1], factors=[None, 8])
    assert str(sch.trace) == "\n".join([
        "# from tvm import s_tir",
        "def apply_trace(sch: s_tir.Schedule) -> None:",
        '  b0 = sch.get_sblock(name="Y", func_name="main")',
        "  l1, l2, l3 = sch.get_loops(block=b0)",
        "  l4, l5 = sch.split(loop=l2, factors=[None, 8], preserve_unit_iters=True, "
        "disable_predication=False)",
    ])
    assert [inst[0] for inst in sch.trace.as_json()[0]] == ["GetSBlock", "GetLoops", "Split"]


def test_a_tir_schedule_keeps_printing_tvm_v023_names():
    sch = tir.Schedule(_mod())
    sch.get_sblock("Y")  # the new spelling works there too; the trace keeps the old names
    assert str(sch.trace).splitlines() == [
        "# from tvm import tir",
        "def apply_trace(sch: tir.Schedule) -> None:",
        '  b0 = sch.get_block(name="Y", func_name="main")',
    ]
    assert sch.trace.as_json()[0][0][0] == "GetBlock"


def test_a_tvm_027_json_trace_replays_on_either_schedule():
    new = s_tir.Schedule(_mod())
    _tile(new, new.get_sblock)
    text = new.trace.to_json()
    assert '"GetSBlock"' in text
    for cls in (tir.Schedule, s_tir.Schedule):
        again = cls(_mod())
        tir.Trace.from_json(text).apply_to_schedule(again)
        assert_structural_equal(again.mod, new.mod)


def test_a_copy_and_a_decision_keep_the_s_tir_trace():
    sch = s_tir.Schedule(_mod())
    sch.get_sblock("C")
    assert isinstance(sch.copy().trace, s_tir.Trace)
    assert str(sch.copy().trace) == str(sch.trace)
    assert isinstance(sch.trace.with_decision(0, None), s_tir.Trace)


def test_handles_and_nodes_answer_to_their_new_names():
    sch = s_tir.Schedule(_mod())
    block = sch.get_sblock("Y")
    assert isinstance(block, s_tir.SBlockRV)
    assert isinstance(sch.get(block), s_tir.SBlock)
    assert s_tir.SBlock is tir.Block and s_tir.SBlockRealize is tir.BlockRealize
    assert all(isinstance(loop, s_tir.LoopRV) for loop in sch.get_loops(block))
    assert s_tir.SBlockRV is s_tir.schedule.SBlockRV is tir.schedule.BlockRV
    assert issubclass(s_tir.Schedule, tir.Schedule)


def test_navigation_names_as_tvm_027_has_them():
    sch = s_tir.Schedule(_mod())
    y, c = sch.get_sblock("Y"), sch.get_sblock("C")
    assert [sch.get(b).name_hint for b in sch.get_producers(c)] == ["Y"]
    assert [sch.get(b).name_hint for b in sch.get_consumers(y)] == ["C"]
    root = sch.get_sblock("root")
    assert [sch.get(b).name_hint for b in sch.get_child_blocks(root)] == ["Y", "C"]


def test_schedule_errors_are_tir_schedule_errors():
    sch = s_tir.Schedule(_mod())
    assert s_tir.ScheduleError is tir.ScheduleError
    with pytest.raises(s_tir.ScheduleError, match="no block is named 'Z'"):
        sch.get_sblock("Z")


def test_meta_schedule_and_dlight_are_the_same_modules_however_imported():
    import importlib

    import mlckit.dlight
    import mlckit.meta_schedule
    import mlckit.s_tir.dlight as dl
    from mlckit.s_tir import meta_schedule as ms
    from mlckit.s_tir.meta_schedule.database import JSONDatabase

    assert dl is mlckit.dlight and s_tir.dlight is mlckit.dlight
    assert ms is mlckit.meta_schedule and s_tir.meta_schedule is mlckit.meta_schedule
    assert JSONDatabase is mlckit.meta_schedule.database.JSONDatabase
    assert importlib.import_module("mlckit.s_tir.dlight.gpu") is mlckit.dlight.gpu
    assert mlckit.dlight.__spec__.name == "mlckit.dlight"  # the real module keeps its spec
    with pytest.raises(ImportError, match="mlckit.dlight.no_such_rule"):
        importlib.import_module("mlckit.s_tir.dlight.no_such_rule")


def test_s_tir_analysis_and_transform():
    assert s_tir.analysis.verify_well_formed(mm_relu) is True
    assert s_tir.transform.CompactBufferAllocation is tir.transform.CompactBufferAllocation


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="'mlckit.s_tir' has no attribute 'Schedul'"):
        s_tir.Schedul  # noqa: B018
