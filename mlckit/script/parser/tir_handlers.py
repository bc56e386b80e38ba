"""TIR dialect handlers: how each Python statement of a ``@T.prim_func`` builds TIR.

Each handler calls the TIR IRBuilder (``mlckit.script.ir_builder.tir``) exactly as a user
building IR imperatively would, inside a ``span_scope`` so the IR remembers its line:

- ``def f(A: T.Buffer((4,), "float32"), n: T.int32)``: a PrimFunc frame, one ``T.arg`` per
  parameter (``@T.prim_func(private=True)`` leaves out the ``global_symbol`` attribute;
  the function records its spelling: ``"tirx"`` under ``s_tir=True`` or tirx's ``T``, whose
  ``@T.prim_func`` without ``s_tir=True`` may hold no block, as in TVM 0.27);
- ``for i, j in T.grid(4, 4):`` / ``range(4)`` / ``T.parallel(4)``: a ForFrame;
- ``with T.block("C"):`` / ``with T.init():``: the frame the expression returns;
- ``x = e``: Buffers and new Vars take the name ``x``; a frame is entered until the enclosing
  scope ends; another TIR expression becomes a LetStmt (``x: T.int32 = e`` too); any other
  Python value is simply bound (metaprogramming);
- ``A[i] = e`` / ``A[i] += e``: ``T.buffer_store``; ``if``: IfThenElse for a TIR condition,
  decided at parse time for a Python one; ``assert``: AssertStmt; ``e``: ``T.evaluate(e)``.

After the function is built, ``verify_well_formed`` checks it.
"""

from __future__ import annotations

import ast
import contextlib
import types
import warnings
from typing import Any

import numpy as np

from mlckit.error import TVMValueError
from mlckit.ir.diagnostics import DiagnosticError, DiagnosticWarning
from mlckit.script.ir_builder import tir as T
from mlckit.script.ir_builder.base import IRBuilder, IRBuilderFrame
from mlckit.script.ir_builder.tir.frames import BlockFrame, ForFrame, span_scope
from mlckit.tir import dtype as dt
from mlckit.tir import expr as E
from mlckit.tir.buffer import Buffer
from mlckit.tir.expr import EqualOp, IterVar, PrimExpr, Var

from . import dispatch
from .evaluator import _BINARY
from .type_vars import buffer_string_dims, is_string_dim_declaration, type_var_dims

TOKEN = "tir"


def _register(kind: str):
    """Register a TIR handler that builds IR located at the statement it visits."""

    def wrap(func):
        def handler(parser, node):
            with span_scope(parser.span(node)):
                return func(parser, node)

        handler.__name__ = func.__name__
        handler.__doc__ = func.__doc__
        dispatch.register(TOKEN, kind)(handler)
        return func

    return wrap


# -- binding names ------------------------------------------------------------------------------
_LOOP_VARS = "tir.loop_vars"  # parser.state: ids of the loop variables bound by `for`
_DEFINED_AT = "tir.defined_at"  # parser.state: (id(scope), name) -> line of the definition


def _same_value(old, new) -> bool:
    """TVM lets a name be bound again in its scope only to the very same value."""
    if old is new:
        return True
    plain = (int, float, str, bool, type(None), tuple)
    if isinstance(old, plain) and type(old) is type(new):
        try:
            return bool(old == new)
        except Exception:  # noqa: BLE001 - not comparable: a different value
            return False
    return False


