"""Generic visitors and mutators over Relax expressions.

Two layers:

- ``ExprVisitor`` / ``ExprMutator``: light walkers used by mlckit's own passes (below);
- ``PyExprVisitor`` / ``PyExprMutator`` with the ``visitor`` / ``mutator`` decorators
  (``py_expr_functor``, re-exported here): TVM's user-facing API on top of them; the mutator rebuilds through a ``relax.BlockBuilder``
  (``self.builder_``), normalizing as it goes (see ``PyExprMutator``).

Dispatch is by node class through one table (``VISIT_METHODS``): a ``Call`` goes to
``visit_call_``, a ``DataflowVar`` to ``visit_dataflow_var_`` (falling back to the method of
its base class, ``visit_var_``).  Override only the methods you need.

``ExprMutator`` rebuilds nodes bottom-up (a node whose children did not change is kept as
is) and has a small builder: ``self.emit(value, "alloc")`` inserts a new binding before the
one being visited, in the current block.

Example::

    class CountCalls(ExprVisitor):
        def __init__(self):
            super().__init__()
            self.n = 0
        def visit_call_(self, call):
            self.n += 1
            super().visit_call_(call)

    class ReluToGelu(ExprMutator):
        def visit_call_(self, call):
            call = super().visit_call_(call)
            ...
            return call
"""

from __future__ import annotations

from mlckit.error import TVMError, TVMTypeError
from mlckit.ir.module import GlobalVar, IRModule
from mlckit.ir.op import Op

from .expr import (
    Binding,
    BindingBlock,
    Call,
    Constant,
    DataflowBlock,
    DataflowVar,
    DataTypeImm,
    Expr,
    ExternFunc,
    Function,
    If,
    MatchCast,
    PrimValue,
    SeqExpr,
    ShapeExpr,
    StringImm,
    Tuple,
    TupleGetItem,
    Var,
    VarBinding,
)

#: node class -> method name; subclasses fall back along their MRO.
VISIT_METHODS: dict[type, str] = {
    Constant: "visit_constant_", Tuple: "visit_tuple_", Var: "visit_var_",
    DataflowVar: "visit_dataflow_var_", ShapeExpr: "visit_shape_expr_",
    ExternFunc: "visit_extern_func_", GlobalVar: "visit_global_var_", Function: "visit_function_",
    Call: "visit_call_", SeqExpr: "visit_seq_expr_", If: "visit_if_", Op: "visit_op_",
    TupleGetItem: "visit_tuple_getitem_", PrimValue: "visit_prim_value_",
    StringImm: "visit_string_imm_", DataTypeImm: "visit_data_type_imm_",
}
BINDING_METHODS: dict[type, str] = {VarBinding: "visit_var_binding_", MatchCast: "visit_match_cast_"}
BLOCK_METHODS: dict[type, str] = {BindingBlock: "visit_binding_block_",
                                  DataflowBlock: "visit_dataflow_block_"}

_CACHE: dict[tuple[int, type], str] = {}


def _method_name(table: dict, cls: type) -> str:
    key = (id(table), cls)
    name = _CACHE.get(key)
    if name is None:
        for base in cls.__mro__:
            if base in table:
                name = table[base]
                break
        else:
            raise TVMTypeError(f"no visitor method for {cls.__name__}: it is not a Relax node")
        _CACHE[key] = name
    return name


def returned_expr(functor, method: str, expr: Expr, new):
    """``new``, the result of ``functor.method(expr)``, refused when it is None: caught here,
    or the next operator would report a missing argument instead."""
    if new is None:
        text = str(expr)
        text = text if len(text) <= 80 else text[:77] + "..."
        raise TVMTypeError(
            f"{type(functor).__name__}.{method} returned None for `{text}`: a mutator's visit "
            f"method returns the new expression (return the node itself to keep it)")
    return new


