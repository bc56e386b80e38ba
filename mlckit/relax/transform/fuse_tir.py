"""``FuseTIR``: turn every fused (``Primitive``) Relax function into one PrimFunc (as TVM's
``relax.transform.FuseTIR``).

For a primitive function such as ``FuseOps`` makes::

    @R.function(private=True)
    def fused_dense_add_relu(x, param_0, param_1):
        R.func_attr({"Primitive": True})
        with R.dataflow():
            lv = R.call_tir(cls.dense, (x, param_0), ...)
            lv1 = R.call_tir(cls.add, (lv, param_1), ...)
            gv = R.call_tir(cls.relu, (lv1,), ...)
            R.output(gv)
        return gv

the PrimFunc ``fused_dense_add_relu`` takes one buffer per tensor parameter (``x``,
``param_0``, ``param_1``), then one per output, then the symbolic variables; its root block
allocates the intermediate results (``T_matmul_NT_intermediate``, ``T_add_intermediate``)
and runs the bodies of ``dense``, ``add`` and ``relu`` one after the other, reading and
writing those buffers (block names made unique).  Callers get
``R.call_tir(cls.fused_dense_add_relu, (x, w0, b0), out_sinfo=...)``; kernels nothing calls
any more are removed.

The pass is TVM's sequence ``ExpandTupleArguments`` (tuple parameters passed by field),
``RemoveUnusedParameters``, the fusion itself, and ``DeadCodeElimination``.

Example::

    mod = relax.transform.FuseTIR()(relax.transform.FuseOps()(mod))
"""

from __future__ import annotations

from mlckit.error import TVMNotImplementedError, TVMTypeError
from mlckit.ir.module import GlobalVar, IRModule
from mlckit.ir.op import Op
from mlckit.ir.transform import ModulePass, PassInfo, Sequential
from mlckit.tir import expr as tx
from mlckit.tir import stmt as S
from mlckit.tir.buffer import Buffer, decl_buffer
from mlckit.tir.function import PrimFunc
from mlckit.tir.stmt_functor import renew_defs

from ..expr import (
    Call,
    Constant,
    Function,
    MatchCast,
    SeqExpr,
    ShapeExpr,
    Tuple,
    TupleGetItem,
    Var,
)
from ..expr_functor import ExprMutator
from ..struct_info import (
    FuncStructInfo,
    ObjectStructInfo,
    PrimStructInfo,
    ShapeStructInfo,
    TensorStructInfo,
    TupleStructInfo,
)
from .dead_code_elimination import DeadCodeElimination
from .expand_tuple_arguments import ExpandTupleArguments
from .fuse_tir_buffers import (
    BufferSubstitutor,
    FuseTIRError,
    SymbolicMatcher,
    deduplicate_block_names,
)
from .remove_unused_parameters import RemoveUnusedParameters

_CALL_TIR = ("relax.call_tir", "relax.call_tir_inplace")


