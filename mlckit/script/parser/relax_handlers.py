"""Parser handlers of the Relax dialect (``@R.function`` bodies), as TVM's relax parser.

Statements: ``lv = value`` / ``lv: R.Tensor(...) = value`` (bindings), ``a, b = tup``,
``with R.dataflow():``, ``R.output(...)``, ``if``/``else`` (an If bound to the variable both
branches assign last), ``return``, ``n = T.int64()`` (symbolic vars), nested
``@R.function`` definitions (local functions).
"""

from __future__ import annotations

import ast
import numbers
from typing import Any

from mlckit.ir.diagnostics import DiagnosticError
from mlckit.relax.expr import Expr, Function, Tuple, TupleGetItem
from mlckit.relax.struct_info import TupleStructInfo
from mlckit.script.ir_builder.base import IRBuilder
from mlckit.script.ir_builder.relax import frame as rframe
from mlckit.script.ir_builder.relax import ir as R
from mlckit.script.ir_builder.relax.struct_info import symbolic_var_names, to_struct_info
from mlckit.tir import expr as tx

from . import dispatch
from .type_vars import type_var_dims

_INSIDE = "relax.inside_function"


def decorator_kwargs(parser, node: ast.FunctionDef, token: str = "relax") -> dict:
    """The keyword arguments of the def's ``@R.function(...)`` decorator."""
    for dec in node.decorator_list:
        value = parser.eval_expr(dec)
        if getattr(value, "dispatch_token", None) == token:
            return dict(getattr(value, "decorator_kwargs", {}) or {})
    return {}


def _names(parser) -> dict:
    return parser.namespace()


def eval_struct_info(parser, node: ast.expr, allow_strings: bool = True):
    """Evaluate an annotation into a StructInfo; string dims resolve in the parser's names."""
    value = parser.eval_expr(node)
    try:
        return to_struct_info(value, _names(parser) if allow_strings else None)
    except DiagnosticError:
        raise
    except Exception as err:  # noqa: BLE001 - located at the annotation
        from .evaluator import _describe

        parser.report_error(node, _describe(err))


def _collect_symbolic_vars(parser, node: ast.FunctionDef) -> dict:
    """String dims of the parameters → int64 tir Vars; ``n = T.int64()`` statements at the
    top of the body give their own Var for such a name (as TVM's parser)."""
    symbolic: dict[str, Any] = {}
    for a in node.args.args:
        if a.annotation is None:
            parser.report_error(a, f"parameter {a.arg!r} needs a struct info annotation, e.g. "
                                   f"{a.arg}: R.Tensor((n, 128), \"float32\")")
        try:
            names = symbolic_var_names(parser.eval_expr(a.annotation))
        except DiagnosticError:
            raise
        for name in names:
            if name not in symbolic:
                symbolic[name] = tx.Var(name, "int64")
    for stmt in node.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            elts = target.elts if isinstance(target, ast.Tuple) else [target]
            if elts and all(isinstance(t, ast.Name) and t.id in symbolic for t in elts):
                values = parser.eval_expr(stmt.value)
                values = list(values) if isinstance(target, ast.Tuple) else [values]
                for t, v in zip(elts, values):
                    if isinstance(v, tx.Var):
                        v.name_hint = t.id
                        symbolic[t.id] = v
    return symbolic


@dispatch.register("relax", "FunctionDef")
def visit_function_def(parser, node: ast.FunctionDef) -> Any:
    inner = parser.state.get(_INSIDE, False)
    if inner:
        return _visit_local_function(parser, node)
    if IRBuilder.is_in_scope() and IRBuilder.current().frames:
        return _parse_function(parser, node, inner=False)
    with IRBuilder() as ib:
        _parse_function(parser, node, inner=False)
    func = ib.get()
    if decorator_kwargs(parser, node).get("check_well_formed", True):
        from mlckit.relax.analysis.well_formed import check_well_formed

        check_well_formed(func, parser.source.full_text)
    return func


def _visit_local_function(parser, node: ast.FunctionDef) -> None:
    for dec in node.decorator_list:
        if getattr(parser.eval_expr(dec), "dispatch_token", None) == "tir":
            parser.report_error(node, "an inline @T.prim_func is not allowed in a Relax function: "
                                      "define it in the @I.ir_module class and use R.call_tir")
    with IRBuilder() as ib:
        _parse_function(parser, node, inner=True)
    func = ib.get()
    var = R.emit(func, span=parser.span(node))
    IRBuilder.name(node.name, var)
    parser.var_table.add(node.name, var)


def _spelling(node: ast.FunctionDef) -> str | None:
    """``"tirx"`` where the function writes TVM >= 0.24's ``out_ty=``, ``"tir"`` where it
    writes ``out_sinfo=``, None where it writes neither (it then prints as its module)."""
    words = {k.arg for k in ast.walk(node) if isinstance(k, ast.keyword)}
    return "tirx" if "out_ty" in words else "tir" if "out_sinfo" in words else None


