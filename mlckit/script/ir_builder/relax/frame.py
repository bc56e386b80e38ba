"""Frames of the Relax IRBuilder: function, binding blocks (dataflow or not), if/then/else.

As in TVM, a function (and each branch of an ``if``) is a sequence of binding blocks; an
implicit plain block is always open, ``with R.dataflow():`` closes it, opens a dataflow
block, and opens a new plain block when it ends.  Variables bound in a dataflow block are
DataflowVars, except those named by ``R.output`` (or returned from inside the block), which
become Vars when the block ends.
"""

from __future__ import annotations

from mlckit.relax.expr import (
    BindingBlock,
    DataflowBlock,
    DataflowVar,
    Function,
    If,
    MatchCast,
    SeqExpr,
    Var,
    VarBinding,
)
from mlckit.relax.struct_info import StructInfo

from ..base import IRBuilder, IRBuilderError, IRBuilderFrame


class SeqExprFrame(IRBuilderFrame):
    """A frame holding binding blocks (a function body, a branch of an ``if``)."""

    def __init__(self):
        super().__init__()
        self.binding_blocks: list[BindingBlock] = []

    def enter(self):
        BlockFrame(is_dataflow=False).__enter__()
        self.add_callback(self._close_open_block)
        return self

    def _close_open_block(self) -> None:
        last = IRBuilder.last_frame()
        if isinstance(last, BlockFrame):
            last.__exit__(None, None, None)


class FunctionFrame(SeqExprFrame):
    """``with R.function():`` — params (``R.arg``), name, attrs, body, return value."""

    def __init__(self, is_pure: bool = True, is_private: bool = False):
        super().__init__()
        self.is_pure = is_pure
        self.is_private = is_private
        self.name: str | None = None
        self.params: list[Var] = []
        self.attrs: dict = {}
        self.ret_struct_info: StructInfo | None = None
        self.output = None
        self.output_span = None
        self.span = None
        self.spelling: str | None = None  # "tir" / "tirx" (out_sinfo= / out_ty=), if written
        # string dims ("n") of this function, shared by its signature and body
        self.symbolic_vars: dict = {}

    def exit(self) -> None:
        from mlckit.relax.analysis.struct_info import erase_to_well_defined, is_base_of

        from ..ir.frame import IRModuleFrame
        from ..ir.ir import decl_function, def_function

        if self.output is None:
            raise IRBuilderError("a Relax function must return a value: add a `return` "
                                 "statement (R.func_ret_value) at its end")
        blocks = list(self.binding_blocks)
        body = self.output
        from mlckit.relax.analysis import is_leaf
        from mlckit.relax.expr import Tuple

        if not (is_leaf(body) or isinstance(body, Tuple)):
            var = Var("gv", body.struct_info, span=self.output_span)
            blocks.append(BindingBlock([VarBinding(var, body, span=self.output_span)]))
            body = var
        blocks = merge_blocks(blocks)
        seq = SeqExpr(blocks, body, span=self.output_span)
        attrs = dict(self.attrs)
        if not self.is_private and self.name is not None and "global_symbol" not in attrs:
            attrs["global_symbol"] = self.name
        body_sinfo = body.struct_info
        ret = self.ret_struct_info
        if ret is None or is_base_of(ret, body_sinfo):
            from mlckit.relax.analysis import collect_tir_vars

            defined = {id(v) for p in self.params for v in collect_tir_vars(p.struct_info)}
            ret = erase_to_well_defined(body_sinfo, defined)
        func = Function(self.params, seq, ret, self.is_pure, attrs, span=self.span,
                        spelling=self.spelling)
        builder = IRBuilder.current()
        if not builder.frames:
            builder.set_result(func)
            return
        mod_frame = IRBuilder.find_frame(IRModuleFrame)
        if mod_frame is None:
            raise IRBuilderError("cannot find where to put this R.function (it is neither "
                                 "outermost nor inside I.ir_module())")
        if self.name is None:
            raise IRBuilderError("a function defined in an IRModule needs a name (R.func_name)")
        if self.name not in mod_frame.global_var_map:
            decl_function(self.name, func)
        def_function(self.name, func)


def merge_blocks(blocks: list) -> list:
    """Drop empty blocks and merge neighbours of the same kind (TVM's NormalizeBlocks)."""
    out: list = []
    for block in blocks:
        if not block.bindings:
            continue
        if out and type(out[-1]) is type(block):
            prev = out.pop()
            out.append(type(block)(prev.bindings + block.bindings, span=prev.span))
        else:
            out.append(block)
    return out


