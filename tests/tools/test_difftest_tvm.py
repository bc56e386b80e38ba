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


def test_a_case_tvm_never_finishes_is_stopped_and_the_rest_run(tmp_path):
    # a stand-in for TVM's worker that answers case 0, loops forever on case 1 and is
    # started again for case 2
    worker = tmp_path / "worker.py"
    worker.write_text(
        "import json, sys, time\n"
        "cases = json.load(open(sys.argv[sys.argv.index('--worker') + 1]))\n"
        "for case in cases[int(sys.argv[sys.argv.index('--skip') + 1]):]:\n"
        "    if case['id'] == 1:\n"
        "        time.sleep(60)\n"
        "    print(json.dumps({'id': case['id'], 'outcomes': []}), flush=True)\n")
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\nexec {sys.executable} {worker} \"$@\"\n")
    fake.chmod(0o755)
    cases = [{"id": k} for k in range(3)]
    results = difftest_tvm.run_tvm(cases, str(fake), str(tmp_path), "t", case_seconds=2)
    assert results[0] == {"id": 0, "outcomes": []} and results[2] == {"id": 2, "outcomes": []}
    assert results[1] == {"id": 1, "crashed": "TVM spent more than 2 s on this case (stopped)"}