def _parse_function(parser, node: ast.FunctionDef, inner: bool) -> None:
    kwargs = decorator_kwargs(parser, node)
    pure = kwargs.get("pure", True)
    private = inner or kwargs.get("private", False)
    previous = parser.state.get(_INSIDE, False)
    parser.state[_INSIDE] = True
    try:
        with parser.var_table.with_frame(), parser.with_dispatch_token("relax"):
            frame = R.function(is_pure=pure, is_private=private)
            frame.span = parser.span(node)
            frame.spelling = _spelling(node)
            with frame:
                R.func_name(node.name)
                declared = type_var_dims(parser, node)
                for name, var in declared.items():
                    parser.var_table.add(name, var)
                symbolic = {**declared, **_collect_symbolic_vars(parser, node)}
                for name, var in symbolic.items():
                    parser.var_table.add(name, var)
                frame.symbolic_vars.update(symbolic)
                if node.returns is not None:
                    R.func_ret_struct_info(eval_struct_info(parser, node.returns))
                for a in node.args.args:
                    sinfo = eval_struct_info(parser, a.annotation)
                    var = R.arg(a.arg, sinfo)
                    var.span = parser.span(a)
                    parser.var_table.add(a.arg, var)
                if node.args.vararg or node.args.kwarg or node.args.kwonlyargs:
                    parser.report_error(node, "Relax functions take positional parameters only")
                parser.visit_body(node.body)
                if frame.output is None:
                    parser.report_error(node, f"function {node.name!r} has no `return`: a Relax "
                                              "function must return a value")
    finally:
        parser.state[_INSIDE] = previous


def _located(parser, node, fn, *args, **kwargs):
    """Run an IRBuilder call, turning its errors into a DiagnosticError at ``node``."""
    try:
        return fn(*args, **kwargs)
    except DiagnosticError:
        raise
    except Exception as err:  # noqa: BLE001
        from .evaluator import _describe

        parser.report_error(node, _describe(err))


def _bind(stmt: ast.stmt, anno=None):
    def bind(parser, name: str, value: Any, target: ast.AST) -> Any:
        span = parser.span(stmt)
        if isinstance(value, tx.Var):
            if value.name_hint and value.name_hint not in (name, "v") and value.name_hint != "":
                parser.report_error(target, "cannot define a TIR variable with a different name: "
                                            f"the left-hand side should be {value.name_hint!r}")
            previous = parser.var_table.get(name, None)
            if isinstance(previous, tx.Var):
                if previous.dtype != value.dtype:
                    parser.report_error(target, f"symbolic variable {name!r} was {previous.dtype}, "
                                                f"now declared {value.dtype}")
                return previous
            if previous is not None and not isinstance(previous, tx.Var) and \
                    parser.var_table.exist(name):
                parser.report_error(target, f"cannot redefine {name!r} as a TIR variable")
            value.name_hint = name
            return value
        if isinstance(value, (tuple, list)) and any(isinstance(v, Expr) for v in value):
            from mlckit.relax.utils import convert_to_expr

            value = _located(parser, stmt, convert_to_expr, value)
        if isinstance(value, numbers.Number) and not isinstance(value, bool):
            value = R.const(value)
        if isinstance(value, Expr):
            var = _located(parser, stmt, R.emit, value, anno, span=span)
        elif isinstance(value, R.MatchCastPair):
            if anno is not None:
                from mlckit.ir.structural import structural_equal

                if not structural_equal(to_struct_info(anno), value.struct_info):
                    parser.report_error(stmt, "the annotation of a R.match_cast binding must be "
                                              "the struct info it casts to")
            var = _located(parser, stmt, R.emit_match_cast, value.value, value.struct_info,
                           span=span)
        else:
            return value
        IRBuilder.name(name, var)
        return var

    return bind


def _unpack_relax(parser, target: ast.AST, value: Any) -> Any:
    """``a, b = tup``: a Relax tuple value unpacks into ``tup[0]``, ``tup[1]`` bindings."""
    if not isinstance(target, (ast.Tuple, ast.List)) or not isinstance(value, Expr) or \
            isinstance(value, Tuple):
        return value
    from mlckit.relax.analysis import is_leaf

    sinfo = _located(parser, target, lambda: value.struct_info)
    if not isinstance(sinfo, TupleStructInfo):
        parser.report_error(target, f"cannot unpack a non-tuple value into {len(target.elts)} "
                                    "names")
    if not is_leaf(value):
        value = _located(parser, target, R.emit, value, span=parser.span(target))
    return [TupleGetItem(value, i) for i in range(len(sinfo.fields))]


