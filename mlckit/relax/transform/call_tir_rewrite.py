"""``CallTIRRewrite``: make the outputs of ``call_tir`` / ``call_dps_packed`` explicit (as
TVM's ``relax.transform.CallTIRRewrite``).

::

    lv0 = R.call_tir(cls.linear0, (x, w, b), out_sinfo=R.Tensor((n, 128), "float32"))

becomes::

    alloc = R.builtin.alloc_tensor(R.shape([n, 128]), R.dtype("float32"), R.prim_value(0),
                                   R.str("global"))
    _ = cls.linear0(x, w, b, alloc)
    lv0 = alloc

and ``R.call_dps_packed("env.relu", (x,), ...)`` becomes ``R.call_packed("env.relu", x,
alloc)``.  A ``call_tir`` with ``tir_vars`` becomes ``R.vm.call_tir_dyn``.
"""

from __future__ import annotations

from mlckit.error import TVMTypeError
from mlckit.ir.op import Op
from mlckit.ir.transform import ModulePass, PassInfo

from ..expr import Call, DataTypeImm, PrimValue, ShapeExpr, StringImm, Tuple
from ..expr_functor import ExprMutator
from ..struct_info import TensorStructInfo, TupleStructInfo

_DPS = ("relax.call_tir", "relax.call_dps_packed", "relax.call_tir_inplace")
VOID = TupleStructInfo([])


class _CallTIRRewriter(ExprMutator):
    def visit_call_(self, call: Call):
        call = super().visit_call_(call)
        if not (isinstance(call.op, Op) and call.op.name in _DPS):
            return call
        out = call.struct_info
        fields = out.fields if isinstance(out, TupleStructInfo) else [out]
        inplace = call.op.name == "relax.call_tir_inplace"
        indices = list(_attr(call.attrs, "inplace_indices", [])) if inplace else []
        in_args = call.args[1]
        outs = []
        for i, sinfo in enumerate(fields):
            if not isinstance(sinfo, TensorStructInfo) or not isinstance(sinfo.shape, ShapeExpr):
                raise TVMTypeError(f"{call.op.name}: every output needs a tensor struct info with a "
                                f"known shape, got {sinfo!r}")
            if inplace and int(indices[i]) != -1:
                outs.append(in_args.fields[int(indices[i])])
                continue
            alloc = Call(Op.get("relax.builtin.alloc_tensor"),
                         [sinfo.shape, DataTypeImm(sinfo.dtype), PrimValue(0), StringImm("global")])
            outs.append(self.emit(alloc, "alloc"))
        new_outs = [o for i, o in enumerate(outs) if not inplace or int(indices[i]) == -1]
        if isinstance(in_args, Tuple):
            args = list(in_args.fields) + new_outs
            if len(call.args) == 3:  # tir_vars: unpacked by the VM
                args.append(call.args[2])
                callee = Call(Op.get("relax.vm.call_tir_dyn"), [call.args[0], Tuple(args)])
            else:
                callee = Call(call.args[0], args)
        else:
            callee = Call(call.args[0], [in_args, *new_outs])
        callee.__dict__["struct_info_"] = VOID
        self.emit(callee, "_")
        return outs[0] if len(outs) == 1 else Tuple(outs)


def _attr(attrs, name, default):
    if attrs is None:
        return default
    if isinstance(attrs, dict):
        return attrs.get(name, default)
    return getattr(attrs, name, default)


def CallTIRRewrite() -> ModulePass:  # noqa: N802 - TVM's name
    """The pass allocating the outputs of destination-passing calls explicitly.

    Example::

        mod = CallTIRRewrite()(ToNonDataflow()(mod))
    """
    return ModulePass(lambda mod, ctx: _CallTIRRewriter().transform_module(mod),
                      PassInfo(0, "CallTIRRewrite"))
