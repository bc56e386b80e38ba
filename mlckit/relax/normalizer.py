"""The normalizer behind ``relax.BlockBuilder``: A-normal form and struct-info deduction.

Normalizing an expression (TVM's ``BlockBuilder::Normalize``) makes it ready to be bound:

- every argument of a ``Call`` (and every field of a ``Tuple``, the tuple of a
  ``TupleGetItem``, the condition of an ``If``) that is not a leaf gets its own binding
  first, in the block being built (``lv``/``gv`` names from the builder's name supply);
- the struct info of the result is deduced now (``mlckit.relax.analysis.infer_struct_info``),
  so a malformed call fails where it is emitted, not later;
- a ``SeqExpr`` gets leaf body, its binding blocks are re-emitted, nested ``SeqExpr`` values
  are flattened into the enclosing blocks and neighbouring blocks of one kind are merged;
- function bodies and ``If`` branches become ``SeqExpr`` (a new scope).

Example (inside ``with bb.function("f", [x, w]):``)::

    bb.normalize(call_tir(gv, [call_tir(gv2, [x], s)], s))
    # binds the inner call first:  lv = R.call_tir(gv2, (x,), ...)
    # and returns                  R.call_tir(gv, (lv,), ...)
"""

from __future__ import annotations

from typing import Any

from mlckit.error import TVMError, TVMTypeError
from mlckit.ir.module import GlobalVar
from mlckit.ir.op import Op

