"""One traversal toolkit for TIR: the generic walks behind ``tir.stmt_functor``.

Every walk over TIR statements and expressions goes through one generic rule, read from
the nodes' own fields (as structural equality does): a node's children are the values of
its fields, except

- the fields naming something defined elsewhere: a load's or region's ``buffer``, a
  call's ``op``, a reduction's ``combiner``, a te load's ``producer`` (buffers, ops and
  tensors are leaves: their shapes are not part of the statement);
- a Var standing in a definition field (``For.loop_var``, ``LetStmt.var``, an
  ``IterVar.var``, ``Allocate.buffer_var``): a definition is not a use, so it is neither
  visited nor substituted, as in TVM;
- dicts (annotations) and plain values (names, kinds).

So a new node class needs no code here.  The functions:

- ``post_order_visit(node, f)`` / ``pre_order_visit(node, f)``: call ``f`` on every
  statement and expression (pre-order: ``f`` returning False skips the children);
- ``ir_transform(node, preorder, postorder, only_enable)``: rebuild bottom-up;
- ``substitute(node, vmap)``: replace variables; ``uses_var(node, pred)``: is one used;
This module sits low (it imports only the node base and TIR's expressions, so ``arith``
may use it); the statement classes register themselves when ``tir.stmt_functor`` loads
(``register_statements``), which ``mlckit.tir`` always imports.  TVM's names are in
``tir.stmt_functor`` (with ``renew_defs``); the class-based forms (``PyStmtExprVisitor`` / ``PyStmtExprMutator``) are in
``mlckit.tir.functor``.

Example::

    post_order_visit(func.body, lambda n: print(type(n).__name__))
    body = substitute(func.body, {n: 128})
    assert not uses_var(body, n)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from mlckit.ir.node import Node

from .expr import PrimExpr, Var
from .expr_build import const

__all__ = ["child_nodes", "ir_transform", "post_order_visit", "pre_order_visit",
           "register_statements", "stmt_uses_var", "substitute", "uses_var"]

# fields that name a thing defined elsewhere: never entered
OPAQUE_FIELDS = frozenset({"op", "buffer", "combiner", "producer"})
_FIELDS: dict[type, tuple] = {}  # class -> ((field name, is a definition field), ...)


class _Registry:
    stmt: tuple = ()  # the statement base class, once registered
    seq: type | None = None  # SeqStmt, rebuilt through ``make_seq`` (flattening)
    make_seq: Callable | None = None
    leaves: tuple = (Var,)  # never entered: Vars, and Buffers once registered


def register_statements(stmt: type, seq: type, make_seq: Callable, leaves: tuple) -> None:
    """Called by ``tir.stmt_functor``: the statement base class, SeqStmt and its flattening
    constructor, and the classes that are leaves (Buffer)."""
    _Registry.stmt = (stmt,)
    _Registry.seq = seq
    _Registry.make_seq = make_seq
    _Registry.leaves = (Var, *leaves)


def _is_visited(x) -> bool:
    return isinstance(x, (PrimExpr, *_Registry.stmt))


def _remake(x, changes: dict):
    if type(x) is _Registry.seq:
        return _Registry.make_seq(*changes["seq"])
    return x.replace(**changes)


def _fields_of(cls: type) -> tuple:
    fields = _FIELDS.get(cls)
    if fields is None:
        defs = set(cls._def_fields)
        fields = tuple((n, n in defs) for n in cls.field_names() if n not in OPAQUE_FIELDS)
        _FIELDS[cls] = fields
    return fields


def _is_leaf(x) -> bool:
    return (not isinstance(x, Node) or isinstance(x, _Registry.leaves)
            or hasattr(x, "_structural_key"))  # Op, GlobalVar: global names


def child_nodes(node) -> Iterator[Any]:
    """The direct children of ``node`` by the rule of the module docstring: nodes (lists
    and tuples are looked into), in field order.

    >>> from mlckit import tir
    >>> x = tir.Var("x", "int32")
    >>> [str(c) for c in child_nodes(x + 1)]
    ['x', '1']
    """
    if isinstance(node, (list, tuple)):
        for y in node:
            yield from _entered(y, False)
        return
    if _is_leaf(node):
        return
    for name, is_def in _fields_of(type(node)):
        yield from _entered(getattr(node, name), is_def)


def _entered(value, is_def: bool) -> Iterator[Any]:
    if isinstance(value, Node):
        if not (is_def and isinstance(value, Var)):
            yield value
    elif isinstance(value, (list, tuple)):
        for y in value:
            yield from _entered(y, is_def)


# -- visiting ---------------------------------------------------------------------------------
def post_order_visit(node, fvisit: Callable[[Any], Any]) -> None:
    """Call ``fvisit`` on every statement and expression under ``node`` (itself included),
    children first, each node once (as ``tvm.tir.stmt_functor.post_order_visit``).

    >>> from mlckit import tir
    >>> x = tir.Var("x", "int32")
    >>> seen = []
    >>> post_order_visit(x * 2 + 1, lambda n: seen.append(str(n)))
    >>> seen
    ['x', '2', 'x * 2', '1', 'x * 2 + 1']
    """
    done: set[int] = set()
    keep: list = []  # visited nodes stay alive, so that their ids are not reused meanwhile

    def visit(x):
        if id(x) in done:
            return
        for c in child_nodes(x):
            visit(c)
        done.add(id(x))
        keep.append(x)
        if _is_visited(x):
            fvisit(x)

    visit(node)


def pre_order_visit(node, fvisit: Callable[[Any], Any]) -> None:
    """Call ``fvisit`` on every statement and expression under ``node``, parents first;
    ``fvisit`` returning False skips that node's children (``pre_order_visit`` of TVM).

    >>> from mlckit import tir
    >>> x = tir.Var("x", "int32")
    >>> seen = []
    >>> pre_order_visit(x * 2 + 1, lambda n: seen.append(str(n)) or not isinstance(n, tir.Mul))
    >>> seen
    ['x * 2 + 1', 'x * 2', '1']
    """
    def visit(x):
        if _is_visited(x) and fvisit(x) is False:
            return
        for c in child_nodes(x):
            visit(c)

    visit(node)


def uses_var(node, pred) -> bool:
    """Whether a variable for which ``pred`` holds is used in ``node`` (a statement,
    expression, Range or list).  ``pred``: a function of the Var, a Var, or a set of Vars'
    ids.  Definitions (a loop's own variable) are not uses.

    >>> from mlckit import tir
    >>> x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    >>> uses_var(x + 1, x), uses_var(x + 1, lambda v: v.name == "y")
    (True, False)
    """
    if isinstance(pred, Var):
        var = pred
        pred = lambda v: v is var  # noqa: E731
    elif isinstance(pred, (set, frozenset)):
        ids = pred
        pred = lambda v: id(v) in ids  # noqa: E731

    def find(x) -> bool:
        if isinstance(x, Var):
            return bool(pred(x))
        return any(find(c) for c in child_nodes(x))

    return find(node)


stmt_uses_var = uses_var  # TVM's C++ name for the statement form

# -- rewriting --------------------------------------------------------------------------------
def _rebuild(x, pre, post, is_def: bool = False):
    """``x`` rebuilt bottom-up; ``pre(node)``/``post(node)`` give a replacement or None.
    Unchanged parts stay the same objects."""
    if isinstance(x, list):
        new = [_rebuild(y, pre, post, is_def) for y in x]
        return x if all(a is b for a, b in zip(new, x)) else new
    if isinstance(x, tuple):
        new = tuple(_rebuild(y, pre, post, is_def) for y in x)
        return x if all(a is b for a, b in zip(new, x)) else new
    if not isinstance(x, Node) or (is_def and isinstance(x, Var)):
        return x
    if pre is not None:
        got = pre(x)
        if got is not None:
            return got
    if not _is_leaf(x):
        changes = {}
        for name, d in _fields_of(type(x)):
            old = getattr(x, name)
            new = _rebuild(old, pre, post, d)
            if new is not old:
                changes[name] = new
        if changes:
            x = _remake(x, changes)
    if post is not None:
        got = post(x)
        if got is not None:
            return got
    return x


def ir_transform(node, preorder: Callable | None, postorder: Callable | None,
                 only_enable=None):
    """``node`` rebuilt bottom-up (``tvm.tir.stmt_functor.ir_transform``).

    ``preorder(n)`` runs before ``n``'s children: a result other than None replaces ``n``
    and its children are not visited.  ``postorder(n)`` runs on ``n`` with its children
    already transformed: a result other than None replaces it.  ``only_enable``: the type
    keys (``"tir.For"``) or classes of the nodes the functions see (default: every statement
    and expression).

    >>> from mlckit import tir
    >>> x = tir.Var("x", "int32")
    >>> ir_transform(x * 2 + 1, None, lambda n: n.a if isinstance(n, tir.Mul) else None)
    x + 1
    """
    if only_enable is None:
        enabled = _is_visited
    else:
        names = {k.split(".")[-1] if isinstance(k, str) else k.__name__ for k in only_enable}
        # TVM 0.27 spells a block "SBlock"
        names |= {n[1:] for n in names if n.startswith("SBlock")}
        enabled = lambda n: type(n).__name__ in names  # noqa: E731

    pre = None if preorder is None else (lambda n: preorder(n) if enabled(n) else None)
    post = None if postorder is None else (lambda n: postorder(n) if enabled(n) else None)
    return _rebuild(node, pre, post)


def substitute(node, vmap):
    """``node`` (a statement, expression, Range or list) with variables replaced
    (``tvm.tir.stmt_functor.substitute``).  ``vmap``: ``{Var: value}`` (a Var's ``id`` may
    stand for it; Python numbers become constants of the variable's dtype), or a function
    of a Var returning its replacement or None.  Definitions are kept: a loop's own
    variable is not replaced.

    >>> from mlckit import tir
    >>> x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    >>> substitute(x + 1, {x: y * 2}), substitute(x + 1, {x: 4})
    (y * 2 + 1, T.Add(4, 1))
    """
    if callable(vmap):
        lookup = vmap
    else:
        if not vmap:
            return node
        table = {(k if isinstance(k, int) else id(k)): v for k, v in vmap.items()}
        lookup = lambda v: table.get(id(v))  # noqa: E731

    def sub(x, is_def=False):
        if isinstance(x, Var):
            if is_def:
                return x
            new = lookup(x)
            if new is None:
                return x
            return new if isinstance(new, Node) else const(new, x.dtype)
        if isinstance(x, list):
            new = [sub(y, is_def) for y in x]
            return x if all(a is b for a, b in zip(new, x)) else new
        if isinstance(x, tuple):
            new = tuple(sub(y, is_def) for y in x)
            return x if all(a is b for a, b in zip(new, x)) else new
        if _is_leaf(x):
            return x
        changes = {}
        for name, d in _fields_of(type(x)):
            old = getattr(x, name)
            new = sub(old, d)
            if new is not old:
                changes[name] = new
        if not changes:
            return x
        return _remake(x, changes)

    return sub(node)


