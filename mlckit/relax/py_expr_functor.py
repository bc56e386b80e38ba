"""TVM's user-facing Relax functors: ``PyExprVisitor`` / ``PyExprMutator`` and the ``visitor`` /
``mutator`` decorators, on top of ``expr_functor``'s ``ExprVisitor`` / ``ExprMutator``; the
mutator rebuilds through a ``relax.BlockBuilder`` (``self.builder_``), normalizing as it goes.

``mlckit.relax.expr_functor`` re-exports them (TVM's path).

Example::

    @relax.expr_functor.visitor
    class CallCounter(relax.PyExprVisitor):
        def __init__(self):
            self.calls = 0
        def visit_call_(self, op):
            self.calls += 1
            super().visit_call_(op)

    counter = CallCounter(); counter.visit_expr(mod["main"]); counter.calls
"""

from __future__ import annotations

from mlckit.error import TVMTypeError
from mlckit.ir.module import IRModule

from .expr import (
    Binding,
    BindingBlock,
    DataflowBlock,
    DataflowVar,
    Expr,
    Function,
    If,
    MatchCast,
    SeqExpr,
    Var,
    VarBinding,
)
from .expr_functor import (
    VISIT_METHODS,
    ExprMutator,
    ExprVisitor,
    _method_name,
    _same,
    returned_expr,
)


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
        method = _method_name(VISIT_METHODS, type(expr))
        return self.builder_.normalize(returned_expr(self, method, expr, getattr(self, method)(expr)))

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