def check_fresh_name(parser, name: str, value: Any, node) -> None:
    """A TIR name is bound once per scope, as in TVM ("already defined in current scope"):
    rebinding would silently give a different variable the old name."""
    scope = parser.var_table.frames[-1]
    lines = parser.state.setdefault(_DEFINED_AT, {})
    key = (id(scope), name)
    if name in scope and not _same_value(scope[name], value):
        old = scope[name]
        line = lines.get(key)
        where = f" (line {line})" if line else ""
        if any(old is v for v in parser.state.get(_LOOP_VARS, ())):
            parser.report_error(
                node, f"cannot assign to the loop variable {name!r}: a TIR loop variable takes "
                      f"each value of its range and cannot be changed in the body; bind the new "
                      f"value to another name, e.g. {name}2 = {name} + 1")
        block = IRBuilder.find_frame(BlockFrame) if IRBuilder.is_in_scope() else None
        if block is not None and isinstance(old, Var) and any(
                iv.var is old for iv in block.iter_vars):
            parser.report_error(
                node, f"the block iterator {name!r} is already defined{where} in block "
                      f"{block.name!r}: give each iterator its own name")
        parser.report_error(
            node, f"{name!r} is already defined in this scope{where}: a TIR name is bound once; "
                  "use a new name for the new value")
    lines[key] = parser.span(node).line


def _fresh(bind):
    """``bind`` preceded by the check that the name is new in its scope."""

    def checked(parser, name: str, value: Any, node) -> Any:
        check_fresh_name(parser, name, value, node)
        return bind(parser, name, value, node)

    return checked


def _in_var_table(parser, value) -> bool:
    return any(v is value for frame in parser.var_table.frames for v in frame.values())


def _enter_until_scope_ends(frame: IRBuilderFrame):
    """Enter ``frame`` now; it is exited when the enclosing builder frame exits."""
    parent = IRBuilder.last_frame()
    if parent is None:
        raise TVMValueError("a TIR frame can only be opened inside a T.prim_func")
    parent.add_callback(lambda: frame.__exit__(None, None, None))
    return frame.__enter__()


def bind_for_value(parser, name: str, value: Any, node) -> Any:
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            bind_for_value(parser, f"{name}_{i}", v, node)
        return tuple(value)
    if isinstance(value, Var):
        parser.state.setdefault(_LOOP_VARS, []).append(value)
        return IRBuilder.name(name, value)
    parser.report_error(node, f"cannot bind a {type(value).__name__} in a for statement")


def bind_with_value(parser, name: str, value: Any, node) -> Any:
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            bind_with_value(parser, f"{name}_{i}", v, node)
        return value
    if isinstance(value, (Buffer, Var)):
        return IRBuilder.name(name, value)
    if isinstance(value, IRBuilderFrame):  # `with T.block("b") as b` binds the frame itself
        return value
    parser.report_error(node, f"cannot bind a {type(value).__name__} in a with statement")


def bind_assign_value(parser, name: str, value: Any, node) -> Any:
    if isinstance(value, types.FunctionType) and value.__name__ == "<lambda>":
        # TVM cannot bind a function to a TIR name either; inlining it would hide that
        parser.report_error(node, f"cannot bind a lambda to {name!r} in a TIR function: write "
                                  "the expression out, or define a Python helper function "
                                  "outside the @T.prim_func and call it")
    if isinstance(value, T.meta_var):
        return value.value
    if isinstance(value, EqualOp):
        value = value.asobject()
    if isinstance(value, IRBuilderFrame):
        result = _enter_until_scope_ends(value)
        IRBuilder.name(name, result)
        return result
    if isinstance(value, Buffer):
        return IRBuilder.name(name, value)
    if isinstance(value, IterVar):
        IRBuilder.name(name, value.var)
        return value
    if isinstance(value, Var) and not _in_var_table(parser, value):
        return IRBuilder.name(name, value)
    if isinstance(value, PrimExpr):
        frame = T.LetStmt(value)
        IRBuilder.name(name, frame.var)
        _enter_until_scope_ends(frame)
        return frame.var
    return value  # a Python value: kept by the parser only (metaprogramming)


# -- the function ---------------------------------------------------------------------------------
_INSIDE = "tir.inside_function"


@contextlib.contextmanager
def _inside_function(parser):
    parser.state[_INSIDE] = True
    try:
        yield
    finally:
        parser.state[_INSIDE] = False


def _decorator(parser, node: ast.FunctionDef) -> Any:
    """The ``T.prim_func`` (or ``T.prim_func(...)``) decorating ``node``, if any."""
    for decorator in node.decorator_list:
        value = parser.eval_expr(decorator)
        if getattr(value, "dispatch_token", None) == TOKEN:
            return value
    return None