# -- one primitive function -> one PrimFunc ------------------------------------------------------------
class _FusedTIRConstructor:
    """Build the PrimFunc of one primitive Relax function (TVM's FusedTIRConstructor)."""

    def __init__(self, mod: IRModule, name: str):
        self.mod = mod
        self.name = name
        self.expr2buffers: dict[int, list] = {}
        self.keep: list = []
        self.alloc_buffers: list = []
        self.bodies: list = []
        self.params: list = []
        self.buffer_map: dict = {}
        self.buffer_subst: dict[int, Buffer] = {}
        self.subst_pairs: list = []
        self.output_buffers: set[int] = set()
        self.var_remap: dict[int, tuple] = {}
        self.matcher = SymbolicMatcher(self.var_remap)
        self.global_name = "fused"
        self.inplace_indices: list[int] = []

    def _set(self, expr, buffers: list) -> None:
        self.expr2buffers[id(expr)] = buffers
        self.keep.append(expr)

    def construct(self, func: Function) -> PrimFunc:
        param_buffers = self._param_buffer_templates(func)
        prim_params: list = []
        for p in func.params:
            start = len(prim_params)
            self._collect_params(p, prim_params, param_buffers.get(id(p)))
            self._set(p, [x for x in prim_params[start:] if isinstance(x, Buffer)])
        # buffers first, scalars (symbolic variables) after them; stable, as TVM
        prim_params.sort(key=lambda x: isinstance(x, tx.Var))
        for x in prim_params:
            if isinstance(x, Buffer):
                handle = tx.Var(f"p_{x.name}", "handle")
                self.params.append(handle)
                self.buffer_map[handle] = x
        if not isinstance(func.body, SeqExpr):
            raise FuseTIRError(f"FuseTIR: the body of {self.name!r} must be a sequence of "
                               "bindings")
        for block in func.body.blocks:
            for binding in block.bindings:
                self._binding(binding)
        body = func.body.body
        self._value(body)
        outputs = self.expr2buffers.get(id(body))
        if outputs is None:
            raise FuseTIRError(f"FuseTIR: cannot find the buffers {self.name!r} returns")
        inputs = {id(b): i for i, b in enumerate(self.buffer_map.values())}
        n_out = 0
        for buf in outputs:
            if id(buf) in inputs:
                raise TVMNotImplementedError(
                    f"FuseTIR: {self.name!r} returns its input {buf.name!r}: that needs "
                    "R.call_tir_inplace, which mlckit does not have yet")
            handle = tx.Var(f"p_output{n_out}", "handle")
            n_out += 1
            self.params.append(handle)
            self.buffer_map[handle] = buf
            self.output_buffers.add(id(buf))
        self.params += [x for x in prim_params if isinstance(x, tx.Var)]
        self.matcher.check()
        return self._construct_func()

    # -- parameters ---------------------------------------------------------------------------------
    def _param_buffer_templates(self, func: Function) -> dict[int, Buffer]:
        """Relax parameter -> the kernel buffer it is passed to (for its scope)."""
        out: dict[int, Buffer] = {}
        for block in func.body.blocks if isinstance(func.body, SeqExpr) else []:
            for binding in block.bindings:
                call = binding.value
                if not _is_call_tir(call):
                    continue
                prim = self.mod[call.args[0]]
                for arg, param in zip(call.args[1].fields, prim.params):
                    buf = prim.buffer_map.get(param)
                    if isinstance(arg, Var) and buf is not None:
                        out.setdefault(id(arg), buf)
        return out

    def _collect_params(self, param: Var, out: list, template: Buffer | None) -> None:
        sinfo = param.struct_info
        if isinstance(sinfo, TupleStructInfo):
            raise FuseTIRError(f"FuseTIR: parameter {param.name_hint!r} of {self.name!r} is a "
                               "tuple; ExpandTupleArguments should have expanded it")
        if isinstance(sinfo, TensorStructInfo):
            if sinfo.dims is None:
                raise FuseTIRError(f"FuseTIR: parameter {param.name_hint!r} of {self.name!r} "
                                   "needs a known shape")
            scope = template.scope if template is not None else "global"
            seps = template.axis_separators if template is not None else None
            out.append(decl_buffer(sinfo.dims, sinfo.dtype, param.name_hint, scope=scope,
                                   axis_separators=seps))
        elif isinstance(sinfo, PrimStructInfo) and isinstance(sinfo.value, tx.Var):
            out.append(sinfo.value)
        elif isinstance(sinfo, ShapeStructInfo) and sinfo.values is not None and all(
                isinstance(v, tx.Var) for v in sinfo.values):
            out.extend(sinfo.values)
        else:
            raise FuseTIRError(f"FuseTIR: parameter {param.name_hint!r} of {self.name!r} must be "
                               "a tensor, an R.Prim or an R.Shape of symbolic variables")

    # -- the body ---------------------------------------------------------------------------------
    def _binding(self, binding) -> None:
        if isinstance(binding, MatchCast):
            raise FuseTIRError(f"FuseTIR: R.match_cast is not supported in the primitive "
                               f"function {self.name!r}")
        self._value(binding.value)
        buffers = self.expr2buffers.get(id(binding.value))
        if buffers is None:
            raise FuseTIRError(f"FuseTIR: unsupported binding {binding.var.name_hint!r} in "
                               f"{self.name!r}: only R.call_tir, tuples and tuple items")
        self._set(binding.var, buffers)

    def _value(self, value) -> None:
        if isinstance(value, Constant):
            raise FuseTIRError(f"FuseTIR: a relax.Constant inside the primitive function "
                               f"{self.name!r}; pass it as an argument")
        if isinstance(value, Tuple):
            buffers = []
            for f in value.fields:
                self._value(f)
                buffers += self.expr2buffers.get(id(f), [])
            if buffers:
                self._set(value, buffers)
        elif isinstance(value, TupleGetItem):
            self._value(value.tuple_value)
            buffers = self.expr2buffers.get(id(value.tuple_value))
            if buffers is not None:
                fields = value.tuple_value.struct_info.fields
                begin = sum(_count_tensors(f) for f in fields[:value.index])
                self._set(value, buffers[begin:begin + _count_tensors(fields[value.index])])
        elif isinstance(value, Call):
            for a in value.args:
                if not isinstance(a, (Var, Tuple)):
                    continue
                self._value(a)
            self._call(value)

    def _call(self, call: Call) -> None:
        if not _is_call_tir(call):
            raise FuseTIRError(f"FuseTIR: only R.call_tir is supported in the primitive function "
                               f"{self.name!r}, got a call of {_callee_name(call)}")
        if call.op.name == "relax.call_tir_inplace":
            raise TVMNotImplementedError("FuseTIR: R.call_tir_inplace is not supported by mlckit")
        gv = call.args[0]
        prim = renew_defs(self.mod[gv])
        body = prim.body
        if not (isinstance(body, S.BlockRealize) and body.block.name_hint == "root"):
            raise FuseTIRError(f"FuseTIR: kernel {gv.name_hint!r} is not schedulable (its body "
                               "is not a root block) and cannot be fused")
        root = body.block
        self.alloc_buffers += root.alloc_buffers
        self.bodies.append(root.body)
        args = call.args[1].fields
        if len(prim.params) < len(args):
            raise FuseTIRError(f"FuseTIR: kernel {gv.name_hint!r} takes {len(prim.params)} "
                               f"parameters but is called with {len(args)} arguments")
        # inputs: the kernel's buffers become the buffers of the values passed
        targets = []
        for arg in args:
            targets += self.expr2buffers.get(id(arg), []) if isinstance(arg, Var) else []
        sources = [prim.buffer_map[p] for p in prim.params[:len(args)]]
        if len(targets) != len(sources):
            raise FuseTIRError(f"FuseTIR: the arguments of {gv.name_hint!r} in {self.name!r} must "
                               "be parameters or results of earlier kernels")
        for src, tgt in zip(sources, targets):
            self.matcher.match_all(src.shape, tgt.shape, f"buffer {src.name!r} of "
                                   f"{gv.name_hint!r}")
            self._substitute(src, tgt)
        # outputs: intermediate buffers, shaped as the call's struct info says
        shapes = _output_shapes(call, self.name)
        out_params = prim.params[len(args):len(args) + len(shapes)]
        outputs = []
        for param, shape in zip(out_params, shapes):
            buf = prim.buffer_map[param]
            names = {b.name for b in self.alloc_buffers}
            name = f"{buf.name}_intermediate"
            k = 0
            while name in names:
                k += 1
                name = f"{name}_{k}"
            new = buf.replace(shape=list(shape), name=name)
            self.alloc_buffers.append(new)
            outputs.append(new)
            self.matcher.match_all(buf.shape, shape, f"output {buf.name!r} of {gv.name_hint!r}")
            self._substitute(buf, new)
        self._set(call, outputs)
        if len(call.args) > 2:
            tir_vars = call.args[2]
            if not isinstance(tir_vars, ShapeExpr):
                raise FuseTIRError("FuseTIR: the tir_vars of R.call_tir must be an R.shape")
            scalars = prim.params[len(prim.params) - len(tir_vars.values):]
            for p, v in zip(scalars, tir_vars.values):
                self.matcher.match(p, v, f"symbolic argument of {gv.name_hint!r}")
        self.global_name += "_" + gv.name_hint

    def _substitute(self, src: Buffer, tgt: Buffer) -> None:
        self.buffer_subst[id(src)] = tgt
        self.subst_pairs.append((src, tgt))

    def _construct_func(self) -> PrimFunc:
        var_map = {k: v for k, (_, v) in self.var_remap.items()}
        subst = BufferSubstitutor(self.buffer_subst, var_map)
        subst.add_data_vars(self.subst_pairs)
        allocs = [subst.allocated(b) for b in self.alloc_buffers
                  if id(b) not in self.output_buffers]
        body = deduplicate_block_names(S.stmt_seq(*self.bodies))
        body = subst.stmt(body)
        root = S.Block([], [], [], "root", body, None, allocs)
        realize = S.BlockRealize([], tx.IntImm("bool", 1), root)
        func = PrimFunc(self.params, realize, None, self.buffer_map, {"tir.noalias": True})
        return renew_defs(func)


