"""``R.memory.*``: storage and tensors carved out of storage (as ``relax.op.memory``).

``StaticPlanBlockMemory`` turns planned allocations into::

    storage = R.memory.alloc_storage(R.shape([512]), R.prim_value(0), R.str("global"),
                                     R.dtype("float32"))
    alloc = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([1, 128]),
                                  R.dtype("float32"))

The storage size is in bytes.
"""

from __future__ import annotations

from mlckit.ir.op import Op, register_op

from ..expr import Call
from ..struct_info import ObjectStructInfo, TupleStructInfo
from ._memory_common import as_dtype, as_int, as_shape, as_str, tensor_sinfo
from .base import StructInfoError


def alloc_storage(size, virtual_device_index=0, storage_scope="global", dtype="float32") -> Call:
    """Allocate ``size`` bytes of storage (an ``R.Object``).

    Example::

        storage = R.memory.alloc_storage(R.shape([32]), 0, "global", "float32")
    """
    what = "R.memory.alloc_storage"
    return Call(Op.get("relax.memory.alloc_storage"),
                [as_shape(size, what), as_int(virtual_device_index, what),
                 as_str(storage_scope, what), as_dtype(dtype, what)])


def alloc_tensor(storage, offset, shape, dtype) -> Call:
    """A tensor of ``shape``/``dtype`` placed at byte ``offset`` of ``storage``.

    Example::

        t = R.memory.alloc_tensor(storage, 0, R.shape([2, 4]), "float32")
    """
    what = "R.memory.alloc_tensor"
    return Call(Op.get("relax.memory.alloc_tensor"),
                [storage, as_int(offset, what), as_shape(shape, what), as_dtype(dtype, what)])


def kill_storage(storage) -> Call:
    """Release ``storage`` (impure)."""
    return Call(Op.get("relax.memory.kill_storage"), [storage])


def kill_tensor(tensor) -> Call:
    """Release ``tensor`` (impure)."""
    return Call(Op.get("relax.memory.kill_tensor"), [tensor])


def _infer_alloc_storage(call: Call):
    if len(call.args) != 4:
        raise StructInfoError("R.memory.alloc_storage takes (size, virtual_device_index, "
                              f"storage_scope, dtype), got {len(call.args)} arguments")
    return ObjectStructInfo()


def _infer_alloc_tensor(call: Call):
    if len(call.args) != 4:
        raise StructInfoError("R.memory.alloc_tensor takes (storage, offset, shape, dtype), got "
                              f"{len(call.args)} arguments")
    return tensor_sinfo(call.args[2], call.args[3], "R.memory.alloc_tensor")


register_op("relax.memory.alloc_storage", num_inputs=4, FInferStructInfo=_infer_alloc_storage,
            FPurity=True)
register_op("relax.memory.alloc_tensor", num_inputs=4, FInferStructInfo=_infer_alloc_tensor,
            FPurity=True)
register_op("relax.memory.kill_storage", num_inputs=1,
            FInferStructInfo=lambda call: TupleStructInfo([]), FPurity=False)
register_op("relax.memory.kill_tensor", num_inputs=1,
            FInferStructInfo=lambda call: TupleStructInfo([]), FPurity=False)

__all__ = ["alloc_storage", "alloc_tensor", "kill_storage", "kill_tensor"]
