"""``R.vm.*``: VM-level allocation and calls (as ``relax.op.vm``).

Example::

    storage = R.vm.alloc_storage(R.shape([512]), R.prim_value(0), R.dtype("uint8"))
    t = R.vm.alloc_tensor(storage, R.prim_value(0), R.shape([1, 128]), R.dtype("float32"))
    R.vm.call_tir_dyn(cls.kernel, (x, t, R.shape([n])))
"""

from __future__ import annotations

from mlckit.ir.op import Op, register_op

from ..expr import Call, Tuple
from ..struct_info import ObjectStructInfo, TupleStructInfo
from ._memory_common import as_dtype, as_int, as_shape, tensor_sinfo
from .base import StructInfoError, _as_expr


def alloc_storage(size, runtime_device_index=0, dtype="uint8", storage_scope="global") -> Call:
    """Allocate ``size`` bytes of storage on device ``runtime_device_index``."""
    what = "R.vm.alloc_storage"
    return Call(Op.get("relax.vm.alloc_storage"),
                [as_shape(size, what), as_int(runtime_device_index, what), as_dtype(dtype, what)])


def alloc_tensor(storage, offset, shape, dtype) -> Call:
    """A tensor at byte ``offset`` of ``storage``."""
    what = "R.vm.alloc_tensor"
    return Call(Op.get("relax.vm.alloc_tensor"),
                [storage, as_int(offset, what), as_shape(shape, what), as_dtype(dtype, what)])


def kill_object(obj) -> Call:
    """Drop the VM's reference to ``obj`` (impure)."""
    return Call(Op.get("relax.vm.kill_object"), [obj])


def call_tir_dyn(func, args) -> Call:
    """Call a PrimFunc whose last argument is a shape of its symbolic variables."""
    if isinstance(args, (list, tuple)):
        args = Tuple([_as_expr(a, "R.vm.call_tir_dyn") for a in args])
    return Call(Op.get("relax.vm.call_tir_dyn"), [func, args])


def _infer_alloc_tensor(call: Call):
    if len(call.args) != 4:
        raise StructInfoError("R.vm.alloc_tensor takes (storage, offset, shape, dtype), got "
                              f"{len(call.args)} arguments")
    return tensor_sinfo(call.args[2], call.args[3], "R.vm.alloc_tensor")


_VOID = TupleStructInfo([])
register_op("relax.vm.alloc_storage", num_inputs=3, FInferStructInfo=lambda c: ObjectStructInfo(),
            FPurity=True)
register_op("relax.vm.alloc_tensor", num_inputs=4, FInferStructInfo=_infer_alloc_tensor,
            FPurity=True)
register_op("relax.vm.kill_object", num_inputs=1, FInferStructInfo=lambda c: _VOID, FPurity=False)
register_op("relax.vm.call_tir_dyn", num_inputs=2, FInferStructInfo=lambda c: _VOID, FPurity=False)

__all__ = ["alloc_storage", "alloc_tensor", "call_tir_dyn", "kill_object"]
