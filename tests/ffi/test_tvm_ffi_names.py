"""mlckit.ffi answers for tvm_ffi: structural comparison, the registry's newer names and the
container types, as course code and TVM's tutorials use them."""

import numpy as np
import pytest

import mlckit
import mlckit.ffi as tvm_ffi
from mlckit.script import ir as I
from mlckit.script import tir as T


def _module(scale: float):
    @I.ir_module
    class Module:
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    B[vi] = A[vi] * T.float32(scale)

    return Module


def test_structural_equal_compares_modules_up_to_variable_names():
    assert tvm_ffi.structural_equal(_module(2.0), _module(2.0))
    assert not tvm_ffi.structural_equal(_module(2.0), _module(3.0))
    assert tvm_ffi.structural_equal([1, 2, 3], [1, 2, 3])
    assert not tvm_ffi.structural_equal([1, 2, 3], [1, 2, 4])


def test_structural_hash_agrees_with_structural_equal():
    assert tvm_ffi.structural_hash(_module(2.0)) == tvm_ffi.structural_hash(_module(2.0))
    assert tvm_ffi.structural_hash(_module(2.0)) == mlckit.ir.structural_hash(_module(2.0))
    assert tvm_ffi.structural_hash(_module(2.0)) != tvm_ffi.structural_hash(_module(3.0))


def test_register_global_func_and_get_global_func():
    @tvm_ffi.register_global_func("test.ffi.twice", override=True)
    def twice(x):
        return 2 * x

    assert tvm_ffi.get_global_func("test.ffi.twice")(21) == 42
    assert isinstance(tvm_ffi.get_global_func("test.ffi.twice"), tvm_ffi.Function)
    tvm_ffi.remove_global_func("test.ffi.twice")
    assert tvm_ffi.get_global_func("test.ffi.twice", allow_missing=True) is None


def test_a_compiled_kernel_is_a_function():
    lib = mlckit.compile(_module(2.0), target="llvm")
    f = lib["main"]
    assert isinstance(f, tvm_ffi.Function)
    b = np.zeros(8, "float32")
    f(np.arange(8, dtype="float32"), b)
    np.testing.assert_allclose(b, 2 * np.arange(8))
    assert not isinstance(int, tvm_ffi.Function)  # a class is not a function
    with pytest.raises(mlckit.TVMError, match="expects a callable, got int"):
        tvm_ffi.Function(3)


def test_array_map_and_shape_are_the_plain_values():
    assert tvm_ffi.Array([1, 2]) == (1, 2)
    assert isinstance((1, 2), tvm_ffi.Array) and isinstance([1], tvm_ffi.Array)
    assert tvm_ffi.Map({"a": 1}) == {"a": 1} and isinstance({"a": 1}, tvm_ffi.Map)
    shape = tvm_ffi.Shape([2, 3])
    assert shape == (2, 3) and repr(shape) == "Shape([2, 3])"
    assert not isinstance(shape, tvm_ffi.Array)


def test_the_vm_returns_shapes_and_tuples_as_tvm_ffi_types():
    from mlckit import relax
    from mlckit.script import relax as R

    @I.ir_module
    class Mod:
        @R.function
        def main(x: R.Tensor((2, 3), "float32")):
            return (x, R.shape_of(x))

    vm = relax.VirtualMachine(relax.build(Mod, target="llvm"), mlckit.cpu())
    out = vm["main"](np.ones((2, 3), "float32"))
    assert isinstance(out, tvm_ffi.Array)
    assert isinstance(out[1], tvm_ffi.Shape) and tuple(out[1]) == (2, 3)
