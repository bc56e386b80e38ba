"""``VMShapeLower``: runtime checks of struct infos and computation of symbolic shapes (as
TVM's ``relax.backend.vm.VMShapeLower``).

Every symbolic value a function needs (``n``, ``n * 512`` …) gets a *slot* in a per-call
int64 array, the *shape heap*.  The pass then makes the shape logic explicit:

- at entry, the heap is allocated and each parameter is checked against its annotation:
  ``vm.builtin.check_tensor_info`` (kind, rank, dtype) and ``vm.builtin.match_shape``, whose
  codes say per dimension: assert equal to a constant (0), store into a heap slot (1,
  the first time a variable is seen), nothing (2), assert equal to a slot (3);
- composite values (``n * 512``) are computed by a generated TIR function ``shape_func``
  that reads and writes the heap;
- shapes and prim values with symbolic parts become ``vm.builtin.make_shape`` /
  ``vm.builtin.make_prim_value`` calls reading the heap (make-shape codes: 0 immediate,
  1 load from slot);
- ``R.match_cast`` becomes the same checks, and the return value is checked last.

The error-context strings (``ErrorContext(fn=main, loc=param[0], param=x, annotation=...)``)
travel to the builtins, which use them to say which function, parameter and dimension
failed.

Example::

    mod = VMShapeLower()(mod)
"""

from __future__ import annotations

from mlckit.error import TVMValueError
from mlckit.ir.module import GlobalVar, IRModule
from mlckit.ir.structural import structural_equal, structural_hash
from mlckit.ir.transform import ModulePass, PassInfo
from mlckit.tir import expr as tx
from mlckit.tir.buffer import decl_buffer
from mlckit.tir.function import PrimFunc
from mlckit.tir.stmt import BufferStore, stmt_seq

