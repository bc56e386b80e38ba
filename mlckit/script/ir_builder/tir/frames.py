"""TIR IRBuilder frames: the scopes ``with T.prim_func():``, ``with T.block("C"):``, loops …

Each frame collects the statements built inside it (``stmts``) and, on exit, wraps them into
one IR statement handed to the enclosing frame (``add_to_parent``), as TVM's
``src/script/ir_builder/tir/frame.cc`` does.  The outermost ``PrimFuncFrame`` completes the
function (implicit root block, missing ``T.reads``/``T.writes``; see ``complete.py``) and
makes it the builder's result, or defines it in the enclosing ``I.ir_module`` frame.

Every frame remembers the source span current when it was created (``span_scope``), so the
IR it builds points back at the script line that made it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from mlckit.ir.node import Span
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.function import PrimFunc

from ..base import IRBuilder, IRBuilderError, IRBuilderFrame

_SPAN = threading.local()


def current_span() -> Span | None:
    """The source span of the script statement being built (None outside the parser)."""
    return getattr(_SPAN, "span", None)


@contextlib.contextmanager
def span_scope(span: Span | None) -> Iterator[None]:
    """Make ``span`` the location given to IR built inside this ``with``."""
    previous = current_span()
    _SPAN.span = span
    try:
        yield
    finally:
        _SPAN.span = previous


def as_stmt(stmts: list) -> S.Stmt:
    """One statement from a frame's list: flattened SeqStmt, or ``T.evaluate(0)`` if empty
    (TVM's ``SeqStmt::Flatten``)."""
    flat = []
    for s in stmts:
        if isinstance(s, S.SeqStmt):
            flat.extend(s.seq)
        elif s is not None:
            flat.append(s)
    if not flat:
        return S.Evaluate(E.IntImm("int32", 0), span=current_span())
    if len(flat) == 1:
        return flat[0]
    return S.SeqStmt(flat)


def add_to_parent(stmt: S.Stmt) -> None:
    """Append ``stmt`` to the innermost TIR frame (or make it the builder's result)."""
    builder = IRBuilder.current()
    if not builder.frames:
        if builder.has_result:
            raise IRBuilderError("the IRBuilder already has a result")
        builder.set_result(stmt)
        return
    frame = builder.frames[-1]
    if not isinstance(frame, TIRFrame):
        raise IRBuilderError(
            f"a TIR statement cannot be added inside {type(frame).__name__}: "
            "open a `with T.prim_func():` frame first"
        )
    frame.stmts.append(stmt)


class TIRFrame(IRBuilderFrame):
    """Base of TIR frames: a list of statements and the span of the script that opened it."""

    def __init__(self):
        super().__init__()
        self.stmts: list = []
        self.span = current_span()


class PrimFuncFrame(TIRFrame):
    """``with T.prim_func():`` — params, buffer_map, attrs and the body of a PrimFunc."""

    def __init__(self, is_private: bool = False):
        super().__init__()
        self.name: str | None = None
        self.is_private = is_private
        self.args: list = []
        self.ret_type: Any = None
        self.buffer_map: dict = {}
        self.attrs: dict = {}
        self.root_alloc_buffers: list = []
        self.env_threads: dict = {}
        self.result: PrimFunc | None = None
        self.spelling: str | None = None  # "tir" / "tirx": how the parsed script spelled it

    def exit(self) -> None:
        from .complete import script_complete

        attrs = dict(self.attrs)
        if not self.is_private and self.name is not None and "global_symbol" not in attrs:
            attrs["global_symbol"] = self.name
        # buffer_map in parameter order, as TVM keeps it: a Buffer-annotated parameter and a
        # later T.match_buffer must not swap places (printing then parsing would differ)
        order = {id(arg): n for n, arg in enumerate(self.args)}
        buffer_map = dict(sorted(self.buffer_map.items(),
                                 key=lambda item: order.get(id(item[0]), len(order))))
        func = PrimFunc(list(self.args), as_stmt(self.stmts), self.ret_type,
                        buffer_map, attrs, span=self.span, spelling=self.spelling)
        func = script_complete(func, self.root_alloc_buffers)
        self.result = func
        builder = IRBuilder.current()
        if not builder.frames:
            if builder.has_result:
                raise IRBuilderError("the IRBuilder already has a result")
            builder.set_result(func)
            return
        from mlckit.script.ir_builder.ir.frame import IRModuleFrame

        module_frame = next((f for f in reversed(builder.frames)
                             if isinstance(f, IRModuleFrame)), None)
        if module_frame is None:
            raise IRBuilderError("cannot find where to put the PrimFunc: it is neither the "
                                 "outermost frame nor inside an I.ir_module frame")
        if self.name is None:
            raise IRBuilderError("a PrimFunc inside an IRModule needs a name: call T.func_name")
        from mlckit.script.ir_builder import ir as I  # noqa: E741

        if self.name not in module_frame.global_var_map:
            I.decl_function(self.name, func)
        I.def_function(self.name, func)


class BlockFrame(TIRFrame):
    """``with T.block("name"):`` — iterators, regions, init, allocations of a block."""

    def __init__(self, name: str = "", no_realize: bool = False):
        super().__init__()
        self.name = name
        self.iter_vars: list = []
        self.iter_values: list = []
        self.reads: list | None = None
        self.writes: list | None = None
        self.init: S.Stmt | None = None
        self.alloc_buffers: list = []
        self.match_buffers: list = []
        self.annotations: dict | None = None
        self.predicate: E.PrimExpr | None = None
        self.no_realize = no_realize

    def exit(self) -> None:
        attrs = dict(self.annotations or {})
        detect = (self.reads is None) | ((self.writes is None) << 1)
        if detect:
            attrs[DETECT_ACCESS] = detect
        block = S.Block(list(self.iter_vars), list(self.reads or []), list(self.writes or []),
                        self.name, as_stmt(self.stmts), self.init, list(self.alloc_buffers),
                        list(self.match_buffers), attrs, span=self.span)
        if self.no_realize:
            if self.iter_values:
                raise IRBuilderError("block bindings are not allowed when no_realize=True")
            if self.predicate is not None:
                raise IRBuilderError("T.where is not allowed when no_realize=True")
            add_to_parent(block)
            return
        predicate = self.predicate if self.predicate is not None else E.IntImm("bool", True)
        add_to_parent(S.BlockRealize(list(self.iter_values), predicate, block, span=self.span))


# Annotation marking a block whose reads (bit 1) / writes (bit 2) must be detected; removed
# by script completion (TVM's "tir.script_parsing_detect_access").
DETECT_ACCESS = "tir.script_parsing_detect_access"


class BlockInitFrame(TIRFrame):
    """``with T.init():`` — the initialisation of a reduction block."""

    def enter(self):
        frame = _block_frame("T.init()")
        frames = IRBuilder.current().frames  # [..., <the frame around T.init>, self]
        last = frames[-2]
        if last is not frame:  # TVM: T.init must be directly inside its block
            between = {ForFrame: "a loop", IfFrame: "an if", ThenFrame: "an if",
                       ElseFrame: "an else", LetFrame: "a let binding"}.get(type(last), "a scope")
            raise IRBuilderError(
                f"T.init() must be directly inside `with T.block({frame.name!r})`, but here it is "
                f"inside {between} within the block: the initialisation runs once, before the "
                "first reduction step, so write it at the top level of the block")
        if frame.init is not None:
            raise IRBuilderError(f"block {frame.name!r} already has a T.init()")
        return self

    def exit(self) -> None:
        _block_frame("T.init()").init = as_stmt(self.stmts)


def _block_frame(method: str) -> BlockFrame:
    frame = IRBuilder.find_frame(BlockFrame) if IRBuilder.is_in_scope() else None
    if frame is None:
        raise IRBuilderError(f"{method} must be used inside a `with T.block(...)`, "
                             f"but it occurred outside of any block")
    return frame


class ForFrame(TIRFrame):
    """A loop nest: ``vars``, their ``doms`` (Ranges) and how to make the For statements."""

    def __init__(self, vars_: list, doms: list, make_loop):
        super().__init__()
        self.vars = vars_
        self.doms = doms
        self.make_loop = make_loop

    def enter(self):
        return self.vars if len(self.vars) != 1 else self.vars[0]

    def exit(self) -> None:
        add_to_parent(self.make_loop(self.vars, self.doms, as_stmt(self.stmts), self.span))


class AssertFrame(TIRFrame):
    def __init__(self, condition, message):
        super().__init__()
        self.condition = condition
        self.message = message

    def exit(self) -> None:
        add_to_parent(S.AssertStmt(self.condition, self.message, as_stmt(self.stmts),
                                   span=self.span))


class LetFrame(TIRFrame):
    """``with T.LetStmt(value) as x:`` (or ``x: T.int32 = value`` in a script)."""

    def __init__(self, var, value):
        super().__init__()
        self.var = var
        self.value = value

    def enter(self):
        return self.var

    def exit(self) -> None:
        add_to_parent(S.LetStmt(self.var, self.value, as_stmt(self.stmts), span=self.span))


class LaunchThreadFrame(TIRFrame):
    def __init__(self, iter_var, extent, attr_key):
        super().__init__()
        self.iter_var = iter_var
        self.extent = extent
        self.attr_key = attr_key

    def enter(self):
        return self.iter_var.var

    def exit(self) -> None:
        add_to_parent(S.AttrStmt(self.iter_var, self.attr_key, self.extent,
                                 as_stmt(self.stmts), span=self.span))


class AttrFrame(TIRFrame):
    def __init__(self, node, attr_key, value):
        super().__init__()
        self.node = node
        self.attr_key = attr_key
        self.value = value

    def exit(self) -> None:
        add_to_parent(S.AttrStmt(self.node, self.attr_key, self.value, as_stmt(self.stmts),
                                 span=self.span))


class WhileFrame(TIRFrame):
    def __init__(self, condition):
        super().__init__()
        self.condition = condition

    def exit(self) -> None:
        add_to_parent(S.While(self.condition, as_stmt(self.stmts), span=self.span))


class IfFrame(TIRFrame):
    """``with T.If(cond):`` holding a ``with T.Then():`` and an optional ``with T.Else():``."""

    def __init__(self, condition):
        super().__init__()
        self.condition = condition
        self.then_stmts: list | None = None
        self.else_stmts: list | None = None

    def exit(self) -> None:
        if self.stmts:
            raise IRBuilderError("statements inside T.If must be in its T.Then() or T.Else()")
        if self.then_stmts is None:
            raise IRBuilderError("T.If needs a T.Then() branch")
        else_case = as_stmt(self.else_stmts) if self.else_stmts is not None else None
        add_to_parent(S.IfThenElse(self.condition, as_stmt(self.then_stmts), else_case,
                                   span=self.span))


def _if_frame(method: str) -> IfFrame:
    frame = IRBuilder.last_frame() if IRBuilder.is_in_scope() else None
    if not isinstance(frame, IfFrame):
        raise IRBuilderError(f"{method} must be directly inside `with T.If(...)`")
    return frame


class ThenFrame(TIRFrame):
    def enter(self):
        # the frame is already pushed: the If frame is the one below it
        frames = IRBuilder.current().frames
        parent = frames[-2] if len(frames) >= 2 else None
        if not isinstance(parent, IfFrame):
            raise IRBuilderError("T.Then() must be directly inside `with T.If(...)`")
        if parent.then_stmts is not None:
            raise IRBuilderError("duplicate T.Then() branch")
        return self

    def exit(self) -> None:
        _if_frame("T.Then()").then_stmts = list(self.stmts)


class ElseFrame(TIRFrame):
    def enter(self):
        frames = IRBuilder.current().frames
        parent = frames[-2] if len(frames) >= 2 else None
        if not isinstance(parent, IfFrame):
            raise IRBuilderError("T.Else() must be directly inside `with T.If(...)`")
        if parent.then_stmts is None:
            raise IRBuilderError("T.Else() must follow T.Then()")
        if parent.else_stmts is not None:
            raise IRBuilderError("duplicate T.Else() branch")
        return self

    def exit(self) -> None:
        _if_frame("T.Else()").else_stmts = list(self.stmts)


class DeclBufferFrame(TIRFrame):
    """``with T.decl_buffer(shape, dtype) as B:`` — Allocate + DeclBuffer (or DeclBuffer only
    when ``data`` is given)."""

    def __init__(self, buffer, allocated: bool):
        super().__init__()
        self.buffer = buffer
        self.allocated = allocated

    def enter(self):
        return self.buffer

    def exit(self) -> None:
        body = S.DeclBuffer(self.buffer, as_stmt(self.stmts), span=self.span)
        if self.allocated:
            add_to_parent(body)
            return
        b = self.buffer
        add_to_parent(S.Allocate(b.data, b.dtype, list(b.shape), E.IntImm("bool", True), body,
                                 scope=b.scope, span=self.span))


class AllocateFrame(TIRFrame):
    def __init__(self, extents, dtype, scope, condition, annotations):
        super().__init__()
        self.extents = extents
        self.dtype = dtype
        self.scope = scope
        self.condition = condition
        self.annotations = annotations
        self.buffer_var = E.Var("", "handle")

    def enter(self):
        return self.buffer_var

    def exit(self) -> None:
        add_to_parent(S.Allocate(self.buffer_var, self.dtype, list(self.extents), self.condition,
                                 as_stmt(self.stmts), self.annotations, scope=self.scope,
                                 span=self.span))
