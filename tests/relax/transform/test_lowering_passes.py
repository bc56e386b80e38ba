"""ToNonDataflow, CallTIRRewrite, LowerAllocTensor, VMShapeLower, BindParams: structure
against expected TVMScript."""

import numpy as np
import pytest

from mlckit import relax
from mlckit.ir import IRModule, assert_structural_equal
from mlckit.relax.expr import BindingBlock, DataflowVar
from mlckit.relax.transform import (
    BindParams,
    CallTIRRewrite,
    LowerAllocTensor,
    ToNonDataflow,
    VMShapeLower,
)
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T


@I.ir_module
class Mod:
    @T.prim_func
    def exp(a: T.handle, b: T.handle):
        T.evaluate(0)

    @R.function
    def main(x: R.Tensor(("n", 4), "float32")):
        n = T.int64()
        cls = Mod
        with R.dataflow():
            lv = R.call_tir(cls.exp, (x,), R.Tensor((n, 4), "float32"))
            gv = R.call_dps_packed("ext", (lv,), R.Tensor((n, 4), "float32"))
            R.output(gv)
        return gv


def body(mod) -> str:
    return mod["main"].script().split(":\n", 1)[1]


def test_to_non_dataflow():
    out = ToNonDataflow()(Mod)
    block = out["main"].body.blocks[0]
    assert type(block) is BindingBlock
    assert not any(isinstance(b.var, DataflowVar) for b in block.bindings)
    assert "R.dataflow" not in out["main"].script()
    assert "R.dataflow" in Mod["main"].script()  # the input is untouched


def test_call_tir_rewrite():
    out = CallTIRRewrite()(ToNonDataflow()(Mod))
    assert body(out) == '''    n = T.int64()
    alloc: R.Tensor((n, 4), dtype="float32") = R.builtin.alloc_tensor(R.shape([n, 4]), R.dtype("float32"), R.prim_value(0), R.str("global"))
    exp(x, alloc)
    lv: R.Tensor((n, 4), dtype="float32") = alloc
    alloc_1: R.Tensor((n, 4), dtype="float32") = R.builtin.alloc_tensor(R.shape([n, 4]), R.dtype("float32"), R.prim_value(0), R.str("global"))
    R.call_packed("ext", lv, alloc_1)
    gv: R.Tensor((n, 4), dtype="float32") = alloc_1
    return gv'''


def test_lower_alloc_tensor_sizes_in_bytes():
    out = LowerAllocTensor()(CallTIRRewrite()(ToNonDataflow()(Mod)))
    text = body(out)
    assert 'R.memory.alloc_storage(R.shape([n * 16]), R.prim_value(0), R.str("global"), ' \
           'R.dtype("float32"))' in text
    assert 'R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([n, 4]), ' \
           'R.dtype("float32"))' in text
    assert "R.builtin.alloc_tensor" not in text


def test_vm_shape_lower_checks_and_heap():
    out = VMShapeLower()(LowerAllocTensor()(CallTIRRewrite()(ToNonDataflow()(Mod))))
    text = body(out)
    assert 'R.call_builtin_with_ctx("vm.builtin.alloc_shape_heap", (R.prim_value(2), ' \
           'R.str("n, n * 16"))' in text
    assert ('R.call_packed("vm.builtin.check_tensor_info", x, R.prim_value(2), '
            'R.dtype("float32"), R.str("ErrorContext(fn=main, loc=param[0], param=x, '
            'annotation=R.Tensor((n, 4), \\"float32\\"))"))') in text
    # n is stored (code 1) in slot 0, 4 is asserted (code 0)
    assert ('R.call_packed("vm.builtin.match_shape", x, shape_heap, R.prim_value(2), '
            'R.prim_value(1), R.prim_value(0), R.prim_value(0), R.prim_value(4), ') in text
    assert "shape_func(shape_heap)" in text
    assert out["shape_func"].script().endswith("H[T.int64(1)] = H[T.int64(0)] * T.int64(16)")
    # the return value is checked against the slot of n (code 3)
    assert ('R.call_packed("vm.builtin.match_shape", gv, shape_heap, R.prim_value(2), '
            'R.prim_value(3), R.prim_value(0)') in text


def test_vm_shape_lower_static_function_has_no_heap():
    @R.function
    def f(x: R.Tensor((2, 3), "float32")):
        return x

    out = VMShapeLower()(IRModule({"main": f}))
    text = body(out)
    assert "alloc_shape_heap" not in text
    assert "R.null_value()" in text


def test_bind_params_by_name_and_symbolic_dims():
    w = np.ones((3, 4), "float32")

    @R.function
    def main(x: R.Tensor(("n", 4), "float32"), w: R.Tensor(("m", 4), "float32")):
        m = T.int64()
        with R.dataflow():
            y = R.call_dps_packed("f", (x, w), R.Tensor((m, 4), "float32"))
            R.output(y)
        return y

    out = BindParams("main", {"w": w})(IRModule({"main": main}))
    func = out["main"]
    assert [p.name_hint for p in func.params] == ["x"]
    text = func.script()
    assert "R.Tensor((3, 4), dtype=\"float32\")" in text  # m replaced by 3
    assert "metadata" in text or "R.const" in text


def test_bind_params_fixes_a_dimension_of_a_parameter_left_unbound():
    # binding w (n, m) fixes m, which the unbound x (1, m) also uses: x becomes a new Var
    # of shape (1, 4), and every use of x in the body must be that new Var
    @R.function
    def main(x: R.Tensor((1, "m"), "float32"), w: R.Tensor(("n", "m"), "float32")):
        m, n = T.int64(), T.int64()
        with R.dataflow():
            y = R.call_dps_packed("ext", (x, w), R.Tensor((1, n), "float32"))
            R.output(y)
        return y

    w = np.ones((3, 4), "float32")
    out = BindParams("main", {"w": w})(IRModule({"main": main}))

    @R.function
    def expected(x: R.Tensor((1, 4), "float32")) -> R.Tensor((1, 3), "float32"):
        with R.dataflow():
            y = R.call_dps_packed("ext", (x, R.const(w)), R.Tensor((1, 3), "float32"))
            R.output(y)
        return y

    assert_structural_equal(out["main"], expected.with_attr("global_symbol", "main"))


def test_bind_params_errors():
    mod = IRModule({"main": Mod["main"]})
    with pytest.raises(KeyError, match="no parameter 'w'.*parameters are: x"):
        BindParams("main", {"w": np.ones(2)})(mod)
    with pytest.raises(KeyError, match="no function 'nope'"):
        BindParams("nope", {})(mod)
    with pytest.raises(ValueError, match="dimension 1 of parameter 'x' is 4"):
        BindParams("main", {"x": np.ones((2, 5), "float32")})(mod)
    with pytest.raises(TypeError, match="annotated float32"):
        BindParams("main", {"x": np.ones((2, 4), "float64")})(mod)


def test_passes_compose_in_sequential_and_print():
    seq = relax.vm_lowering_pipeline()
    assert [p.name for p in seq] == ["LegalizeOps", "ToNonDataflow", "CallTIRRewrite", "StaticPlanBlockMemory",
                                     "LowerAllocTensor", "VMShapeLower"]
    out = seq(Mod)
    assert "vm.builtin.match_shape" in out.script()
