"""How tools/difftest_tvm.py decides where the fault of a difference lies (no TVM needed:
TVM's side is given as the worker reports it)."""

import pathlib
import sys

import numpy as np

from mlckit.script import from_source

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools"))
import difftest_tvm  # noqa: E402  (a script beside its kernels, not a package)

SCRIPT = '''# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = A[vi] * T.float32(2.0)
'''
OTHER = SCRIPT.replace("A[vi] * T.float32(2.0)", "A[vi] + A[vi]")
ILL_FORMED = "DiagnosticError: Invalid use of undefined variable j_0"


def _mlckit(script, out):
    ref = np.arange(8, dtype="float32")
    return {"outcomes": [["ok", ""]], "steps": [{"op": "blockize"}], "script": script,
            "mod": from_source(script), "out": out, "ref": ref}


def _tvm(script, **more):
    return {"outcomes": [["ok", ""]], "script": difftest_tvm.to_tvm_spelling(script), **more}


def _fault(m, t):
    return difftest_tvm.classify(difftest_tvm.compare(m, t))


RIGHT = np.arange(8, dtype="float32")


def test_the_same_script_and_numbers_agree():
    assert _fault(_mlckit(SCRIPT, RIGHT), _tvm(SCRIPT)) == "agree"


def test_a_script_tvm_cannot_parse_back_is_tvms_fault_when_mlckit_prints_the_same():
    assert _fault(_mlckit(SCRIPT, RIGHT), _tvm(SCRIPT, reparse=ILL_FORMED)) == "tvm_unparsable"


def test_or_when_mlckit_prints_a_well_formed_function_with_the_right_numbers():
    assert _fault(_mlckit(OTHER, RIGHT), _tvm(SCRIPT, reparse=ILL_FORMED)) == "tvm_unparsable"


def test_but_not_when_mlckit_s_numbers_are_wrong():
    assert _fault(_mlckit(OTHER, RIGHT + 1), _tvm(SCRIPT, reparse=ILL_FORMED)) == "numbers"


def test_a_step_only_tvm_takes_and_then_cannot_build_is_a_tvm_crash():
    m = _mlckit(SCRIPT, RIGHT)
    m["outcomes"] = [["rejected", "ScheduleError: cache_write: ... no T.init()"]]
    t = _tvm(SCRIPT, build="ValueError: Check failed: ... is not in the block's signature")
    assert _fault(m, t) == "tvm_internal"
    del t["build"]  # TVM built it: an accept/reject difference whose numbers are unknown here
    assert _fault(m, t) == "accept_reject"


OUT_OF_DOMAIN = SCRIPT.replace("for i in range(4):", "for i in range(6):")


def test_a_tvm_script_binding_outside_its_domain_is_tvms_fault_when_mlckit_is_sound():
    # mlckit's parser refuses it (vi takes 0..5 of a domain [0, 4)): TVM's kernel would go
    # out of bounds, while mlckit's function parses back to itself with the right numbers
    assert _fault(_mlckit(SCRIPT, RIGHT), _tvm(OUT_OF_DOMAIN)) == "tvm_unparsable"
    assert _fault(_mlckit(SCRIPT, RIGHT + 1), _tvm(OUT_OF_DOMAIN)) == "numbers"
