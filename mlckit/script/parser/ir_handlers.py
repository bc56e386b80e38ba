"""Parser handlers of the IRModule dialect (``@I.ir_module`` classes), as TVM's ir parser.

The class is parsed in steps: non-function statements (``I.module_attrs({...})``), then a
GlobalVar is declared for every function (so ``cls.f`` / ``Module.f`` resolve in any body),
then each function is parsed with the dialect of its decorator.
"""

from __future__ import annotations

import ast
from typing import Any

from mlckit.error import TVMAttributeError
from mlckit.script.ir_builder.base import IRBuilder
from mlckit.script.ir_builder.ir import frame as iframe
from mlckit.script.ir_builder.ir import ir as I  # noqa: N812

from . import dispatch


class ModuleWithGlobalVars:
    """The class name (and ``cls``) while parsing a module: attributes are GlobalVars."""

    def __init__(self, name: str):
        self.__dict__["_name"] = name
        self.__dict__["__name__"] = f"the IRModule {name!r}"  # for "... has no attribute" errors

    def __getattr__(self, attr: str):
        raise TVMAttributeError(f"cannot find the function {attr!r} in the IRModule "
                             f"{self.__dict__['_name']!r}")

    def __repr__(self) -> str:
        return f"<IRModule {self.__dict__['_name']} being parsed>"


def _module_kwargs(parser, node: ast.ClassDef) -> dict:
    for dec in node.decorator_list:
        value = parser.eval_expr(dec)
        if getattr(value, "dispatch_token", None) == "ir":
            return dict(getattr(value, "decorator_kwargs", {}) or {})
    return {}


@dispatch.register("ir", "ClassDef")
def visit_class_def(parser, node: ast.ClassDef) -> Any:
    with IRBuilder() as ib:
        with parser.var_table.with_frame():
            frame = I.ir_module()
            with frame:
                proxy = ModuleWithGlobalVars(node.name)
                parser.var_table.add(node.name, proxy)
                parser.state["ir.module_name"] = node.name
                # @I.ir_module(check_well_formed=False) also spares the functions inside
                parser.state["ir.check_well_formed"] = _module_kwargs(parser, node).get(
                    "check_well_formed", True)
                with parser.with_dispatch_token("ir"):
                    for stmt in node.body:
                        if not isinstance(stmt, ast.FunctionDef):
                            parser.visit(stmt)
                defs = [s for s in node.body if isinstance(s, ast.FunctionDef)]
                tokens = {}
                for stmt in defs:
                    token = parser.decorator_token(stmt)
                    if token is None:
                        parser.report_error(stmt, f"the function {stmt.name!r} needs a TVMScript "
                                                  "decorator: @T.prim_func or @R.function")
                    tokens[stmt.name] = token
                    if dispatch.has(token, "tvm_declare_function"):
                        declare = dispatch.get(token, "tvm_declare_function")
                        with parser.with_dispatch_token(token):
                            gv = declare(parser, stmt)
                    else:
                        gv = _declare_plain(parser, stmt)
                    proxy.__dict__[stmt.name] = gv
                for stmt in defs:
                    with parser.with_dispatch_token("ir"):
                        result = parser.visit(stmt)
                    gv = frame.global_var_map[stmt.name]
                    if frame.functions.get(gv) is None:
                        if result is None:
                            parser.report_error(stmt, f"the function {stmt.name!r} produced nothing")
                        I.def_function(stmt.name, result)
    mod = ib.get()
    if _module_kwargs(parser, node).get("check_well_formed", True):
        from mlckit.relax.analysis.well_formed import check_well_formed

        check_well_formed(mod, parser.source.full_text)
    return mod


def _declare_plain(parser, stmt: ast.FunctionDef):
    try:
        return I.decl_function(stmt.name, None)
    except Exception as err:  # noqa: BLE001
        parser.report_error(stmt, str(err))


@dispatch.register("ir", "Assign")
def visit_assign(parser, node: ast.Assign) -> None:
    if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
        parser.report_error(node, "only `name = function` assignments are allowed in an IRModule "
                                  "class")
    name = node.targets[0].id
    value = parser.eval_expr(node.value)
    from mlckit.relax.expr import ExternFunc, Function
    from mlckit.tir.function import PrimFunc

    if isinstance(value, (Function, PrimFunc, ExternFunc)):  # `f = R.ExternFunc("f")` too
        gv = I.decl_function(name, value)
        I.def_function(name, value)
        proxy = parser.var_table.get(parser.state.get("ir.module_name", ""), None)
        if proxy is not None and gv is not None:
            proxy.__dict__[name] = gv
    else:
        parser.var_table.add(name, value)


@dispatch.register("ir", "Expr")
def visit_expr(parser, node: ast.Expr) -> None:
    if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
        return  # docstring
    parser.eval_expr(node.value)


__all__ = ["ModuleWithGlobalVars", "iframe"]