from ..analysis.struct_info import collect_tir_vars, describe_struct_info
from ..expr import (
    BindingBlock,
    Call,
    ExternFunc,
    Function,
    MatchCast,
    PrimValue,
    SeqExpr,
    ShapeExpr,
    StringImm,
    TupleGetItem,
    Var,
    VarBinding,
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

# vm.builtin.match_shape codes (TVM's MatchShapeCode)
ASSERT_EQUAL_TO_IMM, STORE_TO_HEAP, NO_OP, ASSERT_EQUAL_TO_LOAD = 0, 1, 2, 3
# vm.builtin.make_shape codes (TVM's MakeShapeCode)
USE_IMM, LOAD_SHAPE = 0, 1

VOID = TupleStructInfo([])


def _packed(name: str, args: list, sinfo=None) -> Call:
    call = Call(ExternFunc(name), args, None, [sinfo] if sinfo is not None else [])
    call.__dict__["struct_info_"] = sinfo if sinfo is not None else VOID
    return call


def _int(v: int) -> PrimValue:
    return PrimValue(tx.IntImm("int64", int(v)))


class _Slots:
    """Slots of the shape heap: one per distinct symbolic PrimExpr."""

    def __init__(self):
        self.exprs: list = []
        self._index: dict[int, list[int]] = {}

    def find(self, expr) -> int | None:
        for i in self._index.get(structural_hash(expr, map_free_vars=False), []):
            if self.exprs[i] is expr or structural_equal(self.exprs[i], expr):
                return i
        return None

    def add(self, expr) -> int:
        i = self.find(expr)
        if i is None:
            if not isinstance(expr, tx.Var):
                for v in collect_tir_vars(expr):
                    self.add(v)
            i = len(self.exprs)
            self.exprs.append(expr)
            self._index.setdefault(structural_hash(expr), []).append(i)
        return i


def _collect(obj, slots: _Slots) -> None:
    """Add every non-constant PrimExpr dim / value found in ``obj`` to ``slots``."""
    if isinstance(obj, tx.PrimExpr):
        if not isinstance(obj, tx.IntImm) and not isinstance(obj, tx.FloatImm):
            slots.add(obj)
        return
    if isinstance(obj, TensorStructInfo):
        if obj.dims is not None:
            for d in obj.dims:
                _collect(d, slots)
        return
    if isinstance(obj, ShapeStructInfo):
        for d in obj.values or []:
            _collect(d, slots)
        return
    if isinstance(obj, PrimStructInfo):
        if obj.value is not None:
            _collect(obj.value, slots)
        return
    if isinstance(obj, TupleStructInfo):
        for f in obj.fields:
            _collect(f, slots)
        return
    if isinstance(obj, ShapeExpr):
        for d in obj.values:
            _collect(d, slots)
        return
    if isinstance(obj, PrimValue):
        _collect(obj.value, slots)
        return


class _Collector:
    def __init__(self, slots: _Slots):
        self.slots = slots

    def walk(self, expr) -> None:
        from mlckit.ir.node import Node

        if isinstance(expr, (ShapeExpr, PrimValue)):
            _collect(expr, self.slots)
            return
        if isinstance(expr, MatchCast):
            _collect(expr.struct_info, self.slots)
        if isinstance(expr, (Function,)) and expr is not self.root:
            return
        if isinstance(expr, (TensorStructInfo, ShapeStructInfo, PrimStructInfo, TupleStructInfo,
                             FuncStructInfo, ObjectStructInfo, tx.PrimExpr)):
            return
        if isinstance(expr, Node):
            for name in type(expr).field_names():
                self.walk(getattr(expr, name))
        elif isinstance(expr, (list, tuple)):
            for x in expr:
                self.walk(x)


class _ShapeLower(ExprMutator):
    def __init__(self, mod: IRModule, out: IRModule):
        super().__init__(mod)
        self.out = out

    # -- per function ---------------------------------------------------------------------
    def rewrite(self, gv: GlobalVar, func: Function) -> Function:
        self.fn = gv.name_hint
        self.slots = _Slots()
        for p in func.params:
            _collect(p.struct_info_, self.slots)
        if func.ret_struct_info is not None:
            _collect(func.ret_struct_info, self.slots)
        collector = _Collector(self.slots)
        collector.root = func
        collector.walk(func.body)
        self.defined: set[int] = set()  # computed slots
        entry: list = []
        self._blocks = [(entry, False)]
        if self.slots.exprs:
            names = ", ".join(_slot_name(e) for e in self.slots.exprs)
            heap_call = Call(_op("relax.call_builtin_with_ctx"),
                             [ExternFunc("vm.builtin.alloc_shape_heap"),
                              _tuple([_int(len(self.slots.exprs)), StringImm(names)])],
                             None, [TensorStructInfo(None, "int64", 1)])
            self.heap = self.emit(heap_call, "shape_heap")
        else:
            self.heap = None
        todos: list = []
        for i, p in enumerate(func.params):
            ctx = (f"ErrorContext(fn={self.fn}, loc=param[{i}], param={p.name_hint}, "
                   f"annotation={describe_struct_info(p.struct_info_)})")
            self.check(p.struct_info_, p, ctx, todos)
        self.run_matches(todos)
        self._blocks = []
        body = func.body
        new_body = self.visit_with_new_scope(body)
        if not isinstance(new_body, SeqExpr):
            new_body = SeqExpr([], new_body)
        ret_block: list = []
        self._blocks = [(ret_block, False)]
        if func.ret_struct_info is not None:
            todos = []
            ctx = (f"ErrorContext(fn={self.fn}, loc=return, "
                   f"annotation={describe_struct_info(func.ret_struct_info)})")
            self.check(func.ret_struct_info, new_body.body, ctx, todos)
            self.run_matches(todos)
        self._blocks = []
        blocks = [BindingBlock(entry)] if entry else []
        blocks += list(new_body.blocks)
        if ret_block:
            blocks.append(BindingBlock(ret_block))
        return func.replace(body=SeqExpr(blocks, new_body.body))

    # -- checks -----------------------------------------------------------------------------
    def check(self, sinfo, value, ctx: str, todos: list) -> None:
        """Emit the kind/rank/dtype check of ``value`` and queue its shape matches."""
        if isinstance(sinfo, TensorStructInfo):
            self.emit(_packed("vm.builtin.check_tensor_info",
                              [value, _int(sinfo.ndim), _dtype(sinfo.dtype), StringImm(ctx)]), "_")
            if sinfo.dims is not None:
                todos.append((value, list(sinfo.dims), ctx))
        elif isinstance(sinfo, ShapeStructInfo):
            self.emit(_packed("vm.builtin.check_shape_info",
                              [value, _int(sinfo.ndim), StringImm(ctx)]), "_")
            if sinfo.values is not None:
                todos.append((value, list(sinfo.values), ctx))
        elif isinstance(sinfo, PrimStructInfo):
            self.emit(_packed("vm.builtin.check_prim_value_info",
                              [value, _dtype(sinfo.dtype), StringImm(ctx)]), "_")
            if sinfo.value is not None and not isinstance(sinfo.value, (tx.IntImm, tx.FloatImm)):
                todos.append((value, [sinfo.value], ctx + " [prim value]"))
        elif isinstance(sinfo, TupleStructInfo):
            self.emit(_packed("vm.builtin.check_tuple_info",
                              [value, _int(len(sinfo.fields)), StringImm(ctx)]), "_")
            for i, f in enumerate(sinfo.fields):
                if isinstance(f, ObjectStructInfo):
                    continue
                item = TupleGetItem(value, i)
                item.__dict__["struct_info_"] = f
                item_var = self.emit(item, "_")
                self.check(f, item_var, f"{ctx[:-1]}, field={i})", todos)
        elif isinstance(sinfo, FuncStructInfo):
            self.emit(_packed("vm.builtin.check_func_info", [value, StringImm(ctx)]), "_")

    def run_matches(self, todos: list) -> None:
        remaining = self._match(todos, require_all=False)
        self.emit_outstanding()
        if remaining:
            self._match(remaining, require_all=True)

    def _match(self, todos: list, require_all: bool) -> list:
        remaining = []
        for value, dims, ctx in todos:
            args = []
            pending = False
            for d in dims:
                if isinstance(d, tx.IntImm):
                    args += [_int(ASSERT_EQUAL_TO_IMM), _int(d.value)]
                    continue
                slot = self.slots.add(d)
                if slot in self.defined:
                    args += [_int(ASSERT_EQUAL_TO_LOAD), _int(slot)]
                elif isinstance(d, tx.Var):
                    args += [_int(STORE_TO_HEAP), _int(slot)]
                    self.defined.add(slot)
                elif require_all:
                    raise TVMValueError(f"{self.fn}: cannot compute the shape value "
                                     f"{_slot_name(d)}: a variable it uses is never defined")
                else:
                    args += [_int(NO_OP), _int(0)]
                    pending = True
            if ctx.endswith("[prim value]"):
                self.emit(_packed("vm.builtin.match_prim_value",
                                  [value, self._heap_arg(), *args, StringImm(ctx[:-13])]), "_")
            else:
                self.emit(_packed("vm.builtin.match_shape",
                                  [value, self._heap_arg(), _int(len(dims)), *args,
                                   StringImm(ctx)]), "_")
            if pending:
                remaining.append((value, dims, ctx))
        return remaining

    def _heap_arg(self):
        if self.heap is None:
            call = Call(_op("relax.null_value"), [])
            return call
        return self.heap

    def emit_outstanding(self) -> None:
        """Compute (in one generated TIR function) every composite slot now computable."""
        todo = []
        for i, e in enumerate(self.slots.exprs):
            if i in self.defined or isinstance(e, tx.Var):
                continue
            deps = [self.slots.find(v) for v in collect_tir_vars(e)]
            if all(d is not None and d in self.defined for d in deps):
                todo.append(i)
        if not todo:
            return
        size = len(self.slots.exprs)
        handle = tx.Var("H", "handle")
        buf = decl_buffer([tx.IntImm("int64", size)], "int64", "H")
        stores = []
        for i in todo:
            mapping = {v: buf[tx.IntImm("int64", self.slots.find(v))]
                       for v in collect_tir_vars(self.slots.exprs[i])}
            from ..analysis.struct_info import substitute_tir_vars

            value = substitute_tir_vars(self.slots.exprs[i], mapping)
            stores.append(BufferStore(buf, value, [tx.IntImm("int64", i)]))
            self.defined.add(i)
        func = PrimFunc([handle], stmt_seq(*stores), None, {handle: buf},
                        {"tir.is_host_func": True})
        name = _unique_name(self.out, "shape_func")
        gv = GlobalVar(name)
        gv.struct_info_ = FuncStructInfo.opaque_func(ObjectStructInfo(), purity=True)
        self.out.functions[gv] = func.with_attr("global_symbol", name)
        call = Call(gv, [self.heap])
        call.__dict__["struct_info_"] = VOID
        self.emit(call, "_")

    # -- body -------------------------------------------------------------------------------
    def visit_shape_expr_(self, op: ShapeExpr):
        if all(isinstance(v, tx.IntImm) for v in op.values):
            return op
        args = []
        for v in op.values:
            if isinstance(v, tx.IntImm):
                args += [_int(USE_IMM), _int(v.value)]
            else:
                args += [_int(LOAD_SHAPE), _int(self._slot_of(v))]
        call = _packed("vm.builtin.make_shape",
                       [self.heap, _int(len(op.values)), *args],
                       ShapeStructInfo(ndim=len(op.values)))
        return self.emit(call, "shape")

    def visit_prim_value_(self, op: PrimValue):
        v = op.value
        if isinstance(v, (tx.IntImm, tx.FloatImm)):
            return op
        call = _packed("vm.builtin.make_prim_value",
                       [self.heap, _int(LOAD_SHAPE), _int(self._slot_of(v))],
                       PrimStructInfo(v.dtype))
        return self.emit(call, "prim")

    def _slot_of(self, v) -> int:
        slot = self.slots.find(v)
        if slot is None or slot not in self.defined:
            raise TVMValueError(f"{self.fn}: the symbolic value {_slot_name(v)} is used before it is "
                             "defined (by a parameter annotation or R.match_cast)")
        return slot

    def visit_match_cast_(self, binding: MatchCast) -> None:
        value = self.visit_expr(binding.value)
        todos: list = []
        ctx = (f"ErrorContext(fn={self.fn}, loc=match_cast, var={binding.var.name_hint}, "
               f"annotation={describe_struct_info(binding.struct_info)})")
        self.check(binding.struct_info, value, ctx, todos)
        self.run_matches(todos)
        self.emit_binding(VarBinding(binding.var, value, span=binding.span))

    def visit_function_(self, op: Function):
        return op  # nested functions are not lowered here (no closures in mlckit's VM)


def _slot_name(e) -> str:
    from ..analysis.struct_info import describe_prim

    return describe_prim(e)


def _dtype(dtype: str):
    from ..expr import DataTypeImm

    return DataTypeImm(dtype or "")


def _tuple(fields):
    from ..expr import Tuple

    return Tuple(fields)


def _op(name):
    from mlckit.ir.op import Op

    return Op.get(name)


def _unique_name(mod: IRModule, base: str) -> str:
    names = {gv.name_hint for gv in mod.functions}
    if base not in names:
        return base
    i = 1
    while f"{base}{i}" in names:
        i += 1
    return f"{base}{i}"


def _run(mod: IRModule, ctx) -> IRModule:
    out = mod.copy()
    for gv, func in list(mod.functions.items()):
        if isinstance(func, Function):
            out.functions[gv] = _ShapeLower(mod, out).rewrite(gv, func)
    return out


def VMShapeLower(emit_err_ctx: bool = True) -> ModulePass:  # noqa: N802 - TVM's name
    """The pass making shape checks and symbolic shape computation explicit.

    Example::

        mod = VMShapeLower()(LowerAllocTensor()(mod))
    """
    return ModulePass(_run, PassInfo(0, "VMShapeLower"))


__all__ = ["VMShapeLower"]
_ = Var