def _first_block(func) -> Any:
    """The first block statement (BlockRealize) the script of ``func`` writes, or None."""
    from mlckit.tir.schedule.ir_utils import walk
    from mlckit.tir.stmt import BlockRealize

    found = []
    walk(func.body, lambda n: found.append(n) if isinstance(n, BlockRealize) and n.span is not None
         and n.span != func.span and not found else None)  # not the implicit root block
    return found[0] if found else None


def _check_tirx_blocks(parser, node: ast.FunctionDef, func) -> None:
    """TVM 0.27's ``tirx`` keeps blocks to functions declared ``@T.prim_func(s_tir=True)``."""
    realize = _first_block(func)
    if realize is not None:
        raise DiagnosticError(
            f"the block {realize.block.name_hint!r} is in a function declared @T.prim_func "
            "without s_tir=True: in TVM >= 0.24's tirx namespace a function with blocks is "
            f"declared @T.prim_func(s_tir=True) — write that above `def {node.name}` (TVM 0.27 "
            "refuses this function as not well-formed)", realize.span, parser.source.full_text)


def _annotation(parser, node: ast.expr) -> Any:
    value = parser.eval_expr(node)
    if callable(value) and not isinstance(value, (Buffer, Var)):
        value = value()
    return value


@_register("FunctionDef")
def visit_function_def(parser, node: ast.FunctionDef):
    """``def f(params): body`` under ``@T.prim_func``: build and check one PrimFunc."""
    if parser.state.get(_INSIDE):
        parser.report_error(
            node, f"a nested function definition ({node.name!r}) is not supported inside a TIR "
                  "function: define the helper outside the @T.prim_func, as a Python function "
                  "called while the script is parsed")
    decorator = _decorator(parser, node)
    kwargs = dict(getattr(decorator, "decorator_kwargs", {}) or {})
    private = bool(kwargs.get("private", kwargs.get("is_private", False)))
    check = kwargs.get("check_well_formed", True) and parser.state.get(
        "ir.check_well_formed", True)
    namespace = getattr(decorator, "tir_namespace", "tir")
    parser.dialect_builtins.setdefault(TOKEN, {})["range"] = T.range_sugar
    standalone = not (IRBuilder.is_in_scope() and IRBuilder.current().frames)
    frame = T.prim_func(is_private=private)
    frame.spelling = "tirx" if kwargs.get("s_tir") or namespace == "tirx" else "tir"
    with contextlib.ExitStack() as stack:
        if standalone:
            stack.enter_context(IRBuilder())
        stack.enter_context(parser.var_table.with_frame())
        stack.enter_context(parser.with_dispatch_token(TOKEN))
        stack.enter_context(_inside_function(parser))
        with frame:
            T.func_name(node.name)
            for name, var in type_var_dims(parser, node).items():
                parser.var_table.add(name, var)
            for name, var in buffer_string_dims(parser, node).items():
                parser.var_table.add(name, var)
            if node.returns is not None:
                ret = parser.eval_expr(node.returns)
                if ret is not None:
                    T.func_ret(getattr(ret, "dtype", ret))
            args = node.args
            if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
                parser.report_error(node, "a PrimFunc takes plain positional parameters only")
            for arg in args.args:
                if arg.annotation is None:
                    parser.report_error(
                        arg, f"the parameter {arg.arg!r} needs a type annotation, e.g. "
                             f'{arg.arg}: T.Buffer((128,), "float32") or {arg.arg}: T.handle')
                ann = _annotation(parser, arg.annotation)
                with span_scope(parser.span(arg)):
                    try:
                        param = T.arg(arg.arg, ann)
                    except (TypeError, ValueError) as err:
                        parser.report_error(arg.annotation, str(err))
                parser.var_table.add(arg.arg, param)
            parser.visit_body(node.body)
    func = frame.result
    if check and namespace == "tirx" and not kwargs.get("s_tir"):
        _check_tirx_blocks(parser, node, func)
    if check:
        from mlckit.tir.analysis.verify_well_formed import verify_well_formed

        try:
            verify_well_formed(func, parser.source.full_text)
        except DiagnosticError as err:
            if err.span is None:
                raise DiagnosticError(err.message, parser.span(node), parser.source.full_text) \
                    from None
            raise
    return func


