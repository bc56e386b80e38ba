"""The printer core: configuration, frames, variable naming and dispatch by node class.

Printing an IR object is a walk that turns it into docs (``doc.py``).  The walk is driven by
an :class:`IRDocsifier`, which keeps

- a stack of :class:`Frame` s (a function, a loop, a block …): statements that a frame must
  emit before its body (``n = T.int32()``, ``cls = Module``) are appended to its ``stmts``;
- the names given to variables and buffers.  A name is unique while its frame is open and
  freed when the frame closes, so sibling loops can both be called ``i``; a clash gets a
  suffix, ``i_1``, as in TVM;
- a stack of *dispatch tokens* ("tir", "relax", "ir"): each dialect registers, per node
  class and optionally per token, a function ``f(node, d) -> Doc`` (:func:`register`).  The
  innermost token wins, falling back to the token-less registration; this is how an integer
  prints as ``T.int64(4)`` in TIR but ``4`` in a Relax shape.

The per-dialect functions live in ``tir.py``, ``relax.py`` and ``ir.py``.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlckit.error import TVMTypeError, TVMValueError
from mlckit.ir.node import Node

from . import doc as D
from .doc_printer import to_python


@dataclass
class PrinterConfig:
    """Options of :func:`mlckit.script.printer.script` (names as TVM's ``PrinterConfig``).

    - ``name``: the name to print for the function or module (default: its global symbol,
      ``main`` or ``Module``);
    - ``verbose_expr``: when printing a lone expression, also print the declarations of the
      variables it uses (``i = T.int32()``);
    - ``module_alias``: the alias of the module inside Relax functions (``cls``; ``""`` uses
      the module name itself);
    - ``syntax_sugar``: use ``T.grid``, ``T.axis.remap``, ``T.Buffer`` parameters and the
      implicit root block;
    - ``max_inline_const``: Relax constants with more elements than this print as
      ``metadata[...]`` references (as TVM) instead of inline ``R.const([...])``;
    - ``tir_spelling``: ``"tir"`` prints TVM 0.23's TVMScript (``from tvm.script import tir
      as T``, ``T.block``, ``out_sinfo=``), ``"tirx"`` TVM >= 0.24's (``tirx as T``,
      ``@T.prim_func(s_tir=True)``, ``T.sblock``, ``out_ty=``); None (the default): each
      PrimFunc as it was written (``func.spelling``), a module's other code as its PrimFuncs.
    """

    name: str | None = None
    ir_prefix: str = "I"
    tir_prefix: str = "T"
    relax_prefix: str = "R"
    module_alias: str = "cls"
    buffer_dtype: str = "float32"
    int_dtype: str = "int32"
    float_dtype: str = "void"
    verbose_expr: bool = False
    indent_spaces: int = 4
    syntax_sugar: bool = True
    max_inline_const: int = 1024
    binding_names: list = field(default_factory=list)
    tir_spelling: str | None = None

    def __post_init__(self):
        if self.tir_spelling not in (None, "tir", "tirx"):
            raise TVMValueError(f'tir_spelling is "tir" (TVM 0.23: T.block) or "tirx" (TVM >= '
                                f'0.24: T.sblock), or None (as written); got {self.tir_spelling!r}')
        if self.name is not None:
            self.binding_names = [*self.binding_names, self.name]


class Frame:
    """A printing scope.  ``kind`` is "ir", "tir" or "relax"; ``node`` is the IR node whose
    body is being printed (None for a lone fragment)."""

    def __init__(self, kind: str, node: Any = None):
        self.kind = kind
        self.node = node
        self.stmts: list = []
        self.exit_callbacks: list[Callable[[], None]] = []
        # TIR: whether the statement being printed is the last one of this frame's body
        self.allow_concise_scoping = False
        # Relax: function frames collect the TIR variables their signature defines
        self.is_func = False
        self.func_vars: set[int] | None = None
        self.module_alias_printed = False


@dataclass
class _VarInfo:
    obj: Any  # kept alive so that its id stays unique
    creator: Callable[[], D.ExprDoc]
    name: str | None


# -- dispatch table ----------------------------------------------------------------------
_VTABLE: dict[tuple[str, type], Callable] = {}


def register(cls: type, token: str = ""):
    """Register ``f(node, d) -> Doc`` printing instances of ``cls`` (and its subclasses)
    under ``token`` ("" for every dialect)."""

    def wrap(func):
        key = (token, cls)
        if key in _VTABLE:
            raise TVMValueError(f"a printer for {cls.__name__} (token {token!r}) is already registered")
        _VTABLE[key] = func
        return func

    return wrap


def _lookup(cls: type, token: str) -> Callable | None:
    for klass in cls.__mro__:
        func = _VTABLE.get((token, klass)) or _VTABLE.get(("", klass))
        if func is not None:
            return func
    return None


_KEYWORD_RE = re.compile(r"[^0-9A-Za-z_]")


class IRDocsifier:
    """Turns IR objects into docs; one instance per ``script()`` call."""

    def __init__(self, cfg: PrinterConfig):
        self.cfg = cfg
        self.frames: list[Frame] = []
        self.tokens: list[str] = [""]
        self.obj2info: dict[int, _VarInfo] = {}
        reserved = [cfg.ir_prefix, cfg.tir_prefix, cfg.relax_prefix]
        self.defined_names: set[str] = set(reserved + ([cfg.module_alias] if cfg.module_alias else []))
        self.ir_usage: set[str] = set()
        self.common_prefix: dict[int, list[int]] = {}
        self.metadata: dict[str, list] = {}
        self.given_names: dict[int, str] = {}  # id(var or buffer) -> the name it printed as
        # the TVMScript spelling being printed ("tir" / "tirx", see PrinterConfig.tir_spelling)
        # and the spellings the PrimFuncs printed so far used (for the import header)
        self.tir_spelling: str = cfg.tir_spelling or "tir"
        self.tir_spellings_used: set[str] = set()

    # -- frames ------------------------------------------------------------------------
    @contextmanager
    def frame(self, frame: Frame, token: str | None = None) -> Iterator[Frame]:
        """Open ``frame`` (and dispatch ``token``) for the duration of a ``with``."""
        self.frames.append(frame)
        if token is not None:
            self.tokens.append(token)
        try:
            yield frame
        finally:
            for callback in frame.exit_callbacks:
                callback()
            frame.exit_callbacks.clear()
            if token is not None:
                self.tokens.pop()
            self.frames.pop()

    # -- variables ---------------------------------------------------------------------
    def define(self, obj: Any, frame: Frame, name_hint: str) -> D.IdDoc:
        """Give ``obj`` a fresh name (``name_hint``, else ``name_hint_1`` …) until ``frame``
        closes; returns the name's IdDoc.  An object already defined keeps its name."""
        info = self.obj2info.get(id(obj))
        if info is not None:
            return info.creator()
        base = _KEYWORD_RE.sub("_", name_hint)
        name, i = base, 1
        while name in self.defined_names:
            name = f"{base}_{i}"
            i += 1
        self.defined_names.add(name)
        self.given_names[id(obj)] = name
        self.obj2info[id(obj)] = _VarInfo(obj, lambda: D.IdDoc(name), name)
        frame.exit_callbacks.append(lambda: self._remove(obj))
        return D.IdDoc(name)

    def define_creator(self, obj: Any, frame: Frame, creator: Callable[[], D.ExprDoc]) -> None:
        """Make ``obj`` print as ``creator()`` (e.g. ``A.data``, ``cls.main``) in ``frame``."""
        self.obj2info[id(obj)] = _VarInfo(obj, creator, None)
        frame.exit_callbacks.append(lambda: self._remove(obj))

    def _remove(self, obj: Any) -> None:
        info = self.obj2info.pop(id(obj), None)
        if info is not None and info.name is not None:
            self.defined_names.discard(info.name)

    def is_defined(self, obj: Any) -> bool:
        return id(obj) in self.obj2info

    def get_var_doc(self, obj: Any) -> D.ExprDoc | None:
        info = self.obj2info.get(id(obj))
        return info.creator() if info is not None else None

    # -- metadata (objects with no inline text form) -------------------------------------
    def add_metadata(self, obj: Any) -> D.ExprDoc:
        key = _type_key(obj)
        items = self.metadata.setdefault(key, [])
        i = next((k for k, item in enumerate(items) if item is obj), len(items))
        if i == len(items):
            items.append(obj)
        return D.IdDoc("metadata")[D.LiteralDoc(key)][D.LiteralDoc(i)]

    # -- common prefix: where a free variable must be declared ----------------------------
    def set_common_prefix(self, root: Any, is_var: Callable[[Any], bool]) -> None:
        """For every variable under ``root``, the ids of the nodes enclosing all its uses."""
        self.common_prefix = _common_prefix(root, is_var)

    # -- converting ----------------------------------------------------------------------
    def as_doc(self, obj: Any) -> D.Doc:
        """The doc of ``obj``: Python values become literals, lists and dicts containers,
        IR nodes go through the dispatch table."""
        if obj is None or isinstance(obj, (bool, str)):
            return D.LiteralDoc(obj)
        if isinstance(obj, np.generic):
            return self.as_doc(obj.item())
        if isinstance(obj, numbers.Integral):
            return D.LiteralDoc(int(obj))
        if isinstance(obj, numbers.Real):
            return D.LiteralDoc(float(obj))
        if isinstance(obj, (list, tuple)):
            return D.ListDoc([self.as_doc(x) for x in obj])
        if isinstance(obj, dict):
            items = list(obj.items())
            if all(isinstance(k, str) for k in obj):
                items.sort(key=lambda kv: kv[0])
            return D.DictDoc([self.as_doc(k) for k, _ in items], [self.as_doc(v) for _, v in items])
        func = _lookup(type(obj), self.tokens[-1])
        if func is None:
            if isinstance(obj, Node):
                raise TVMTypeError(f"the TVMScript printer does not know how to print {type(obj).__name__}")
            return self.add_metadata(obj)
        doc = func(obj, self)
        if isinstance(obj, Node):
            tag_source(doc, obj)
        return doc

    def expr(self, obj: Any) -> D.ExprDoc:
        """``as_doc`` for something that must print as an expression."""
        doc = self.as_doc(obj)
        if not isinstance(doc, D.ExprDoc):
            raise TVMTypeError(f"{type(obj).__name__} does not print as an expression")
        return doc

    # -- common prefixes of the dialects ---------------------------------------------------
    def IR(self, attr: str) -> D.ExprDoc:
        self.ir_usage.add("ir")
        return D.IdDoc(self.cfg.ir_prefix).attr(attr)

    def TIR(self, attr: str) -> D.ExprDoc:
        self.ir_usage.add("tir")
        return D.IdDoc(self.cfg.tir_prefix).attr(attr)

    _TIRX_NAMES = {"block": "sblock", "block_attr": "sblock_attr",
                   "alloc_buffer": "sblock_alloc_buffer"}

    def tir_name(self, name: str) -> str:
        """``name`` of the TIR block API in the spelling being printed (``block``/``sblock``)."""
        return self._TIRX_NAMES.get(name, name) if self.tir_spelling == "tirx" else name

    def R(self, attr: str) -> D.ExprDoc:
        self.ir_usage.add("relax")
        return D.IdDoc(self.cfg.relax_prefix).attr(attr)

    def binding_name(self) -> str | None:
        """The name the enclosing context wants for the function being printed."""
        return self.cfg.binding_names[-1] if self.cfg.binding_names else None

    def function_name(self, func: Any) -> str | None:
        """The binding name, else the ``global_symbol`` attribute, else None."""
        name = self.binding_name()
        if name is not None:
            return name
        return (getattr(func, "attrs", None) or {}).get("global_symbol")

    def header_wrapper(self, doc: D.Doc) -> D.Doc:
        """Prefix ``doc`` with the ``# from tvm.script import ...`` lines it needs."""
        if not self.ir_usage:
            return doc
        stmts: list = []
        for key, prefix in (("ir", self.cfg.ir_prefix), ("tir", self.cfg.tir_prefix),
                            ("relax", self.cfg.relax_prefix)):
            if key in self.ir_usage:
                name = key
                if key == "tir":  # tirx only where everything printed is spelled tirx
                    used = self.tir_spellings_used or {self.tir_spelling}
                    name = "tirx" if used == {"tirx"} else "tir"
                stmts.append(D.CommentDoc(f"from tvm.script import {name} as {prefix}"))
        stmts += [D.CommentDoc(""), doc]
        return D.StmtBlockDoc(stmts)