def _count_tensors(sinfo) -> int:
    if isinstance(sinfo, TensorStructInfo):
        return 1
    if isinstance(sinfo, TupleStructInfo):
        return sum(_count_tensors(f) for f in sinfo.fields)
    raise FuseTIRError(f"FuseTIR: expected tensors or tuples of tensors, got {sinfo!r}")


def _output_shapes(call: Call, name: str) -> list:
    sinfo = call.sinfo_args[0]
    fields = sinfo.fields if isinstance(sinfo, TupleStructInfo) else [sinfo]
    shapes = []
    for f in fields:
        if not (isinstance(f, TensorStructInfo) and f.dims is not None):
            raise FuseTIRError(f"FuseTIR: every R.call_tir output in {name!r} needs a tensor "
                               "struct info with a known shape")
        shapes.append(f.dims)
    return shapes


def _is_call_tir(expr) -> bool:
    return isinstance(expr, Call) and isinstance(expr.op, Op) and expr.op.name in _CALL_TIR


def _callee_name(call: Call) -> str:
    op = call.op
    return getattr(op, "name", None) or getattr(op, "name_hint", None) or type(op).__name__


# -- rewriting the callers ------------------------------------------------------------------------
class _TIRFuseMutator(ExprMutator):
    """Calls of primitive functions become ``R.call_tir`` of their fused PrimFuncs."""

    def __init__(self, replacements: dict[str, tuple[GlobalVar, Function]]):
        super().__init__()
        self.replacements = replacements

    def visit_call_(self, call: Call):
        call = super().visit_call_(call)
        if not isinstance(call.op, GlobalVar) or call.op.name_hint not in self.replacements:
            return call
        new_gv, func = self.replacements[call.op.name_hint]
        args, tir_vars = [], []
        for i, arg in enumerate(call.args):
            sinfo = arg.struct_info
            if isinstance(sinfo, TupleStructInfo) or isinstance(func.params[i].struct_info,
                                                               TupleStructInfo):
                raise FuseTIRError(f"FuseTIR: argument {i} of the call of "
                                   f"{call.op.name_hint!r} is a tuple; ExpandTupleArguments "
                                   "should have expanded it")
            if isinstance(sinfo, ShapeStructInfo):
                if sinfo.values is None or not all(isinstance(v, tx.Var) for v in sinfo.values):
                    raise FuseTIRError("FuseTIR: shape arguments must be symbolic variables")
                tir_vars += sinfo.values
            elif isinstance(sinfo, PrimStructInfo):
                if not isinstance(sinfo.value, tx.Var):
                    raise FuseTIRError("FuseTIR: R.Prim arguments must be a symbolic variable")
                tir_vars.append(sinfo.value)
            else:
                args.append(arg)
        from ..op.base import call_tir

        out = call.struct_info
        fields = out.fields if isinstance(out, TupleStructInfo) else [out]
        if not all(isinstance(f, TensorStructInfo) for f in fields):
            raise TVMTypeError(f"FuseTIR: {call.op.name_hint!r} must return tensors")
        return call_tir(new_gv, args, fields if isinstance(out, TupleStructInfo) else out,
                        tir_vars or None)


