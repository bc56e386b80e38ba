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
from collections.abc import Callable

_HANDLERS: dict[tuple[str, str], Callable] = {}
_OPS: dict[tuple[str, type], Callable] = {}


def register(token: str, node_type: str):
    """Register the handler of AST node type ``node_type`` (e.g. "For") in dialect ``token``."""

    def wrap(func: Callable) -> Callable:
        _HANDLERS[(token, node_type)] = func
        return func

    return wrap


def get(token: str, node_type: str) -> Callable | None:
    """The handler for ``node_type`` in ``token``, falling back to the "default" dialect."""
    return _HANDLERS.get((token, node_type)) or _HANDLERS.get(("default", node_type))


def register_op(token: str, op_type: type[ast.AST]):
    """Register how the operator ``op_type`` (``ast.Add``, ``ast.Not`` …) applies in ``token``."""

    def wrap(func: Callable) -> Callable:
        _OPS[(token, op_type)] = func
        return func

    return wrap


def get_op(token: str, op_type: type[ast.AST]) -> Callable | None:
    return _OPS.get((token, op_type))
