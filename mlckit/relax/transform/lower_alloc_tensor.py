"""``LowerAllocTensor``: the allocations left unplanned by ``StaticPlanBlockMemory``
(``R.builtin.alloc_tensor``) become a storage and a tensor in it (as TVM's
``relax.transform.LowerAllocTensor``)::

    alloc = R.builtin.alloc_tensor(R.shape([n, 10]), R.dtype("float32"), R.prim_value(0),
                                   R.str("global"))

becomes::

    storage = R.memory.alloc_storage(R.shape([n * 40]), R.prim_value(0), R.str("global"),
                                     R.dtype("float32"))
    alloc = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([n, 10]),
                                  R.dtype("float32"))
"""

from __future__ import annotations

from mlckit.error import TVMTypeError
from mlckit.ir.op import Op
from mlckit.ir.transform import ModulePass, PassInfo
from mlckit.tir import expr as tx

from ..expr import Call, DataTypeImm, PrimValue, ShapeExpr
from ..expr_functor import ExprMutator
from .static_plan_block_memory import _bytes


class _Lower(ExprMutator):
    def visit_call_(self, call: Call):
        call = super().visit_call_(call)
        if not (isinstance(call.op, Op) and call.op.name == "relax.builtin.alloc_tensor"):
            return call
        shape, dtype, device, scope = call.args
        if not (isinstance(shape, ShapeExpr) and isinstance(dtype, DataTypeImm)):
            raise TVMTypeError("LowerAllocTensor needs R.builtin.alloc_tensor with a literal shape "
                            "and dtype")
        size = _bytes(list(shape.values), dtype.value)
        if isinstance(size, int):
            size = tx.IntImm("int64", size)
        storage = self.emit(Call(Op.get("relax.memory.alloc_storage"),
                                 [ShapeExpr([size]), device, scope, dtype]), "storage")
        return Call(Op.get("relax.memory.alloc_tensor"), [storage, PrimValue(0), shape, dtype],
                    span=call.span)


def LowerAllocTensor() -> ModulePass:  # noqa: N802 - TVM's name
    """The pass lowering ``R.builtin.alloc_tensor`` to storage + tensor.

    Example::

        mod = LowerAllocTensor()(StaticPlanBlockMemory()(mod))
    """
    return ModulePass(lambda mod, ctx: _Lower().transform_module(mod),
                      PassInfo(0, "LowerAllocTensor"))