class ExprVisitor:
    """Walk a Relax expression; every ``visit_*_`` visits the children by default."""

    def visit_expr(self, expr) -> None:
        getattr(self, _method_name(VISIT_METHODS, type(expr)))(expr)

    def visit_binding(self, binding: Binding) -> None:
        getattr(self, _method_name(BINDING_METHODS, type(binding)))(binding)

    def visit_binding_block(self, block: BindingBlock) -> None:
        getattr(self, _method_name(BLOCK_METHODS, type(block)))(block)

    # -- leaves -----------------------------------------------------------------------
    def visit_constant_(self, op: Constant) -> None:
        pass

    def visit_var_(self, op: Var) -> None:
        pass

    def visit_dataflow_var_(self, op: DataflowVar) -> None:
        self.visit_var_(op)

    def visit_global_var_(self, op: GlobalVar) -> None:
        pass

    def visit_extern_func_(self, op: ExternFunc) -> None:
        pass

    def visit_op_(self, op: Op) -> None:
        pass

    def visit_prim_value_(self, op: PrimValue) -> None:
        pass

    def visit_string_imm_(self, op: StringImm) -> None:
        pass

    def visit_data_type_imm_(self, op: DataTypeImm) -> None:
        pass

    def visit_shape_expr_(self, op: ShapeExpr) -> None:
        pass

    # -- composites ---------------------------------------------------------------------
    def visit_tuple_(self, op: Tuple) -> None:
        for f in op.fields:
            self.visit_expr(f)

    def visit_tuple_getitem_(self, op: TupleGetItem) -> None:
        self.visit_expr(op.tuple_value)

    def visit_call_(self, op: Call) -> None:
        self.visit_expr(op.op)
        for a in op.args:
            self.visit_expr(a)

    def visit_if_(self, op: If) -> None:
        self.visit_expr(op.cond)
        self.visit_expr(op.true_branch)
        self.visit_expr(op.false_branch)

    def visit_function_(self, op: Function) -> None:
        for p in op.params:
            self.visit_var_def(p)
        self.visit_expr(op.body)

    def visit_seq_expr_(self, op: SeqExpr) -> None:
        for block in op.blocks:
            self.visit_binding_block(block)
        self.visit_expr(op.body)

    # -- bindings -------------------------------------------------------------------------
    def visit_binding_block_(self, block: BindingBlock) -> None:
        for b in block.bindings:
            self.visit_binding(b)

    def visit_dataflow_block_(self, block: DataflowBlock) -> None:
        self.visit_binding_block_(block)

    def visit_var_binding_(self, binding: VarBinding) -> None:
        self.visit_expr(binding.value)
        self.visit_var_def(binding.var)

    def visit_match_cast_(self, binding: MatchCast) -> None:
        self.visit_expr(binding.value)
        self.visit_var_def(binding.var)

    def visit_var_def(self, var: Var) -> None:
        """Called where ``var`` is defined (a parameter or a binding)."""