class BlockFrame(IRBuilderFrame):
    """A binding block: ``with R.dataflow():`` (dataflow) or the implicit plain block."""

    def __init__(self, is_dataflow: bool):
        super().__init__()
        self.is_dataflow = is_dataflow
        self.bindings: list = []
        self.emitted_vars: list[Var] = []
        self.output_vars: list[Var] = []
        self.block_ended = False
        self.span = None

    def __enter__(self):
        if IRBuilder.is_in_scope():
            last = IRBuilder.last_frame()
            if isinstance(last, BlockFrame):
                last.__exit__(None, None, None)
        if IRBuilder.find_frame(FunctionFrame) is None:
            raise IRBuilderError("binding blocks (R.dataflow()) must be inside R.function()")
        return super().__enter__()

    def exit(self) -> None:
        if self.is_dataflow:
            for var in self.output_vars:
                if isinstance(var, DataflowVar):
                    var.__class__ = Var  # an output of the block: visible after it
        cls = DataflowBlock if self.is_dataflow else BindingBlock
        block = cls(self.bindings, span=self.span)
        parent = IRBuilder.last_frame()
        if not isinstance(parent, SeqExprFrame):
            raise IRBuilderError("a binding block must be directly inside a function or a branch")
        if block.bindings:
            parent.binding_blocks.append(block)
        if self.is_dataflow:
            BlockFrame(is_dataflow=False).__enter__()

    # -- emitting --------------------------------------------------------------------------
    def add_binding(self, binding) -> Var:
        self.bindings.append(binding)
        self.emitted_vars.append(binding.var)
        return binding.var


class IfFrame(IRBuilderFrame):
    """``with R.If(cond):`` containing ``with R.Then():`` and ``with R.Else():``; on exit the
    If is bound to a variable named after the last binding of the branches."""

    def __init__(self, condition):
        super().__init__()
        self.condition = condition
        self.then_expr = None
        self.else_expr = None
        self.var_name: str | None = None
        self.var: Var | None = None
        self.span = None

    def __enter__(self):
        for frame in IRBuilder.current().frames:
            if isinstance(frame, BlockFrame) and frame.is_dataflow:
                raise IRBuilderError("`if` is not allowed inside a dataflow block (R.dataflow())")
        return super().__enter__()

    def exit(self) -> None:
        if self.then_expr is None:
            raise IRBuilderError("R.If needs a then branch (R.Then())")
        if self.else_expr is None:
            raise IRBuilderError("R.If needs an else branch (R.Else()): Relax `if` is an "
                                 "expression and must produce a value on both paths")
        from .ir import emit

        self.var = emit(If(self.condition, self.then_expr, self.else_expr, span=self.span),
                        span=self.span)
        IRBuilder.name(self.var_name, self.var)


class _BranchFrame(SeqExprFrame):
    method = ""
    suffix = ""

    def enter(self):
        frames = IRBuilder.current().frames  # [..., the If frame, self]
        frame = frames[-2] if len(frames) >= 2 else None
        if not isinstance(frame, IfFrame):
            raise IRBuilderError(f"{self.method} must be directly inside R.If(...)")
        self.check(frame)
        return super().enter()

    def check(self, frame: IfFrame) -> None:
        raise NotImplementedError

    def branch_seq(self) -> tuple[SeqExpr, str]:
        from mlckit.relax.analysis import is_leaf
        from mlckit.relax.expr import Tuple

        if not self.binding_blocks:
            raise IRBuilderError(f"empty body is not allowed for '{self.method}': the last "
                                 "statement of each branch must bind the result variable")
        blocks = list(self.binding_blocks)
        last_block = blocks.pop()
        *bindings, last = last_block.bindings
        if isinstance(last.var, DataflowVar):
            raise IRBuilderError(f"a non-dataflow var is expected in the last binding of "
                                 f"'{self.method}'")
        name = last.var.name_hint
        new_var = Var(name + self.suffix, last.var.struct_info, span=last.span)
        if isinstance(last, VarBinding) and (is_leaf(last.value) or isinstance(last.value, Tuple)):
            body = last.value
        elif isinstance(last, VarBinding):
            bindings.append(VarBinding(new_var, last.value, span=last.span))
            body = new_var
        else:
            bindings.append(MatchCast(new_var, last.value, last.struct_info, span=last.span))
            body = new_var
        blocks.append(type(last_block)(bindings, span=last_block.span))
        return SeqExpr(merge_blocks(blocks), body), name


class ThenFrame(_BranchFrame):
    """``with R.Then():`` — the true branch of the innermost ``R.If``."""

    method, suffix = "R.Then", "_then"

    def check(self, frame: IfFrame) -> None:
        if frame.then_expr is not None:
            raise IRBuilderError("duplicate then branch (R.Then()) in R.If")

    def exit(self) -> None:
        frame = IRBuilder.last_frame()
        frame.then_expr, frame.var_name = self.branch_seq()


class ElseFrame(_BranchFrame):
    """``with R.Else():`` — the false branch of the innermost ``R.If``."""

    method, suffix = "R.Else", "_else"

    def check(self, frame: IfFrame) -> None:
        if frame.then_expr is None:
            raise IRBuilderError("the else branch (R.Else()) must follow the then branch")
        if frame.else_expr is not None:
            raise IRBuilderError("duplicate else branch (R.Else()) in R.If")

    def exit(self) -> None:
        frame = IRBuilder.last_frame()
        seq, name = self.branch_seq()
        if name != frame.var_name:
            raise IRBuilderError("the last binding of both branches must bind the same variable: "
                                 f"the then branch binds {frame.var_name!r}, the else branch "
                                 f"binds {name!r}")
        frame.else_expr = seq
