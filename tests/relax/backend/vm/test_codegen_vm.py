"""Relax -> VM bytecode (mlckit/relax/backend/vm/codegen_vm.py, as TVM's relax/backend/vm):
the bytecode of a lowered function, and the missing lowering step named when it refuses."""

import pytest

from mlckit import relax
from mlckit.relax.backend.vm import VMCodegenError, codegen
from mlckit.runtime.vm import ExecBuilder
from mlckit.script import ir as I
from mlckit.script import relax as R


@I.ir_module
class Identity:
    @R.function
    def main(x: R.Tensor((2, 3), "float32")) -> R.Tensor((2, 3), "float32"):
        return x


@I.ir_module
class Add:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")):
        z = R.add(x, y)
        return z


def bytecode(mod) -> str:
    builder = ExecBuilder()
    codegen(builder, mod)
    return builder.get().as_text()


def test_a_lowered_function_checks_its_argument_and_returns_its_register():
    assert bytecode(relax.vm_lowering_pipeline()(Identity)) == (
        "@main:\n"
        "  call  vm.builtin.check_tensor_info in: %0, i2, c[0], c[1] dst: %void\n"
        "  call  vm.builtin.match_shape in: %0, %void, i2, i0, i2, i0, i3, c[1] dst: %void\n"
        "  call  vm.builtin.check_tensor_info in: %0, i2, c[0], c[2] dst: %void\n"
        "  call  vm.builtin.match_shape in: %0, %void, i2, i0, i2, i0, i3, c[2] dst: %void\n"
        "  ret   %0\n\n"
        "@vm.builtin.check_tensor_info packed_func;\n\n"
        "@vm.builtin.match_shape packed_func;\n\n")


def test_a_kernel_call_writes_into_storage_the_vm_allocates():
    lines = bytecode(relax.vm_lowering_pipeline()(Add)).splitlines()
    assert lines[5:8] == [
        "  call  vm.builtin.alloc_storage in: %vm, c[3], i0, c[0], c[4] dst: %2",
        "  call  vm.builtin.alloc_tensor in: %2, i0, c[5], c[0] dst: %3",
        "  call  add              in: %0, %1, %3   dst: %void",
    ]


def test_an_operator_not_legalized_is_refused_with_the_pass_to_run():
    with pytest.raises(VMCodegenError, match=r"main: the operator relax\.add has no VM "
                                             r"lowering; legalize it to TIR first"):
        bytecode(Add)


def test_a_call_tir_not_lowered_is_refused_with_the_passes_to_run():
    with pytest.raises(VMCodegenError, match=r"main: relax\.call_tir must be lowered before "
                                             r"codegen \(run CallTIRRewrite"):
        bytecode(relax.transform.LegalizeOps()(Add))