def fuse_tir_inner(mod: IRModule) -> IRModule:
    """The fusion step alone (see the module doc).

    Example::

        mod = fuse_tir_inner(FuseOps()(mod))
    """
    primitive = [(gv, f) for gv, f in mod.functions.items()
                 if isinstance(f, Function) and f.attrs.get("Primitive")]
    if not primitive:
        return mod
    out = IRModule({}, dict(mod.attrs), dict(mod.global_infos))
    replacements: dict[str, tuple[GlobalVar, Function]] = {}
    fused: dict[str, tuple[GlobalVar, PrimFunc]] = {}
    for gv, func in primitive:
        prim = _FusedTIRConstructor(mod, gv.name_hint).construct(func)
        new_gv = GlobalVar(gv.name_hint)
        new_gv.struct_info_ = FuncStructInfo.opaque_func(ObjectStructInfo(), purity=True)
        replacements[gv.name_hint] = (new_gv, func)
        fused[gv.name_hint] = (new_gv, prim)
    mutator = _TIRFuseMutator(replacements)
    for gv, func in mod.functions.items():
        if gv.name_hint in fused:
            new_gv, prim = fused[gv.name_hint]
            out.functions[new_gv] = prim
        elif isinstance(func, Function):
            out.functions[gv] = mutator.visit_expr(func)
        else:
            out.functions[gv] = func
    return out


def FuseTIR() -> Sequential:  # noqa: N802 - TVM's name
    """The pass fusing primitive Relax functions into PrimFuncs (see the module doc).

    Example::

        mod = FuseTIR()(FuseOps()(AnnotateTIROpPattern()(mod)))
    """
    inner = ModulePass(lambda mod, ctx: fuse_tir_inner(mod), PassInfo(0, "FuseTIRInner"))
    return Sequential([ExpandTupleArguments(), RemoveUnusedParameters(), inner,
                       DeadCodeElimination()], name="FuseTIR")


__all__ = ["FuseTIR", "FuseTIRError", "fuse_tir_inner"]