def tag_source(doc: D.Doc, *nodes: Any) -> None:
    """Record that ``doc`` (or, for a block of statements, its first one that is not a
    comment) was printed from ``nodes``, unless a more specific printer already did."""
    target = doc
    if isinstance(doc, D.StmtBlockDoc):
        target = next((s for s in doc.stmts if not isinstance(s, D.CommentDoc)), None)
    if isinstance(target, D.StmtDoc) and not target.source_nodes:
        target.source_nodes = tuple(nodes)


class PrintedScript(str):
    """TVMScript text (a ``str``) that remembers which IR nodes each line was printed from.

    ``line_to_nodes[n]`` holds the nodes of the innermost statement that line ``n``
    (1-based) belongs to (a ``T.grid`` line: all its loops; a block's ``T.reads`` line: the
    block); ``node_lines(node)`` the lines of one node.  Lines outside any statement (the
    import comments) are absent.
    """

    line_to_nodes: dict

    def node_lines(self, node: Any) -> list[int]:
        return [n for n, nodes in self.line_to_nodes.items() if any(x is node for x in nodes)]


def _type_key(obj: Any) -> str:
    module = type(obj).__module__.replace("mlckit.", "")
    return f"{module.split('.')[0]}.{type(obj).__name__}"


def iter_children(obj: Any) -> Iterator[Any]:
    """The direct sub-objects of an IR node, list, tuple or dict (arrays are leaves)."""
    if isinstance(obj, Node):
        for name in obj.field_names():
            yield getattr(obj, name)
    elif isinstance(obj, (list, tuple)):
        yield from obj
    elif isinstance(obj, dict):
        for key, value in obj.items():
            yield key
            yield value


