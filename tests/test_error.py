"""Every error a user can catch derives from tvm.TVMError, and keeps its built-in kind."""

import numpy as np
import pytest

import mlckit as tvm
from mlckit import error
from mlckit.script import tir as T
from tests.kernels import mm_relu


def test_the_hierarchy_under_tvm_error():
    assert issubclass(error.TVMError, RuntimeError)
    assert issubclass(tvm.DiagnosticError, tvm.TVMError)
    assert issubclass(error.ScheduleError, tvm.TVMError) and issubclass(error.ScheduleError, ValueError)
    assert issubclass(error.VMError, tvm.TVMError)
    assert issubclass(error.OpNotImplemented, error.OpError)
    assert issubclass(error.OpNotImplemented, NotImplementedError)
    for tvm_kind, builtin in [(error.TVMValueError, ValueError), (error.TVMTypeError, TypeError),
                              (error.TVMKeyError, KeyError), (error.TVMIndexError, IndexError),
                              (error.TVMAttributeError, AttributeError)]:
        assert issubclass(tvm_kind, tvm.TVMError) and issubclass(tvm_kind, builtin)


def test_a_key_error_reads_as_written():
    assert str(error.TVMKeyError("no function 'f'")) == "no function 'f'"


@pytest.mark.parametrize("make_mistake", [
    pytest.param(lambda: tvm.tir.Schedule(mm_relu).get_loops("Z"), id="unknown block"),
    pytest.param(lambda: tvm.tir.Schedule(mm_relu).work_on("nope"), id="unknown function"),
    pytest.param(lambda: tvm.script.from_source("@T.prim_func\ndef f(A: T.Buffer((4,), 'flot32')):\n"
                                                "    T.evaluate(0)\n"), id="bad script"),
    pytest.param(lambda: tvm.build(mm_relu, target="lvm"), id="bad target"),
    pytest.param(lambda: tvm.build("mm_relu"), id="not a function"),
    pytest.param(lambda: tvm.IRModule({"f": mm_relu})["g"], id="missing function"),
    pytest.param(lambda: tvm.get_global_func("no.such.func"), id="missing global func"),
    pytest.param(lambda: tvm.nd.array(np.ones(3)).copyfrom(np.ones(4)), id="shape mismatch"),
    pytest.param(lambda: tvm.device("tpu"), id="unknown device"),
    pytest.param(lambda: T.Buffer((4,), "flaot32"), id="unknown dtype"),
    pytest.param(lambda: tvm.build(mm_relu, target="lnumpy")(np.ones((128, 128), "float32")),
                 id="wrong argument count"),
])
def test_mistakes_raise_tvm_errors(make_mistake):
    with pytest.raises(tvm.TVMError):
        make_mistake()


def test_errors_defined_elsewhere_are_reexported_under_tvm_names():
    from mlckit.ir.diagnostics import DiagnosticError
    from mlckit.tir.schedule.error import ScheduleError

    assert error.DiagnosticError is DiagnosticError and error.ScheduleError is ScheduleError
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        error.Nope  # noqa: B018


# -- "did you mean" for misspelt names outside a script ---------------------------------------
def test_did_you_mean_names_the_closest_public_name_or_nothing():
    from mlckit.error import did_you_mean

    assert did_you_mean("ad", ["add", "_add_impl", "multiply"]) == "; did you mean 'add'?"
    assert did_you_mean("xyzzy", ["add", "multiply"]) == ""
    assert did_you_mean("_ad", ["_add"]) == ""  # private names are never proposed


@pytest.mark.parametrize("spelt, message", [
    ("R.ad", "module 'R' (mlckit.script.relax) has no attribute 'ad'; did you mean 'add'?"),
    ("T.grd", "module 'T' (mlckit.script.tir) has no attribute 'grd'; did you mean 'grid'?"),
    ("TX.sblok", "module 'mlckit.script.tirx' has no attribute 'sblok'; "
                 "did you mean 'sblock'?"),
    ("relax.BlockBulder", "module 'mlckit.relax' has no attribute 'BlockBulder'; "
                          "did you mean 'BlockBuilder'?"),
    ("tir.Schedul", "module 'mlckit.tir' has no attribute 'Schedul'; did you mean 'Schedule'?"),
    ("sch.splt", "'Schedule' object has no attribute 'splt'; did you mean 'split'?"),
    ("sch.get_blok", "'Schedule' object has no attribute 'get_blok'; "
                     "did you mean 'get_block'?"),
])
def test_a_misspelt_attribute_says_what_was_meant(spelt, message):
    from mlckit import relax, tir
    from mlckit.script import relax as R
    from mlckit.script import tirx as TX

    sch = tir.Schedule(mm_relu)
    names = {"R": R, "T": T, "TX": TX, "relax": relax, "tir": tir, "sch": sch}
    owner, attr = spelt.split(".")
    with pytest.raises(AttributeError) as info:
        getattr(names[owner], attr)
    assert str(info.value) == message


def test_a_schedule_still_copies_and_unknown_dunders_fail_plainly():
    import copy

    sch = tvm.tir.Schedule(mm_relu)
    assert copy.deepcopy(sch).mod.script() == sch.mod.script()
    assert not hasattr(sch, "__array_interface__")
