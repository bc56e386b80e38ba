"""Generic visitors and mutators over Relax expressions.

Two layers:

- ``ExprVisitor`` / ``ExprMutator``: light walkers used by mlckit's own passes (below);
- ``PyExprVisitor`` / ``PyExprMutator`` with the ``visitor`` / ``mutator`` decorators: TVM's
  user-facing API on top of them; the mutator rebuilds through a ``relax.BlockBuilder``
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
        return getattr(self, _method_name(VISIT_METHODS, type(expr)))(expr)

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


# -- TVM's Python-side functors ------------------------------------------------------------------
class PyExprVisitor(ExprVisitor):
    """The visitor users subclass, as TVM's ``relax.PyExprVisitor`` (decorate the subclass
    with ``@relax.expr_functor.visitor``).  Definition sites go through ``visit_var_def``,
    which dispatches to ``visit_var_def_`` / ``visit_dataflow_var_def_``.

    Example::

        @relax.expr_functor.visitor
        class CallCounter(relax.PyExprVisitor):
            def __init__(self):
                self.calls = 0
            def visit_call_(self, op):
                self.calls += 1
                super().visit_call_(op)
    """

    def visit_var_def(self, var: Var) -> None:
        if isinstance(var, DataflowVar):
            self.visit_dataflow_var_def_(var)
        else:
            self.visit_var_def_(var)

    def visit_var_def_(self, var: Var) -> None:
        """Called where a Var is defined (a parameter or the left side of a binding)."""

    def visit_dataflow_var_def_(self, var: DataflowVar) -> None:
        """Called where a DataflowVar is defined."""

    def visit_span(self, span) -> None:
        """Spans carry no structure; nothing to visit."""


class PyExprMutator(ExprMutator):
    """The mutator users subclass, as TVM's ``relax.PyExprMutator`` (decorate the subclass
    with ``@relax.expr_functor.mutator``).

    It rebuilds through its own ``relax.BlockBuilder``, ``self.builder_``: every visited
    expression is normalized (struct info deduced, nested calls bound), every binding is
    re-emitted in the block being rebuilt, so ``self.lookup_binding(var)`` finds the value
    of a variable bound earlier, and ``self.builder_.add_func`` / ``update_func`` / ``get``
    collect the functions of the module being produced.

    Example (the course's pattern, with a call_tir rewrite)::

        @relax.expr_functor.mutator
        class FuseMulAdd(relax.PyExprMutator):
            def visit_call_(self, call):
                call = self.visit_expr_post_order(call)
                producer = self.lookup_binding(call.args[1][0])
                ...
                return relax.op.call_tir(fused_gv, args, call.struct_info)

        new_main = FuseMulAdd(mod).visit_expr(mod["main"])
    """

    def __init__(self, mod: IRModule | None = None):
        super().__init__(mod)
        from .block_builder import BlockBuilder

        self.builder_ = BlockBuilder(mod)

    # -- dispatch: every result is normalized ---------------------------------------------
    def visit_expr(self, expr):
        return self.builder_.normalize(getattr(self, _method_name(VISIT_METHODS, type(expr)))(expr))

    def visit_expr_post_order(self, expr):
        """Rebuild ``expr`` from its visited children (the default visit of its node type,
        not an override), then normalize it."""
        default = getattr(PyExprMutator, _method_name(VISIT_METHODS, type(expr)))
        return self.builder_.normalize(default(self, expr))

    def visit_var_def(self, var: Var) -> Var:
        if isinstance(var, DataflowVar):
            return self.visit_dataflow_var_def_(var)
        return self.visit_var_def_(var)

    def visit_var_def_(self, var: Var) -> Var:
        """A Var where it is defined; returns the (possibly new) variable."""
        return var

    def visit_dataflow_var_def_(self, var: DataflowVar) -> Var:
        """A DataflowVar where it is defined; returns the (possibly new) variable."""
        return var

    def visit_span(self, span):
        return span

    # -- builder-based scopes, blocks and bindings --------------------------------------------
    def emit(self, value: Expr, name_hint: str = "") -> Var:
        """Bind ``value`` in the block being rebuilt (``self.builder_.emit``)."""
        return self.builder_.emit(value, name_hint)

    def emit_binding(self, binding: Binding) -> None:
        self.builder_.emit_normalized(binding)

    def visit_with_new_scope(self, expr: Expr, params: list | None = None) -> Expr:
        """Visit a function body or a branch in a scope of its own."""
        self.builder_.begin_scope(params)
        try:
            return self.visit_expr(expr)
        finally:
            self.builder_.end_scope()

    def visit_function_(self, op: Function) -> Expr:
        params = []
        for p in op.params:
            new = self.visit_var_def(p)
            if new is not p:
                self.var_remap[id(p)] = new
            params.append(new)
        body = self.visit_with_new_scope(op.body, params)
        if _same(params, op.params) and body is op.body:
            return op
        return op.replace(params=params, body=body)

    def visit_if_(self, op: If) -> Expr:
        cond = self.visit_expr(op.cond)
        then = self.visit_with_new_scope(op.true_branch)
        other = self.visit_with_new_scope(op.false_branch)
        if cond is op.cond and then is op.true_branch and other is op.false_branch:
            return op
        return If(cond, then, other, span=op.span)

    def visit_seq_expr_(self, op: SeqExpr) -> Expr:
        blocks = []
        unchanged = True
        for block in op.blocks:
            new = self.visit_binding_block(block)
            unchanged = unchanged and new is block
            if new.bindings:
                blocks.append(new)
        self.builder_._begin_binding_block()
        try:
            body = self.visit_expr(op.body)
        finally:
            prologue = self.builder_._end_block()
        if prologue.bindings:
            blocks.append(prologue)
            unchanged = False
        if unchanged and body is op.body:
            return op
        return SeqExpr(blocks, body, span=op.span)

    def _visit_block(self, block: BindingBlock, dataflow: bool) -> BindingBlock:
        if dataflow:
            self.builder_._begin_dataflow_block()
        else:
            self.builder_._begin_binding_block()
        try:
            for binding in block.bindings:
                self.visit_binding(binding)
        finally:
            new = self.builder_._end_block()
        return block if _same(new.bindings, block.bindings) else new

    def visit_binding_block_(self, block: BindingBlock) -> BindingBlock:
        return self._visit_block(block, dataflow=False)

    def visit_dataflow_block_(self, block: DataflowBlock) -> BindingBlock:
        return self._visit_block(block, dataflow=True)

    def visit_var_binding_(self, binding: VarBinding) -> None:
        self.reemit_binding(binding, self.visit_expr(binding.value))

    def reemit_binding(self, binding: VarBinding, new_value: Expr) -> None:
        """Emit ``binding`` with ``new_value`` (the binding itself when nothing changed; a
        variable of the new struct info, remapped at its uses, when the value's differs)."""
        new_var = self.visit_var_def(binding.var)
        if new_var is binding.var and new_value is binding.value:
            self.builder_.emit_normalized(binding)
            return
        fitted = self.with_struct_info(new_var, new_value.struct_info)
        if fitted is not new_var:
            new_var = fitted
        if new_var is not binding.var:
            self.var_remap[id(binding.var)] = new_var
        self.builder_.emit_normalized(VarBinding(new_var, new_value, span=binding.span))

    def visit_match_cast_(self, binding: MatchCast) -> None:
        new_var = self.visit_var_def(binding.var)
        new_value = self.visit_expr(binding.value)
        if new_var is binding.var and new_value is binding.value:
            self.builder_.emit_normalized(binding)
            return
        new_value = self.builder_._normalize_argument(new_value)
        new_var = self.with_struct_info(new_var, binding.struct_info)
        if new_var is not binding.var:
            self.var_remap[id(binding.var)] = new_var
        self.builder_.emit_normalized(MatchCast(new_var, new_value, binding.struct_info,
                                                span=binding.span))

    # -- helpers of TVM's API -------------------------------------------------------------------
    def lookup_binding(self, var: Var) -> Expr | None:
        """The value bound to ``var`` in what was rebuilt so far (None for parameters)."""
        return self.builder_.lookup_binding(var)

    def set_var_remap(self, vid, var: Var) -> None:
        """Replace the uses of the variable ``vid`` (a ``var.vid``, or the Var) by ``var``."""
        self.var_remap[id(_var_of(vid))] = var

    def get_var_remap(self, vid) -> Var | None:
        """The variable uses of ``vid`` are replaced by, or None."""
        return self.var_remap.get(id(_var_of(vid)))

    def with_struct_info(self, var: Var, struct_info) -> Var:
        """``var`` itself when it already has ``struct_info``, else a new variable of the
        same kind and name with it."""
        from mlckit.ir.structural import structural_equal

        if var.struct_info_ is not None and structural_equal(var.struct_info_, struct_info):
            return var
        return type(var)(var.name_hint, struct_info, span=var.span)


def _var_of(vid):
    from .expr import Id

    if isinstance(vid, Id):
        if vid.var is None:
            raise TVMTypeError(f"{vid!r} belongs to no variable")
        return vid.var
    if isinstance(vid, Var):
        return vid
    raise TVMTypeError(f"expected a variable's vid (var.vid) or the Var, got {type(vid).__name__}")


def visitor(visitor_cls: type) -> type:
    """Class decorator for a ``PyExprVisitor`` subclass (TVM's ``expr_functor.visitor``);
    mlckit's visitors are plain Python, so the class is checked and returned as is.

    Example::

        @relax.expr_functor.visitor
        class MyVisitor(relax.PyExprVisitor):
            def visit_call_(self, op): ...
    """
    if not (isinstance(visitor_cls, type) and issubclass(visitor_cls, ExprVisitor)):
        raise TVMTypeError(f"@relax.expr_functor.visitor decorates a subclass of "
                        f"relax.PyExprVisitor, got {visitor_cls!r}")
    return visitor_cls


def mutator(mutator_cls: type) -> type:
    """Class decorator for a ``PyExprMutator`` subclass (TVM's ``expr_functor.mutator``);
    the class is checked and returned as is.

    Example::

        @relax.expr_functor.mutator
        class MyMutator(relax.PyExprMutator):
            def visit_call_(self, call): ...
    """
    if not (isinstance(mutator_cls, type) and issubclass(mutator_cls, PyExprMutator)):
        raise TVMTypeError(f"@relax.expr_functor.mutator decorates a subclass of "
                        f"relax.PyExprMutator, got {mutator_cls!r}")
    return mutator_cls