def _common_prefix(root: Any, is_var: Callable[[Any], bool]) -> dict[int, list[int]]:
    prefix: dict[int, list[int]] = {}
    visited: set[int] = set()
    keep: list[Any] = []
    stack: list[int] = []

    def handle(var):
        path = prefix.get(id(var))
        if path is None:
            prefix[id(var)] = list(stack)
            return
        n = min(len(path), len(stack))
        for i in range(n):
            if path[i] != stack[i]:
                del path[i:]
                return
        del path[n:]

    def visit(obj):
        if not isinstance(obj, (Node, list, tuple, dict)):
            return
        if id(obj) in visited:
            if is_var(obj):
                handle(obj)
            return
        visited.add(id(obj))
        keep.append(obj)
        stack.append(id(obj))
        for child in iter_children(obj):
            visit(child)
        if is_var(obj):
            handle(obj)
        stack.pop()

    visit(root)
    return prefix


# -- the entry point ---------------------------------------------------------------------
_ROOTS: dict[str, Callable[[IRDocsifier, Any], Frame]] = {}


def register_root(mode: str):
    """Register how to open the root frame when a lone object of ``mode`` is printed."""

    def wrap(func):
        _ROOTS[mode] = func
        return func

    return wrap


def _mode(obj: Any) -> str:
    module = type(obj).__module__
    if getattr(type(obj), "__name__", "") == "Range":
        return "ir"
    if module.startswith(("mlckit.tir", "mlckit.te")):
        return "tir"
    if module.startswith("mlckit.relax"):
        return "relax"
    return "ir"


