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


def _buffer_shape_strings(annotation: ast.expr) -> list[ast.Constant]:
    """The string dims of ``T.Buffer(("m", "n"), ...)`` annotations: the string constants of
    a Buffer call's first argument (its shape)."""
    found = []
    for call in ast.walk(annotation):
        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr == "Buffer" and call.args
                and isinstance(call.args[0], (ast.Tuple, ast.List))):
            found += [e for e in call.args[0].elts
                      if isinstance(e, ast.Constant) and isinstance(e.value, str)
                      and e.value.isidentifier()]
    return found


def buffer_string_dims(parser, node: ast.FunctionDef) -> dict[str, Var]:
    """Shape variables a PrimFunc declares with string dims, as TVM 0.27 prints them::

        def mm(A: T.Buffer(("m", "n"), "float32"), C: T.Buffer((m, n), "float32")):
            m, n = T.int32(), T.int32()

    The string dims are rewritten in place into names, and each gets the Var its
    ``m = T.int32()`` line at the top of the body declares (int32 when there is none)."""
    names: dict[str, Var] = {}
    for arg in node.args.args:
        if arg.annotation is None:
            continue
        for const in _buffer_shape_strings(arg.annotation):
            names.setdefault(const.value, Var(const.value, "int32"))
            const.__class__ = ast.Name  # the dim now reads the variable by its name
            const.id, const.ctx = const.value, ast.Load()
    for stmt in node.body:
        targets = _declared_names(stmt)
        if not targets or not set(targets) <= set(names):
            continue
        values = parser.eval_expr(stmt.value)
        values = list(values) if isinstance(values, (tuple, list)) else [values]
        for name, value in zip(targets, values):
            if isinstance(value, Var):
                value.name_hint = name
                names[name] = value
        stmt.mlckit_declares_string_dims = True  # the body's visit skips this line
    return names


def _declared_names(stmt: ast.stmt) -> list[str]:
    """``m, n = ...`` / ``k = ...``: the assigned names (empty for anything else)."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        return []
    target = stmt.targets[0]
    elts = target.elts if isinstance(target, ast.Tuple) else [target]
    return [t.id for t in elts] if all(isinstance(t, ast.Name) for t in elts) else []


def is_string_dim_declaration(stmt: ast.stmt) -> bool:
    """Whether ``stmt`` is the ``m, n = T.int32(), T.int32()`` line of string dims (already
    declared by :func:`buffer_string_dims`)."""
    return getattr(stmt, "mlckit_declares_string_dims", False)