@dispatch.register("relax", "Assign")
def visit_assign(parser, node: ast.Assign) -> None:
    if len(node.targets) != 1:
        parser.report_error(node, "chained assignments like 'a = b = c' are not supported")
    target = node.targets[0]
    value = parser.eval_expr(node.value)
    value = _unpack_relax(parser, target, value)
    parser.eval_assign(target, value, _bind(node))


@dispatch.register("relax", "AnnAssign")
def visit_ann_assign(parser, node: ast.AnnAssign) -> None:
    if node.value is None:
        parser.report_error(node, "an annotated name needs a value: lv: R.Tensor(...) = value")
    anno = eval_struct_info(parser, node.annotation)
    value = parser.eval_expr(node.value)
    parser.eval_assign(node.target, value, _bind(node, anno))


@dispatch.register("relax", "Expr")
def visit_expr_stmt(parser, node: ast.Expr) -> None:
    if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
        return  # docstring
    value = parser.eval_expr(node.value)
    if isinstance(value, Expr):
        var = _located(parser, node, R.emit, value, span=parser.span(node))
        IRBuilder.name("_", var)
        sinfo = var.struct_info
        if not (isinstance(sinfo, TupleStructInfo) and not sinfo.fields):
            from mlckit.relax.analysis import describe_struct_info

            parser.report_error(node, "a Relax expression that returns a value must be bound to a "
                                      f"variable (lv = ...); this one returns "
                                      f"{describe_struct_info(sinfo)}")
    elif isinstance(value, R.MatchCastPair):
        parser.report_error(node, "R.match_cast must be bound to a variable: y = R.match_cast(...)")
    elif value is not None:
        parser.report_error(node, f"unsupported expression statement (a {type(value).__name__})")


@dispatch.register("relax", "With")
def visit_with(parser, node: ast.With) -> None:
    if len(node.items) != 1:
        parser.report_error(node, "only one `with` item is allowed: with R.dataflow():")
    item = node.items[0]
    if item.optional_vars is not None:
        parser.report_error(item.context_expr, "Relax syntax doesn't allow binding `with` to a "
                                               "variable: write `with R.dataflow():`")
    frame = parser.eval_expr(item.context_expr)
    if not isinstance(frame, rframe.BlockFrame):
        parser.report_error(item.context_expr, "only `with R.dataflow():` is supported in a "
                                               "Relax function")
    frame.span = parser.span(node)
    # Names bound in the block stay visible after it: using a non-output one is then
    # reported by the well-formedness check ("DataflowVar ... used outside ...").
    _located(parser, node, frame.__enter__)
    parser.visit_body(node.body)
    _located(parser, node, frame.__exit__, None, None, None)


@dispatch.register("relax", "Return")
def visit_return(parser, node: ast.Return) -> None:
    if node.value is None:
        parser.report_error(node, "`return` needs a value in a Relax function")
    value = parser.eval_expr(node.value)
    _located(parser, node, R.func_ret_value, value, span=parser.span(node))


@dispatch.register("relax", "If")
def visit_if(parser, node: ast.If) -> None:
    if not node.orelse:
        parser.report_error(node, "`if` in a Relax function needs an `else` branch: both branches "
                                  "must bind the same variable")
    cond = parser.eval_expr(node.test)
    if_frame = _located(parser, node.test, R.If, cond)
    if_frame.span = parser.span(node)
    _located(parser, node, if_frame.__enter__)
    for maker, body in ((R.Then, node.body), (R.Else, node.orelse)):
        branch = maker()
        with parser.var_table.with_frame():
            _located(parser, node, branch.__enter__)
            parser.visit_body(body)
            _located(parser, body[-1], branch.__exit__, None, None, None)
    _located(parser, node, if_frame.__exit__, None, None, None)
    parser.var_table.add(if_frame.var_name, if_frame.var)


def declare_function(parser, node: ast.FunctionDef):
    """The GlobalVar of a ``@R.function`` of a module, typed by its signature (parsed before
    any body, so ``cls.f(x)`` gets the return struct info of ``f``)."""
    from mlckit.relax.expr import Var as RVar
    from mlckit.relax.struct_info import ObjectStructInfo
    from mlckit.script.ir_builder.ir import decl_function

    kwargs = decorator_kwargs(parser, node)
    with parser.var_table.with_frame(), parser.with_dispatch_token("relax"):
        declared = type_var_dims(parser, node)
        for name, var in declared.items():
            parser.var_table.add(name, var)
        symbolic = {**declared, **_collect_symbolic_vars(parser, node)}
        for name, var in symbolic.items():
            parser.var_table.add(name, var)
        ret = eval_struct_info(parser, node.returns) if node.returns is not None \
            else ObjectStructInfo()
        params = [RVar(a.arg, eval_struct_info(parser, a.annotation)) for a in node.args.args]
    signature = Function(params, Tuple([]), ret, kwargs.get("pure", True))
    return _located(parser, node, decl_function, node.name, signature)


dispatch.register("relax", "tvm_declare_function")(declare_function)