class ExprMutator:
    """Rebuild a Relax expression bottom-up; override ``visit_*_`` to change nodes.

    Variables: ``self.var_remap`` maps a Var (by identity) to its replacement; uses of the
    Var are replaced.  Inside a block, ``self.emit(value, name)`` adds a binding before the
    binding being visited and returns its new Var.
    """

    def __init__(self, mod: IRModule | None = None):
        self.mod = mod
        self.var_remap: dict[int, Expr] = {}
        self._blocks: list[tuple[list, bool]] = []  # (bindings being built, is_dataflow)
        self._names: dict[str, int] = {}

    # -- builder ------------------------------------------------------------------------
    def emit(self, value: Expr, name_hint: str = "lv") -> Var:
        """Bind ``value`` to a fresh variable in the current block and return the variable."""
        if not self._blocks:
            raise TVMError("ExprMutator.emit needs a binding block being visited")
        bindings, dataflow = self._blocks[-1]
        sinfo = value.struct_info
        var = (DataflowVar if dataflow else Var)(name_hint, sinfo)
        bindings.append(VarBinding(var, value))
        return var

    def emit_binding(self, binding: Binding) -> None:
        """Append ``binding`` to the current block."""
        self._blocks[-1][0].append(binding)

    # -- dispatch -------------------------------------------------------------------------
    def visit_expr(self, expr):
        method = _method_name(VISIT_METHODS, type(expr))
        return returned_expr(self, method, expr, getattr(self, method)(expr))

    def visit_binding(self, binding: Binding) -> None:
        getattr(self, _method_name(BINDING_METHODS, type(binding)))(binding)

    def visit_binding_block(self, block: BindingBlock) -> BindingBlock:
        return getattr(self, _method_name(BLOCK_METHODS, type(block)))(block)

    # -- leaves ---------------------------------------------------------------------------
    def visit_var_(self, op: Var) -> Expr:
        return self.var_remap.get(id(op), op)

    def visit_dataflow_var_(self, op: DataflowVar) -> Expr:
        return self.visit_var_(op)

    def _leaf(self, op):
        return op

    visit_constant_ = visit_global_var_ = visit_extern_func_ = visit_op_ = _leaf
    visit_prim_value_ = visit_string_imm_ = visit_data_type_imm_ = visit_shape_expr_ = _leaf

    # -- composites ---------------------------------------------------------------------
    def visit_tuple_(self, op: Tuple) -> Expr:
        fields = [self.visit_expr(f) for f in op.fields]
        return op if _same(fields, op.fields) else Tuple(fields, span=op.span)

    def visit_tuple_getitem_(self, op: TupleGetItem) -> Expr:
        tup = self.visit_expr(op.tuple_value)
        return op if tup is op.tuple_value else TupleGetItem(tup, op.index, span=op.span)

    def visit_call_(self, op: Call) -> Expr:
        callee = self.visit_expr(op.op)
        args = [self.visit_expr(a) for a in op.args]
        if callee is op.op and _same(args, op.args):
            return op
        return Call(callee, args, op.attrs, list(op.sinfo_args), span=op.span)

    def visit_if_(self, op: If) -> Expr:
        cond = self.visit_expr(op.cond)
        then = self.visit_with_new_scope(op.true_branch)
        other = self.visit_with_new_scope(op.false_branch)
        if cond is op.cond and then is op.true_branch and other is op.false_branch:
            return op
        return If(cond, then, other, span=op.span)

    def visit_with_new_scope(self, expr: Expr) -> Expr:
        """Visit a branch or function body (bindings emitted there stay there)."""
        saved = self._blocks
        self._blocks = []
        try:
            return self.visit_expr(expr)
        finally:
            self._blocks = saved

    def visit_function_(self, op: Function) -> Expr:
        params = [self.visit_var_def(p) for p in op.params]
        body = self.visit_with_new_scope(op.body)
        if _same(params, op.params) and body is op.body:
            return op
        return op.replace(params=params, body=body)

    def visit_seq_expr_(self, op: SeqExpr) -> Expr:
        blocks = [self.visit_binding_block(b) for b in op.blocks]
        blocks = [b for b in blocks if b.bindings]
        body = self.visit_expr(op.body)
        if body is not op.body and not isinstance(body, Var) and _needs_binding(body):
            # keep the body a leaf (normal form): bind it in a trailing block
            var = Var("gv", body.struct_info)
            blocks.append(BindingBlock([VarBinding(var, body)]))
            body = var
        if _same(blocks, op.blocks) and body is op.body:
            return op
        return SeqExpr(blocks, body, span=op.span)

    # -- bindings -------------------------------------------------------------------------
    def visit_binding_block_(self, block: BindingBlock) -> BindingBlock:
        out: list = []
        self._blocks.append((out, isinstance(block, DataflowBlock)))
        try:
            for b in block.bindings:
                self.visit_binding(b)
        finally:
            self._blocks.pop()
        if _same(out, block.bindings):
            return block
        return type(block)(out, span=block.span)

    def visit_dataflow_block_(self, block: DataflowBlock) -> BindingBlock:
        return self.visit_binding_block_(block)

    def visit_var_binding_(self, binding: VarBinding) -> None:
        value = self.visit_expr(binding.value)
        var = self.visit_var_def(binding.var)
        if value is binding.value and var is binding.var:
            self.emit_binding(binding)
        else:
            self.emit_binding(VarBinding(var, value, span=binding.span))

    def visit_match_cast_(self, binding: MatchCast) -> None:
        value = self.visit_expr(binding.value)
        var = self.visit_var_def(binding.var)
        if value is binding.value and var is binding.var:
            self.emit_binding(binding)
        else:
            self.emit_binding(MatchCast(var, value, binding.struct_info, span=binding.span))

    def visit_var_def(self, var: Var) -> Var:
        """A variable where it is defined; returns the (possibly new) variable."""
        new = self.var_remap.get(id(var), var)
        return new if isinstance(new, Var) else var

    # -- modules ------------------------------------------------------------------------
    def transform_module(self, mod: IRModule) -> IRModule:
        """Apply this mutator to every Relax function of ``mod`` (a new module)."""
        self.mod = mod
        out = mod.copy()
        for gv, func in list(mod.functions.items()):
            if isinstance(func, Function):
                out.functions[gv] = self.visit_expr(func)
        return out


def _same(new: list, old: list) -> bool:
    return len(new) == len(old) and all(a is b for a, b in zip(new, old))


def _needs_binding(expr) -> bool:
    from .analysis import is_leaf

    return not (is_leaf(expr) or isinstance(expr, Tuple))


# TVM's user-facing functors, built on the walkers above (relax.expr_functor is their path)
from .py_expr_functor import PyExprMutator, PyExprVisitor, mutator, visitor  # noqa: E402, F401