from .analysis.struct_info import erase_to_well_defined, infer_struct_info
from .analysis.well_formed import definable_tir_vars, free_relax_vars
from .expr import (
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
from .struct_info import StructInfo

_LEAVES = (Constant, ShapeExpr, PrimValue, StringImm, DataTypeImm, ExternFunc, GlobalVar, Op)


class BlockBuilderError(TVMError):
    """A ``relax.BlockBuilder`` was used out of order (``emit`` outside a function,
    ``emit_output`` outside a dataflow block, ``emit_func_output`` twice, …)."""


class _Block:
    """A binding block being built: its bindings, its kind, and the arguments already bound
    while normalizing in it (expression id -> (expression, variable))."""

    __slots__ = ("bindings", "is_dataflow", "memo")

    def __init__(self, is_dataflow: bool):
        self.bindings: list = []
        self.is_dataflow = is_dataflow
        self.memo: dict[int, tuple[Any, Var]] = {}


def is_leaf_or_tuple(expr: Any) -> bool:
    """Leaves and tuples may stay in place as call arguments (TVM's ``IsLeafOrTuple``)."""
    return isinstance(expr, (*_LEAVES, Var, Tuple))


class Normalizer:
    """Block and scope bookkeeping plus normalization; ``BlockBuilder`` is its public face.

    Subclasses provide ``_new_var(is_dataflow, name_hint, struct_info)``.
    """

    def __init__(self):
        self._block_stack: list[_Block] = []
        self._scope_stack: list[set[int]] = []
        self._scope_keep: list[list] = []  # keeps the TIR vars of the scopes alive
        self._binding_table: dict[int, tuple[Var, Expr]] = {}

    # -- blocks and scopes ----------------------------------------------------------------
    def _begin_dataflow_block(self) -> None:
        self._block_stack.append(_Block(is_dataflow=True))

    def _begin_binding_block(self) -> None:
        self._block_stack.append(_Block(is_dataflow=False))

    def _end_block(self) -> BindingBlock:
        block = self._current_block("end a binding block")
        self._block_stack.pop()
        return (DataflowBlock if block.is_dataflow else BindingBlock)(block.bindings)

    def _current_block(self, what: str) -> _Block:
        if not self._block_stack:
            raise BlockBuilderError(
                f"cannot {what}: no binding block is being built; call it inside "
                "`with bb.function(name, params):` (and `with bb.dataflow():` for dataflow "
                "variables)")
        return self._block_stack[-1]

    def current_block_is_dataflow(self) -> bool:
        """True when the block being built is a dataflow block."""
        return self._current_block("ask for the current block").is_dataflow

    def begin_scope(self, params: list | None = None) -> None:
        """Open a scope (a function body, a branch) where the symbolic variables defined by
        ``params``' annotations are known; ``end_scope`` closes it."""
        tir_vars = [v for p in (params or []) for v in definable_tir_vars(p.struct_info)]
        self._scope_stack.append({id(v) for v in tir_vars})
        self._scope_keep.append(tir_vars)

    def end_scope(self) -> None:
        """Close the scope opened by ``begin_scope``."""
        if not self._scope_stack:
            raise BlockBuilderError("end_scope without a matching begin_scope")
        self._scope_stack.pop()
        self._scope_keep.pop()

    def _erase_in_scope(self, sinfo: StructInfo) -> StructInfo:
        defined: set[int] = set()
        for scope in self._scope_stack:
            defined |= scope
        return erase_to_well_defined(sinfo, defined)

    # -- bindings ---------------------------------------------------------------------------
    def emit_normalized(self, binding) -> None:
        """Add an already normalized binding (its variable has its struct info) to the block
        being built.

        Example::

            bb.emit_normalized(relax.VarBinding(lv, value))
        """
        block = self._current_block("emit_normalized")
        if not isinstance(binding, (VarBinding, MatchCast)):
            raise TVMTypeError(f"emit_normalized expects a VarBinding or a MatchCast, got "
                               f"{type(binding).__name__}")
        var = binding.var
        if isinstance(var, DataflowVar) and not block.is_dataflow:
            raise BlockBuilderError(f"cannot emit the DataflowVar {var.name_hint!r} in a "
                                    "non-dataflow block: bind it inside `with bb.dataflow():`")
        if var.struct_info_ is None:
            raise BlockBuilderError(f"emit_normalized: variable {var.name_hint!r} has no struct "
                                    "info; use bb.emit(value) to bind an expression")
        binding.value.struct_info  # noqa: B018 - a normalized value has a struct info
        block.bindings.append(binding)
        if isinstance(binding, VarBinding):
            self._binding_table[id(var)] = (var, binding.value)

    def lookup_binding(self, var: Var) -> Expr | None:
        """The value bound to ``var`` by this builder (None for parameters and unknown
        variables; match_cast bindings are not recorded, as in TVM)."""
        entry = self._binding_table.get(id(var))
        if entry is None or entry[0] is not var:
            return None
        return entry[1]

    def _bind(self, value: Expr, is_dataflow: bool, name_hint: str) -> Var:
        """Bind an already normalized ``value`` to a fresh variable in the current block."""
        var = self._new_var(is_dataflow, name_hint, value.struct_info)
        binding = VarBinding(var, value)
        self._block_stack[-1].bindings.append(binding)
        self._binding_table[id(var)] = (var, value)
        return var

    # -- normalization -------------------------------------------------------------------------
    def normalize(self, expr: Any) -> Expr:
        """``expr`` in normal form with its struct info deduced (see the module doc).

        Example::

            call = bb.normalize(relax.op.call_tir(gv, [x], out_sinfo))
            call.struct_info      # R.Tensor((128, 128), dtype="float32")
        """
        expr = self._as_expr(expr)
        out = self._visit(expr)
        if not isinstance(out, (Op, GlobalVar)):
            out.struct_info  # noqa: B018 - deduce now: a malformed expression fails here
        return out

    def _as_expr(self, value: Any):
        if isinstance(value, (Expr, GlobalVar, Op)):
            return value
        if isinstance(value, (list, tuple)):
            return Tuple([self._as_expr(v) for v in value])
        if value is None:
            from .op.base import null_value

            return null_value()
        from .utils import convert_to_expr

        try:
            return convert_to_expr(value)
        except TypeError as err:
            raise TVMTypeError(str(err)) from None

    def _visit(self, expr):
        if self._block_stack:
            hit = self._block_stack[-1].memo.get(id(expr))
            if hit is not None and hit[0] is expr:
                return hit[1]
        return self._visit_node(expr)

    def _normalize_argument(self, arg):
        arg = self._as_expr(arg)
        if self._block_stack:
            hit = self._block_stack[-1].memo.get(id(arg))
            if hit is not None and hit[0] is arg:
                return hit[1]
        post = self._visit_node(arg)
        if is_leaf_or_tuple(arg):
            return post
        if not self._block_stack:
            raise BlockBuilderError(
                f"cannot normalize a nested {type(arg).__name__} outside a binding block: it "
                "needs a binding of its own; emit it inside `with bb.function(...)`")
        var = self._bind(post, self._block_stack[-1].is_dataflow, "")
        self._block_stack[-1].memo[id(arg)] = (arg, var)
        return var

    def _visit_node(self, expr):
        if isinstance(expr, _LEAVES):
            return expr
        if isinstance(expr, Var):
            if expr.struct_info_ is None:
                raise BlockBuilderError(
                    f"variable {expr.name_hint!r} has no struct info: create it as "
                    f"relax.Var({expr.name_hint!r}, relax.TensorStructInfo(shape, dtype))")
            return expr
        method = _VISIT.get(type(expr))
        if method is None:
            for cls, name in _VISIT.items():
                if isinstance(expr, cls):
                    method = name
                    break
            else:
                raise TVMTypeError(f"cannot normalize a {type(expr).__name__}: it is not a Relax "
                                   "expression")
        return getattr(self, method)(expr)

    def _visit_tuple(self, op: Tuple):
        fields = [self._normalize_argument(f) for f in op.fields]
        if _same(fields, op.fields):
            return op
        return Tuple(fields, span=op.span)

    def _visit_call(self, op: Call):
        callee = op.op if isinstance(op.op, (Op, GlobalVar)) else self._normalize_argument(op.op)
        args = [self._normalize_argument(a) for a in op.args]
        if callee is op.op and _same(args, op.args):
            call = op
        else:
            call = Call(callee, args, op.attrs, list(op.sinfo_args), span=op.span)
            if "struct_info_" in op.__dict__:
                call.__dict__["struct_info_"] = op.__dict__["struct_info_"]
        call.struct_info  # noqa: B018 - deduce (and cache) the result's struct info
        return call

    def _visit_tuple_getitem(self, op: TupleGetItem):
        tup = self._normalize_argument(op.tuple_value)
        node = op if tup is op.tuple_value else TupleGetItem(tup, op.index, span=op.span)
        node.struct_info  # noqa: B018
        return node

    def _visit_if(self, op: If):
        cond = self._normalize_argument(op.cond)
        then = self._visit_with_new_scope(op.true_branch)
        other = self._visit_with_new_scope(op.false_branch)
        if cond is op.cond and then is op.true_branch and other is op.false_branch:
            node = op
        else:
            node = If(cond, then, other, span=op.span)
        if "struct_info_" not in node.__dict__:
            node.__dict__["struct_info_"] = infer_struct_info(node)
        return node

    def _visit_function(self, op: Function):
        body = self._visit_with_new_scope(op.body, op.params)
        return op if body is op.body else op.replace(body=body)

    def _visit_seq_expr(self, op: SeqExpr):
        blocks = [self._normalize_block(b) for b in op.blocks]
        if self._block_stack and self._block_stack[-1].is_dataflow:
            self._begin_dataflow_block()
        else:
            self._begin_binding_block()
        body = self._normalize_argument(op.body)
        prologue = self._end_block()
        if prologue.bindings:
            blocks.append(prologue)
        blocks = normalize_blocks(blocks)
        if _same(blocks, op.blocks) and body is op.body:
            seq = op
        else:
            seq = SeqExpr(blocks, body, span=op.span)
        if "struct_info_" not in seq.__dict__:
            seq.__dict__["struct_info_"] = self._erase_in_scope(body.struct_info)
        return seq

    def _visit_with_new_scope(self, expr, params: list | None = None):
        """A function body or a branch: always a SeqExpr, normalized in a scope of its own."""
        self.begin_scope(params)
        try:
            if isinstance(expr, SeqExpr):
                return self._visit(expr)
            self._begin_binding_block()
            post = self._normalize_argument(expr)
            prologue = self._end_block()
            if isinstance(post, SeqExpr) and not prologue.bindings:
                return post
            seq = SeqExpr([prologue] if prologue.bindings else [], post)
            seq.__dict__["struct_info_"] = self._erase_in_scope(post.struct_info)
            return seq
        finally:
            self.end_scope()

    def _normalize_block(self, block: BindingBlock) -> BindingBlock:
        if isinstance(block, DataflowBlock):
            self._begin_dataflow_block()
        else:
            self._begin_binding_block()
        changed = False
        try:
            for binding in block.bindings:
                new = self._normalize_binding(binding)
                changed = changed or new is not binding
                self.emit_normalized(new)
        except BaseException:
            self._block_stack.pop()
            raise
        out = self._end_block()
        if not changed and len(out.bindings) == len(block.bindings):
            return block
        return out

    def _normalize_binding(self, binding):
        value = self._visit(binding.value)
        var = binding.var
        if var.struct_info_ is None:  # as TVM: a binding gives its variable a struct info
            var.struct_info_ = (binding.struct_info if isinstance(binding, MatchCast)
                                else value.struct_info)
        if value is binding.value:
            return binding
        if isinstance(binding, MatchCast):
            return MatchCast(var, value, binding.struct_info, span=binding.span)
        return VarBinding(var, value, span=binding.span)

    # -- subclass hook ------------------------------------------------------------------------
    def _new_var(self, is_dataflow: bool, name_hint: str, struct_info: StructInfo) -> Var:
        raise NotImplementedError


_VISIT = {Tuple: "_visit_tuple", Call: "_visit_call", TupleGetItem: "_visit_tuple_getitem",
          If: "_visit_if", Function: "_visit_function", SeqExpr: "_visit_seq_expr"}


def _same(new: list, old: list) -> bool:
    return len(new) == len(old) and all(a is b for a, b in zip(new, old))


def normalize_blocks(blocks: list) -> list:
    """Flatten bindings of nested SeqExprs, drop empty blocks and merge neighbours of one kind
    (TVM's ``NormalizeBlocks``); returns ``blocks`` itself when nothing changes."""
    flat = _flatten_blocks(blocks)
    out: list = []
    for block in flat:
        if not block.bindings:
            continue
        if out and type(out[-1]) is type(block):
            prev = out.pop()
            out.append(type(block)(prev.bindings + block.bindings, span=prev.span))
        else:
            out.append(block)
    return blocks if _same(out, blocks) else out


def _flatten_blocks(blocks: list) -> list:
    out: list = []
    changed = False
    for block in blocks:
        kind = type(block)
        current: list = []
        for binding in block.bindings:
            value = binding.value
            if not isinstance(value, SeqExpr):
                current.append(binding)
                continue
            changed = True
            out.append(kind(current))
            current = []
            for inner in value.blocks:
                if kind is DataflowBlock and not isinstance(inner, DataflowBlock):
                    values = [b.value for b in inner.bindings]
                    used = [v.name_hint for v in free_relax_vars(values)
                            if isinstance(v, DataflowVar)]
                    if used:
                        raise BlockBuilderError(
                            f"Malformed AST: {binding.var.name_hint!r} is bound in a dataflow "
                            "block to a SeqExpr whose non-dataflow blocks use the DataflowVars "
                            f"{', '.join(used)}; a DataflowVar may only be used within a "
                            "DataflowBlock")
                out.append(inner)
            if isinstance(binding, MatchCast):
                current.append(MatchCast(binding.var, value.body, binding.struct_info,
                                         span=binding.span))
            else:
                current.append(VarBinding(binding.var, value.body, span=binding.span))
        out.append(kind(current, span=block.span))
    return out if changed else blocks


__all__ = ["BlockBuilderError", "Normalizer", "is_leaf_or_tuple", "normalize_blocks"]
