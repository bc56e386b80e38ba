"""Parser dispatch by dialect token, as in TVM's parser.

Each dialect ("tir", "relax", "ir") registers a handler per Python AST node type, and the
parser calls the handler of the dialect it is in::

    @register("tir", "For")
    def visit_for(parser, node: ast.For): ...

The expression evaluator likewise looks up how an operator (``ast.Add``, ``ast.And`` …)
is applied in a dialect; without an entry the Python operator applies.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable

_HANDLERS: dict[tuple[str, str], Callable] = {}
_OPS: dict[tuple[str, type], Callable] = {}
# a dialect whose handlers are imported when a script first uses it: relax's bring all of
# Relax, which a TIR-only script (and `from mlckit.script import tir as T`) does without
_LAZY_DIALECTS = {"relax": "mlckit.script.parser.relax_handlers"}


def _load(token: str) -> None:
    module = _LAZY_DIALECTS.pop(token, None)
    if module is not None:
        importlib.import_module(module)


def register(token: str, node_type: str):
    """Register the handler of AST node type ``node_type`` (e.g. "For") in dialect ``token``."""

    def wrap(func: Callable) -> Callable:
        _HANDLERS[(token, node_type)] = func
        return func

    return wrap


def get(token: str, node_type: str) -> Callable | None:
    """The handler for ``node_type`` in ``token``, falling back to the "default" dialect."""
    _load(token)
    return _HANDLERS.get((token, node_type)) or _HANDLERS.get(("default", node_type))


def has(token: str, node_type: str) -> bool:
    """Whether dialect ``token`` itself has a handler for ``node_type`` (no fallback)."""
    _load(token)
    return (token, node_type) in _HANDLERS


def register_op(token: str, op_type: type[ast.AST]):
    """Register how the operator ``op_type`` (``ast.Add``, ``ast.Not`` …) applies in ``token``."""

    def wrap(func: Callable) -> Callable:
        _OPS[(token, op_type)] = func
        return func

    return wrap


def get_op(token: str, op_type: type[ast.AST]) -> Callable | None:
    _load(token)
    return _OPS.get((token, op_type))
