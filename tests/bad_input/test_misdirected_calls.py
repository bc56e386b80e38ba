"""A tool given the wrong kind of program says so, naming the tool and what to do instead —
not a KeyError from deep inside, nor an error blaming another operator."""

from __future__ import annotations

from mlckit import meta_schedule as ms
from mlckit import relax
from mlckit.notebook import ScheduleExplorer
from mlckit.script import ir as I
from mlckit.script import relax as R
from tests.bad_input.common import refused


@I.ir_module
class AddThenMultiply:
    @R.function
    def main(x: R.Tensor((4, 4), "float32"), y: R.Tensor((4, 4), "float32")):
        with R.dataflow():
            a = R.add(x, y)
            b = R.multiply(a, y)
            R.output(b)
        return b


def test_a_custom_legalization_returning_none_is_blamed_not_the_next_operator():
    legalize = relax.transform.LegalizeOps({"relax.add": lambda bb, call: None})
    err = refused(lambda: legalize(AddThenMultiply), "relax.add", "returned None",
                  "customize_legalize_map")
    assert "relax.multiply" not in str(err)


def test_schedule_explorer_refuses_a_relax_function_and_says_to_legalize_first():
    refused(lambda: ScheduleExplorer(AddThenMultiply["main"], measure=False),
            "ScheduleExplorer", "Relax function", "LegalizeOps")


def test_schedule_explorer_refuses_a_module_without_prim_funcs():
    refused(lambda: ScheduleExplorer(AddThenMultiply, measure=False),
            "ScheduleExplorer", "no PrimFunc", "LegalizeOps")


def test_tune_tir_refuses_a_relax_function_and_says_what_it_tunes(tmp_path):
    refused(lambda: ms.tune_tir(AddThenMultiply["main"], "llvm", work_dir=str(tmp_path),
                                max_trials_global=1),
            "tune_tir", "PrimFunc", "Relax function", "LegalizeOps")


def test_a_legalized_module_can_be_explored_after_all():
    legalized = relax.transform.LegalizeOps()(AddThenMultiply)
    explorer = ScheduleExplorer(legalized, func_name="add", measure=False)
    assert explorer.func_name == "add"