def print_script(obj: Any, cfg: PrinterConfig, line_map: bool = False,
                 names: dict[int, str] | None = None) -> str:
    """Docsify ``obj`` in the root frame of its dialect and render the text (with
    ``line_map``: a :class:`PrintedScript` mapping each line to its IR nodes).

    ``names``, when given, receives the name each variable and buffer printed as, keyed by
    ``id(var)`` (a clash renames ``i`` to ``i_1``; this says which ``i`` that is)."""
    d = IRDocsifier(cfg)
    if names is not None:
        d.given_names = names
    mode = _mode(obj)
    root = Frame(mode)
    with d.frame(root, token=mode):
        _ROOTS.get(mode, lambda d, o: None)(d, obj)
        doc = d.as_doc(obj)
        stmts = root.stmts
        if isinstance(doc, D.ExprDoc):
            if not cfg.verbose_expr:
                stmts.clear()
            stmts.append(D.ExprStmtDoc(doc))
        elif isinstance(doc, D.StmtBlockDoc):
            stmts.extend(doc.stmts)
        elif isinstance(doc, D.StmtDoc):
            stmts.append(doc)
        else:
            raise TVMTypeError(f"unexpected doc {type(doc).__name__}")
        if d.metadata:
            stmts.append(D.CommentDoc(
                "Metadata omitted. Use max_inline_const=... in script() to print large constants inline."
            ))
        if not line_map:
            return to_python(D.StmtBlockDoc(list(stmts)), cfg.indent_spaces)
        spans: list = []
        text = PrintedScript(to_python(D.StmtBlockDoc(list(stmts)), cfg.indent_spaces, spans))
        n_lines = text.count("\n") + 1
        line_to_nodes: dict[int, tuple] = {}
        # outer statements first, so that inner ones (starting later, or ending earlier)
        # overwrite the lines they own
        for start, end, nodes in sorted(spans, key=lambda s: (s[0], -s[1])):
            for line in range(start, min(end, n_lines) + 1):
                line_to_nodes[line] = nodes
        text.line_to_nodes = line_to_nodes
        return text