# -- loops and scopes ---------------------------------------------------------------------------------
@_register("For")
def visit_for(parser, node: ast.For):
    """``for i in range(n)`` / ``T.grid`` / ``T.serial`` / ``T.parallel`` ... loops."""
    if node.orelse:
        parser.report_error(node, "for ... else is not supported in TIR")
    frame = parser.eval_expr(node.iter)
    if not isinstance(frame, ForFrame):
        parser.report_error(
            node.iter,
            "a TIR loop must iterate over one of: range, T.serial, T.grid, T.parallel, "
            f"T.vectorized, T.unroll, T.thread_binding (got a {type(frame).__name__})",
        )
    with parser.var_table.with_frame():
        with frame as iters:
            if isinstance(node.target, (ast.Tuple, ast.List)):
                iters = list(frame.vars)
            parser.eval_assign(node.target, iters, _fresh(bind_for_value))
            parser.visit_body(node.body)


@_register("While")
def visit_while(parser, node: ast.While):
    """``while cond:`` — a While statement."""
    if node.orelse:
        parser.report_error(node, "while ... else is not supported in TIR")
    with parser.var_table.with_frame():
        cond = parser.eval_expr(node.test)
        with T.While(cond):
            parser.visit_body(node.body)


@_register("With")
def visit_with(parser, node: ast.With):
    """``with T.block("C"):``, ``with T.init():``, ``with T.LetStmt(v) as x:`` …"""
    with contextlib.ExitStack() as stack:
        stack.enter_context(parser.var_table.with_frame())
        for item in node.items:
            frame = parser.eval_expr(item.context_expr)
            if not isinstance(frame, IRBuilderFrame):
                parser.report_error(
                    item.context_expr,
                    f"a `with` statement in TIR needs a frame such as T.block(...) or "
                    f"T.init(), got a {type(frame).__name__}",
                )
            with span_scope(parser.span(item.context_expr)):
                result = stack.enter_context(frame)
            if item.optional_vars is not None:
                parser.eval_assign(item.optional_vars, result, _fresh(bind_with_value))
        parser.visit_body(node.body)


# -- assignments -----------------------------------------------------------------------------------
def _store(parser, target: ast.Subscript, value: Any) -> None:
    buffer = parser.eval_expr(target.value)
    if not isinstance(buffer, Buffer):
        parser.report_error(target.value, f"only buffers can be assigned with [...], but this "
                                          f"is a {type(buffer).__name__}")
    indices = check_indices(parser, target, buffer, parser.eval_expr(target.slice))
    if len(indices) != len(buffer.shape):
        parser.report_error(target, f"buffer {buffer.name!r} has {len(buffer.shape)} "
                                    f"dimension(s) but is indexed with {len(indices)} index(es)")
    if isinstance(value, EqualOp):
        value = value.asobject()
    _warn_lossy_store(parser, target, buffer, value)
    T.buffer_store(buffer, value, indices)


def _flat_indices(indices) -> list:
    if isinstance(indices, (tuple, list)):
        return [i for x in indices for i in _flat_indices(x)]
    return [indices]


