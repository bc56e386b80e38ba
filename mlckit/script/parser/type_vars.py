"""Symbolic dimensions declared with ``typing.TypeVar``, as TVM >= 0.27 prints them.

TVM 0.27 prints a shape variable shared by a function's parameters once, at module level::

    n = TypeVar("n")
    ...
        def relu(X: T.Buffer((n, 128), "float32"), Y: T.Buffer((n, 128), "float32")): ...

and its parser gives each function that names ``n`` in a parameter or return annotation its
own int64 variable ``n``.  (PEP 695's ``def relu[n](...)`` is the same declaration.)
"""

from __future__ import annotations

import ast
import typing

from mlckit.tir.expr import Var


def _annotation_names(node: ast.FunctionDef) -> set[str]:
    """Names used in the parameter and return annotations, inside strings too."""
    annotations = [a.annotation for a in node.args.args if a.annotation is not None]
    if node.returns is not None:
        annotations.append(node.returns)
    names: set[str] = set()
    for annotation in annotations:
        for child in ast.walk(annotation):
            if isinstance(child, ast.Name):
                names.add(child.id)
            elif isinstance(child, ast.Constant) and isinstance(child.value, str):
                try:
                    names.update(n.id for n in ast.walk(ast.parse(child.value, mode="eval"))
                                 if isinstance(n, ast.Name))
                except SyntaxError:
                    continue
    return names


def type_var_dims(parser, node: ast.FunctionDef) -> dict[str, Var]:
    """A fresh int64 Var for each TypeVar (module level or PEP 695) that ``node``'s
    annotations name; the caller binds them in the function's scope."""
    params = {a.arg for a in node.args.args}
    dims: dict[str, Var] = {}
    for name in sorted(_annotation_names(node) - params):
        value = parser.lookup(name)
        if isinstance(value, typing.TypeVar):
            if value.__name__ != name:
                parser.report_error(node, f"the TypeVar bound to {name!r} is named "
                                          f"{value.__name__!r}: write {name} = TypeVar({name!r})")
            dims[name] = Var(name, "int64")
    for param in getattr(node, "type_params", []) or []:
        dims[param.name] = Var(param.name, "int64")
    return dims


def module_type_vars(statements: list[ast.stmt]) -> dict[str, typing.TypeVar]:
    """``n = TypeVar("n")`` lines at the top level of a script's text, as TVM prints them
    (its ``from typing import TypeVar`` header line is a comment): ``{"n": TypeVar("n")}``."""
    found = {}
    for stmt in statements:
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.Call)
                and isinstance(stmt.value.func, ast.Name) and stmt.value.func.id == "TypeVar"
                and len(stmt.value.args) == 1 and not stmt.value.keywords
                and isinstance(stmt.value.args[0], ast.Constant)
                and isinstance(stmt.value.args[0].value, str)):
            found[stmt.targets[0].id] = typing.TypeVar(stmt.value.args[0].value)
    return found
