"""Does an ``R.call_tir`` fit the PrimFunc it calls? (TVM's ``FValidate`` of ``relax.call_tir``)

A PrimFunc called in destination-passing style takes, in order: the inputs the call passes,
one buffer per output (``out_sinfo``), then the integer parameters given by ``tir_vars``.
``call_tir_mismatch(call, prim_func, name)`` compares the call with that signature, as TVM
does: argument count, each input's dtype, rank and constant dims (the PrimFunc's symbolic
dims are bound from the inputs, ``n`` → the caller's ``m``), and the output struct info
implied by the output buffers.  Only what can never hold is reported — a dim that is only
known at run time is left to the kernel's own argument check.

Example::

    msg = call_tir_mismatch(call, mod["relu"], "relu")
    # "R.call_tir passes 3 inputs to 'relu', which takes 2 parameters (A, B) ..."
"""

from __future__ import annotations

from mlckit.tir import expr as tx
from mlckit.tir.function import PrimFunc

from ..struct_info import (
    ObjectStructInfo,
    PrimStructInfo,
    ShapeStructInfo,
    StructInfo,
    TensorStructInfo,
    TupleStructInfo,
)
from .struct_info import (
    _match,
    collect_tir_vars,
    describe_prim,
    describe_struct_info,
    substitute_tir_vars,
)


def prim_func_params(func: PrimFunc) -> list[tuple[str, StructInfo]]:
    """(name, struct info) of each parameter: a buffer is a tensor, a scalar a prim value."""
    out = []
    for p in func.params:
        buf = func.buffer_map.get(p)
        if buf is not None:
            dims = [tx.IntImm("int64", int(d.value)) if isinstance(d, tx.IntImm) else d
                    for d in buf.shape]
            out.append((buf.name, TensorStructInfo(dims, buf.dtype)))
        elif p.dtype == "handle":
            out.append((p.name_hint, ObjectStructInfo()))
        else:
            out.append((p.name_hint, PrimStructInfo(p.dtype)))
    return out


def _names(params) -> str:
    return ", ".join(n for n, _ in params)


def call_tir_mismatch(call, func: PrimFunc, name: str) -> str | None:
    """Why ``call`` (an ``R.call_tir``) cannot call ``func``; None when it may."""
    params = prim_func_params(func)
    args_sinfo = call.args[1].struct_info
    if not isinstance(args_sinfo, TupleStructInfo):
        return None  # reported by the op's own struct-info check
    inputs = list(args_sinfo.fields)
    n_int = 0
    tir_values = None
    if len(call.args) > 2:
        shape = call.args[2].struct_info
        if not isinstance(shape, ShapeStructInfo) or shape.ndim < 0:
            return None
        n_int, tir_values = shape.ndim, shape.values
    n_out = len(params) - len(inputs) - n_int
    extra = f" and {n_int} tir_vars" if n_int else ""
    if not params:
        return f"R.call_tir passes {len(inputs)} input{'s' if len(inputs) != 1 else ''}{extra} " \
               f"to {name!r}, which takes no parameters: it has nowhere to write an output"
    if n_out < 1:
        return (f"R.call_tir passes {len(inputs)} input{'s' if len(inputs) != 1 else ''}{extra} "
                f"to {name!r}, which takes {len(params)} parameter"
                f"{'s' if len(params) != 1 else ''} ({_names(params)}): a PrimFunc called with "
                "R.call_tir takes the inputs first, then one buffer per output, so at most "
                f"{len(params) - n_int - 1} input{'s' if len(params) - n_int - 1 != 1 else ''} "
                "can be passed")
    mapping: dict = {}
    for k, ((pname, psinfo), arg) in enumerate(zip(params, inputs)):
        if not _match(psinfo, arg, mapping, strict=True):
            return (f"input {k} of R.call_tir is {describe_struct_info(arg)}, but parameter "
                    f"{pname!r} of {name!r} is {describe_struct_info(psinfo)}")
    if tir_values is not None:
        for (_, _), value, p in zip(params[-n_int:], tir_values, func.params[-n_int:]):
            mapping.setdefault(p, value)
    outs = params[len(inputs):len(params) - n_int]
    explicit = call.sinfo_args[0]
    given = list(explicit.fields) if isinstance(explicit, TupleStructInfo) else [explicit]
    if len(given) != len(outs):
        return (f"R.call_tir's out_sinfo describes {len(given)} output"
                f"{'s' if len(given) != 1 else ''}, but {name!r} has {len(outs)} output "
                f"parameter{'s' if len(outs) != 1 else ''} ({_names(outs)}) after the "
                f"{len(inputs)} input{'s' if len(inputs) != 1 else ''} passed; its parameters "
                f"are ({_names(params)})")
    for (pname, psinfo), out in zip(outs, given):
        implied = substitute_tir_vars(psinfo, mapping)
        caller = {id(v) for v in mapping.values()}
        why = _output_mismatch(implied, out, caller)
        if why is not None:
            return (f"R.call_tir's out_sinfo {describe_struct_info(out)} does not fit output "
                    f"parameter {pname!r} of {name!r}, which is "
                    f"{describe_struct_info(psinfo)}{_given_inputs(mapping, psinfo)}: {why}")
    return None


def _given_inputs(mapping: dict, psinfo) -> str:
    bound = [v for v in collect_tir_vars(psinfo) if v in mapping]
    if not bound:
        return ""
    return " here (" + ", ".join(f"{v.name_hint} = {describe_prim(mapping[v])}"
                                 for v in bound) + ", from the inputs)"


def _output_mismatch(implied: StructInfo, given: StructInfo, caller: set) -> str | None:
    """What makes ``given`` (the out_sinfo) impossible for the buffer ``implied``."""
    if not isinstance(implied, TensorStructInfo):
        return None
    if not isinstance(given, TensorStructInfo):
        return "an output must be a tensor"
    if implied.dtype and given.dtype and implied.dtype != given.dtype:
        return f"the dtype is {given.dtype}, the buffer's is {implied.dtype}"
    if given.ndim != -1 and given.ndim != implied.ndim:
        return f"the rank is {given.ndim}, the buffer's is {implied.ndim}"
    if implied.dims is None or given.dims is None:
        return None
    for axis, (a, b) in enumerate(zip(implied.dims, given.dims)):
        if isinstance(a, tx.IntImm) and isinstance(b, tx.IntImm):
            if int(a.value) != int(b.value):
                return f"dimension {axis} is {int(b.value)}, the buffer's is {int(a.value)}"
        elif isinstance(a, tx.Var) and a is not b and id(a) in caller and \
                isinstance(b, (tx.IntImm, tx.Var)):
            shown = int(b.value) if isinstance(b, tx.IntImm) else b.name_hint
            return f"dimension {axis} is {shown}, the buffer's is {a.name_hint}"
    return None