def check_indices(parser, node: ast.Subscript, buffer: Buffer, indices) -> list:
    """The indices of ``buffer[...]`` as a list, each an integer (or a slice of integers);
    a float or boolean index is refused here, where the script wrote it."""
    flat = _flat_indices(indices)

    def bad(x) -> str | None:
        if isinstance(x, slice):
            return next((b for b in (bad(p) for p in (x.start, x.stop, x.step) if p is not None)
                         if b), None)
        if isinstance(x, EqualOp):
            x = x.asobject()
        if isinstance(x, bool):
            return "bool"
        if isinstance(x, (int, np.integer)):
            return None
        if isinstance(x, PrimExpr):
            return None if dt.is_int(x.dtype) or dt.is_uint(x.dtype) else x.dtype
        return type(x).__name__

    for k, x in enumerate(flat):
        kind = bad(x)
        if kind is not None:
            where = node.slice.elts[k] if isinstance(node.slice, ast.Tuple) and \
                len(node.slice.elts) == len(flat) else node.slice
            parser.report_error(
                where, f"index {k} of buffer {buffer.name!r} is a {kind}, but buffer indices must "
                       "be integers: use an integer expression (T.Cast(\"int32\", x) to convert)")
    return flat


def _warn_lossy_store(parser, node: ast.AST, buffer: Buffer, value: Any) -> None:
    """TVM warns when a store casts a float value into an integer buffer."""
    if not (dt.is_int(buffer.dtype) or dt.is_uint(buffer.dtype)):
        return
    if isinstance(value, PrimExpr):
        source = value.dtype
    elif isinstance(value, float):
        source = "float32"
    else:
        return
    if dt.is_float(source):
        warn_at(parser, node, f"casting in this store may lose precision: buffer "
                              f"{buffer.name!r} is {buffer.dtype} but the value is {source}; "
                              f"write T.Cast(\"{buffer.dtype}\", ...) to make the conversion "
                              "explicit")


def warn_at(parser, node: ast.AST, message: str) -> None:
    """A located warning (``warnings.warn``), rendered like a DiagnosticError."""
    warnings.warn(DiagnosticWarning(message, parser.span(node), parser.source.full_text),
                  stacklevel=2)


@_register("Assign")
def visit_assign(parser, node: ast.Assign):
    """``A[i] = value`` (a store) or ``x = value`` (a binding, see the module doc)."""
    if len(node.targets) != 1:
        parser.report_error(node, "chained assignments like a = b = c are not supported")
    if is_string_dim_declaration(node):
        return  # declared with the parameters' string dims
    target = node.targets[0]
    value = parser.eval_expr(node.value)
    if isinstance(target, ast.Subscript):
        _store(parser, target, value)
    else:
        parser.eval_assign(target, value, _fresh(bind_assign_value))


@_register("AugAssign")
def visit_aug_assign(parser, node: ast.AugAssign):
    """``A[i] += value`` stores ``A[i] + value``; ``x += 1`` rebinds ``x``."""
    current = parser.eval_expr(node.target)
    rhs = parser.eval_expr(node.value)
    op = parser.evaluator.op(type(node.op), _BINARY[type(node.op)])
    value = op(current, rhs)
    if isinstance(node.target, ast.Subscript):
        _store(parser, node.target, value)
    else:
        parser.eval_assign(node.target, value, _fresh(bind_assign_value))


@_register("AnnAssign")
def visit_ann_assign(parser, node: ast.AnnAssign):
    """``x: T.int32 = value`` — a LetStmt binding a new variable of that type."""
    if node.value is None:
        parser.report_error(node, "a TIR variable declaration needs a value: x: T.int32 = ...")
    value = parser.eval_expr(node.value)
    var = _annotation(parser, node.annotation)
    if not isinstance(var, Var):
        parser.report_error(node.annotation, "the annotation of a TIR binding must be a type "
                                             "such as T.int32 or T.float32")
    if not isinstance(node.target, ast.Name):
        parser.report_error(node.target, "a TIR binding assigns one name")
    check_fresh_name(parser, node.target.id, var, node.target)
    IRBuilder.name(node.target.id, var)
    parser.var_table.add(node.target.id, var)
    if isinstance(value, EqualOp):
        value = value.asobject()
    _enter_until_scope_ends(T.LetStmt(value, var=var))


