"""``R.builtin.*``: runtime allocation before memory planning (as ``relax.op.builtin``).

``CallTIRRewrite`` makes the output of every ``call_tir`` / ``call_dps_packed`` explicit::

    alloc = R.builtin.alloc_tensor(R.shape([n, 128]), R.dtype("float32"), R.prim_value(0),
                                   R.str("global"))

``call_builtin_with_ctx`` calls a VM builtin that also receives the VM itself (TVM's
``R.call_builtin_with_ctx``), e.g. the shape heap allocation of ``VMShapeLower``.
"""

from __future__ import annotations

from mlckit.error import TVMTypeError
from mlckit.ir.op import Op, register_op

from ..expr import Call, Expr, ExternFunc, Tuple
from ..struct_info import ObjectStructInfo
from ._memory_common import as_dtype, as_int, as_shape, as_str, tensor_sinfo
from .base import StructInfoError, _as_expr, _sinfo_args


def alloc_tensor(shape, dtype, runtime_device_index=0, storage_scope="global") -> Call:
    """Allocate a tensor of ``shape`` and ``dtype`` (lowered later to storage + tensor).

    Example::

        alloc = R.builtin.alloc_tensor(R.shape([2, 4]), "float32", 0)
    """
    what = "R.builtin.alloc_tensor"
    return Call(Op.get("relax.builtin.alloc_tensor"),
                [as_shape(shape, what), as_dtype(dtype, what),
                 as_int(runtime_device_index, what), as_str(storage_scope, what)])


def _infer_alloc_tensor(call: Call):
    if len(call.args) != 4:
        raise StructInfoError("R.builtin.alloc_tensor takes (shape, dtype, runtime_device_index, "
                              f"storage_scope), got {len(call.args)} arguments")
    return tensor_sinfo(call.args[0], call.args[1], "R.builtin.alloc_tensor")


def call_builtin_with_ctx(func, args, sinfo_args=None) -> Call:
    """Call the VM builtin ``func`` (a name) with the VM as hidden first argument.

    Example::

        heap = R.call_builtin_with_ctx("vm.builtin.alloc_shape_heap", (R.prim_value(2),),
                                       sinfo_args=R.Tensor(ndim=1, dtype="int64"))
    """
    if isinstance(func, str):
        func = ExternFunc(func)
    if isinstance(args, (list, tuple)):
        args = Tuple([_as_expr(a, "R.call_builtin_with_ctx") for a in args])
    elif not isinstance(args, Expr):
        raise TVMTypeError("R.call_builtin_with_ctx expects its arguments as a tuple")
    return Call(Op.get("relax.call_builtin_with_ctx"), [func, args], None, _sinfo_args(sinfo_args))


def _infer_call_builtin(call: Call):
    return call.sinfo_args[0] if call.sinfo_args else ObjectStructInfo()


register_op("relax.builtin.alloc_tensor", num_inputs=4, FInferStructInfo=_infer_alloc_tensor,
            FPurity=True)
register_op("relax.call_builtin_with_ctx", num_inputs=2, FInferStructInfo=_infer_call_builtin,
            FPurity=False)

__all__ = ["alloc_tensor", "call_builtin_with_ctx"]