# -- control flow ------------------------------------------------------------------------------------
@_register("If")
def visit_if(parser, node: ast.If):
    """``if cond:`` — IfThenElse for a TIR condition; chosen now for a Python one."""
    with parser.var_table.with_frame():
        cond = parser.eval_expr(node.test)
        if isinstance(cond, EqualOp):
            cond = cond.asobject()
        if isinstance(cond, PrimExpr):
            with T.If(cond):
                with T.Then():
                    with parser.var_table.with_frame():
                        parser.visit_body(node.body)
                if node.orelse:
                    with T.Else():
                        with parser.var_table.with_frame():
                            parser.visit_body(node.orelse)
        elif isinstance(cond, (bool, int)) or cond is None:
            with parser.var_table.with_frame():
                parser.visit_body(node.body if cond else node.orelse)
        else:
            parser.report_error(node.test, f"an if condition must be a boolean expression, "
                                           f"got a {type(cond).__name__}")


@_register("Assert")
def visit_assert(parser, node: ast.Assert):
    """``assert cond, "message"`` — an AssertStmt around what follows."""
    cond = parser.eval_expr(node.test)
    if isinstance(cond, EqualOp):
        cond = cond.asobject()
    message = parser.eval_expr(node.msg) if node.msg is not None else ""
    _enter_until_scope_ends(T.Assert(cond, message))


@_register("Expr")
def visit_expr_stmt(parser, node: ast.Expr):
    """An expression statement: a call like ``T.reads(...)``, a docstring, or ``T.evaluate``."""
    value = parser.eval_expr(node.value)
    if value is None or isinstance(value, str):
        return
    if isinstance(value, EqualOp):
        value = value.asobject()
    if isinstance(value, IRBuilderFrame):
        _enter_until_scope_ends(value)
    elif isinstance(value, PrimExpr):
        T.evaluate(value)
    elif isinstance(value, (bool, int)):
        T.evaluate(E.const(value))
    else:
        parser.report_error(node, f"this expression statement gives a {type(value).__name__}, "
                                  "which is not a TIR statement")


@_register("Return")
def visit_return(parser, node: ast.Return):
    parser.report_error(node, "`return` is not supported in a TIR function: write results "
                              "into an output buffer instead")


# -- operators on TIR expressions --------------------------------------------------------------------
def _is_expr(x) -> bool:
    return isinstance(x, (PrimExpr, EqualOp))


def _cmp(cls, py):
    def apply(a, b):
        if not (_is_expr(a) or _is_expr(b)):
            return py(a, b)
        a, b = E.convert(a), E.convert(b)
        a, b = E._match(a, b)
        return cls(a, b)

    return apply


def _bool_operand(x):
    if isinstance(x, bool):
        return E.IntImm("bool", x)
    return E.convert(x)


def _logical(cls, py):
    def apply(a, b):
        if not (_is_expr(a) or _is_expr(b)):
            return py(a, b)
        return cls(_bool_operand(a), _bool_operand(b))

    return apply


dispatch.register_op(TOKEN, ast.Eq)(_cmp(E.EQ, lambda a, b: a == b))
dispatch.register_op(TOKEN, ast.NotEq)(_cmp(E.NE, lambda a, b: a != b))
dispatch.register_op(TOKEN, ast.Lt)(_cmp(E.LT, lambda a, b: a < b))
dispatch.register_op(TOKEN, ast.LtE)(_cmp(E.LE, lambda a, b: a <= b))
dispatch.register_op(TOKEN, ast.Gt)(_cmp(E.GT, lambda a, b: a > b))
dispatch.register_op(TOKEN, ast.GtE)(_cmp(E.GE, lambda a, b: a >= b))
dispatch.register_op(TOKEN, ast.And)(_logical(E.And, lambda a, b: a and b))
dispatch.register_op(TOKEN, ast.Or)(_logical(E.Or, lambda a, b: a or b))


@dispatch.register_op(TOKEN, ast.Not)
def _not(a):
    if _is_expr(a):
        return E.Not(_bool_operand(a))
    return not a


@dispatch.register_op(TOKEN, ast.Subscript)
def _load(parser, node: ast.Subscript, value, index):
    """``A[i, j]`` on a buffer: its indices must be integers (checked where they are written)."""
    if isinstance(value, Buffer):
        check_indices(parser, node, value, index)
    return value[index]

