"""``graph(obj)``: a ``graphviz.Digraph`` of a Relax function's dataflow or a PrimFunc's loops.

- Relax function: one node per operator call (``R.add``, ``R.call_tir`` labelled with its
  kernel, ``R.call_dps_packed`` with its packed function, direct calls with the callee),
  the parameters and the returned value as nodes, tensors as edges labelled with their name,
  shape and dtype; each dataflow block is a cluster.
- PrimFunc: the loop-nest tree: the function, its loops (kind, variable, extent), blocks
  (iterators, allocations, ``T.where``), inits and the statements at the leaves.

The view only reads the IR.  ``g.source`` is the DOT text (a terminal's form).  In a notebook
the graph displays drawn (Graphviz's ``dot`` program draws it): as SVG, and as HTML holding
that SVG as an image, which an untrusted notebook, GitHub and nbviewer show too (JupyterLab
shows no SVG output of a notebook it does not trust).

Example::

    from mlckit.notebook import graph
    g = graph(MyModule["main"])      # or MyModule["main"].graph(), MyModule.graph("main")
    print(g.source)                  # digraph main { ... }
    g                                # drawn in a notebook
"""

from __future__ import annotations

import base64
import html

import graphviz

from mlckit.error import TVMTypeError
from mlckit.ir.module import GlobalVar, IRModule
from mlckit.ir.op import Op
from mlckit.relax import expr as rx
from mlckit.relax import struct_info as rsi
from mlckit.tir import expr as tx
from mlckit.tir import stmt as ts
from mlckit.tir.function import PrimFunc

__all__ = ["Graph", "graph", "relax_graph", "tir_graph"]

_FONT = "monospace"
_MAX_LABEL = 60


class Graph(graphviz.Digraph):
    """A ``graphviz.Digraph`` that displays drawn wherever a notebook is shown: its display
    data holds the SVG, an ``<img>`` of it for HTML (kept by sanitizers, which drop
    ``<svg>`` markup and untrusted SVG outputs), and a line of text instead of
    ``<graphviz.graphs.Digraph at 0x…>``.

    Example::

        g = graph(mm_relu)
        g._repr_mimebundle_().keys()      # image/svg+xml, text/html, text/plain
    """

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        text = (f"graph {self.name}: {self.source.count(' -> ')} edge(s); "
                "print(g.source) for its DOT text")
        try:
            svg = self.pipe(format="svg", encoding="utf-8")
        except graphviz.ExecutableNotFound:  # no `dot`: the text form only
            return {"text/plain": text + " (install Graphviz to draw it)"}
        svg = svg[svg.index("<svg"):]  # the XML prolog and doctype are not needed inline
        data = base64.b64encode(svg.encode()).decode()
        img = (f'<img class="mlckit-graph" alt="graph {html.escape(self.name or "")}" '
               f'style="max-width:100%;height:auto" src="data:image/svg+xml;base64,{data}">')
        bundle = {"image/svg+xml": svg, "text/html": f'<div style="text-align:left">{img}</div>',
                  "text/plain": text}
        return {k: v for k, v in bundle.items()
                if (include is None or k in include) and (exclude is None or k not in exclude)}


def graph(obj, name: str | None = None) -> graphviz.Digraph:
    """The graph of a Relax function, a PrimFunc, or function ``name`` of an IRModule
    (default: ``main``, or the module's only function).

    Example::

        graph(MyModule, "main").source     # 'digraph main {\\n\\tgraph [...'
    """
    if isinstance(obj, IRModule):
        if name is None:
            names = [gv.name_hint for gv in obj.get_global_vars()]
            name = "main" if "main" in names or len(names) != 1 else names[0]
        return graph(obj[name], name)
    if isinstance(obj, rx.Function):
        return relax_graph(obj, name)
    if isinstance(obj, PrimFunc):
        return tir_graph(obj, name)
    raise TVMTypeError(f"graph() draws a relax.Function, a tir.PrimFunc or an IRModule, got "
                       f"{type(obj).__name__}")


# -- text helpers ---------------------------------------------------------------------------
def _lines(*lines: str, left: bool = False) -> str:
    """A multi-line DOT label: ``\\n`` centres each line, ``\\l`` left-aligns it."""
    escaped = [line.replace("\\", "\\\\") for line in lines]
    return "\\l".join(escaped) + "\\l" if left else "\\n".join(escaped)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_LABEL else text[:_MAX_LABEL - 1] + "…"


def _expr_text(e) -> str:
    """A PrimExpr as a learner reads it: integers plain (``128``, not ``T.int64(128)``)."""
    if isinstance(e, tx.IntImm):
        return str(e.value)
    if isinstance(e, int):
        return str(e)
    return e.script()


def _func_name(func, default: str) -> str:
    attrs = getattr(func, "attrs", None) or {}
    return str(attrs.get("global_symbol") or default)


def sinfo_text(sinfo) -> str:
    """Short text of a struct info: ``(n, 128) float32``, ``shape (n, 128)``, ``int64`` …"""
    if isinstance(sinfo, rsi.TensorStructInfo):
        dims = sinfo.dims
        if dims is None:
            shape = f"ndim={sinfo.ndim}" if sinfo.ndim >= 0 else "?"
        else:
            shape = "(" + ", ".join(_expr_text(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"
        return f"{shape} {sinfo.dtype}"
    if isinstance(sinfo, rsi.ShapeStructInfo):
        if sinfo.values is not None:
            return "shape (" + ", ".join(_expr_text(v) for v in sinfo.values) + ")"
        return f"shape ndim={sinfo.ndim}"
    if isinstance(sinfo, rsi.TupleStructInfo):
        return "(" + ", ".join(sinfo_text(f) for f in sinfo.fields) + ")"
    if isinstance(sinfo, rsi.PrimStructInfo):
        return sinfo.dtype
    if isinstance(sinfo, rsi.FuncStructInfo):
        return "function"
    return "object"


def _var_sinfo(var) -> str:
    sinfo = getattr(var, "struct_info_", None)
    return sinfo_text(sinfo) if sinfo is not None else "?"


# -- Relax ------------------------------------------------------------------------------------
def _dps_output(binding) -> rx.Var | None:
    """The output of a destination-passing call (``_ = cls.kernel(x, w, out)``, as after
    ``CallTIRRewrite``): its last argument, when the call itself returns nothing."""
    value, var = binding.value, binding.var
    if not (isinstance(value, rx.Call) and isinstance(value.op, GlobalVar) and value.args):
        return None
    sinfo = var.struct_info_
    returns_nothing = var.name_hint == "_" or (
        isinstance(sinfo, rsi.TupleStructInfo) and not sinfo.fields)
    last = value.args[-1]
    return last if returns_nothing and isinstance(last, rx.Var) else None


class _RelaxGraph:
    """Builds the digraph of one Relax function."""

    def __init__(self, func: rx.Function, name: str):
        self.func = func
        self.g = Graph(name=name, graph_attr={"rankdir": "TB", "label": name,
                                               "labelloc": "t", "fontname": _FONT},
                       node_attr={"fontname": _FONT, "fontsize": "11"},
                       edge_attr={"fontname": _FONT, "fontsize": "9"})
        self.producer: dict[int, str] = {}  # id(var) -> node id
        self.edges: list[tuple[str, str, str]] = []
        self.counter = 0

    def new_id(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def build(self) -> graphviz.Digraph:
        for i, p in enumerate(self.func.params):
            nid = f"param{i}"
            self.g.node(nid, p.name_hint, shape="ellipse", style="filled", fillcolor="#ddf4ff")
            self.producer[id(p)] = nid
        body = self.func.body
        blocks = body.blocks if isinstance(body, rx.SeqExpr) else []
        result = body.body if isinstance(body, rx.SeqExpr) else body
        for k, block in enumerate(blocks):
            if isinstance(block, rx.DataflowBlock):
                with self.g.subgraph(name=f"cluster_dataflow{k}") as sub:
                    sub.attr(label="R.dataflow()", style="dashed,rounded", color="#8c959f",
                             fontname=_FONT)
                    self.block(block, sub)
            else:
                self.block(block, self.g)
        self.g.node("return", "return", shape="ellipse", style="filled,bold",
                    fillcolor="#dafbe1")
        self.flow(result, "return", self.g)
        for tail, head, label in self.edges:
            self.g.edge(tail, head, label=label)
        return self.g

    def block(self, block, where) -> None:
        for binding in block.bindings:
            var, value = binding.var, binding.value
            if isinstance(binding, rx.MatchCast):
                nid = self.new_id("op")
                where.node(nid, _lines("R.match_cast", _short(sinfo_text(binding.struct_info))),
                           shape="box", style="rounded")
                self.flow(value, nid, where)
                self.producer[id(var)] = nid
            elif isinstance(value, rx.Var) and id(value) in self.producer:
                self.producer[id(var)] = self.producer[id(value)]  # an alias: same tensor
            else:
                nid = self.value_node(value, where)
                self.producer[id(var)] = nid
                out = _dps_output(binding)
                if out is not None:  # a kernel writing its last argument: it now holds the result
                    self.producer[id(out)] = nid

    def value_node(self, value, where) -> str:
        """A node computing ``value`` (its inputs drawn as edges into it)."""
        nid = self.new_id("op")
        if isinstance(value, rx.Call):
            label, inputs, literals = self.call_parts(value)
            if literals:
                label.append(_short(", ".join(literals)))
            where.node(nid, _lines(*label), shape="box", style="rounded,filled", fillcolor="#f6f8fa")
            for arg in inputs:
                self.flow(arg, nid, where)
        elif isinstance(value, rx.Tuple):
            where.node(nid, "tuple", shape="box", style="rounded")
            for field in value.fields:
                self.flow(field, nid, where)
        elif isinstance(value, rx.TupleGetItem):
            where.node(nid, f"[{value.index}]", shape="box", style="rounded")
            self.flow(value.tuple_value, nid, where)
        elif isinstance(value, rx.If):
            where.node(nid, "if", shape="diamond")
            self.flow(value.cond, nid, where)
        elif isinstance(value, rx.Function):
            where.node(nid, f"function {_func_name(value, 'local')}", shape="box",
                       style="rounded,dashed")
        elif isinstance(value, rx.Constant):
            where.node(nid, f"const {sinfo_text(value.struct_info_)}" if value.struct_info_
                       else "const", shape="box", style="dashed")
        else:
            where.node(nid, _short(value.script()), shape="box", style="dashed")
        return nid

    def call_parts(self, call: rx.Call) -> tuple[list[str], list, list[str]]:
        """(label lines, tensor-valued inputs, texts of literal arguments) of a call."""
        op, args = call.op, list(call.args)
        if isinstance(op, Op):
            label = ["R." + op.name[len("relax."):] if op.name.startswith("relax.") else op.name]
            if args and isinstance(args[0], (GlobalVar, rx.ExternFunc)) and op.name in (
                    "relax.call_tir", "relax.call_dps_packed", "relax.call_tir_inplace",
                    "relax.call_builtin_with_ctx", "relax.call_pure_packed", "relax.call_packed"):
                label.append(self.callee_name(args.pop(0)))
        else:
            label = [self.callee_name(op)]
        inputs, literals = [], []
        for arg in args:
            if isinstance(arg, (rx.Var, rx.Tuple, rx.Constant, rx.TupleGetItem, rx.Call)):
                inputs.append(arg)
            elif isinstance(arg, (GlobalVar, rx.ExternFunc)):
                literals.append(self.callee_name(arg))
            else:
                literals.append(arg.script() if hasattr(arg, "script") else repr(arg))
        return label, inputs, literals

    @staticmethod
    def callee_name(callee) -> str:
        if isinstance(callee, GlobalVar):
            return callee.name_hint
        if isinstance(callee, rx.ExternFunc):
            return callee.global_symbol
        if isinstance(callee, rx.Var):
            return callee.name_hint
        return type(callee).__name__

    def flow(self, value, head: str, where) -> None:
        """Edges carrying ``value`` into node ``head`` (a tuple: one edge per field)."""
        if isinstance(value, rx.Tuple):
            for field in value.fields:
                self.flow(field, head, where)
            return
        if isinstance(value, rx.Var):
            tail = self.producer.get(id(value))
            if tail is None:  # a variable bound outside this function
                tail = self.new_id("free")
                self.g.node(tail, value.name_hint, shape="ellipse", style="dashed")
                self.producer[id(value)] = tail
            self.edges.append((tail, head, _lines(value.name_hint, _var_sinfo(value))))
            return
        tail = self.value_node(value, where)
        sinfo = getattr(value, "struct_info_", None)
        self.edges.append((tail, head, sinfo_text(sinfo) if sinfo is not None else ""))


def relax_graph(func: rx.Function, name: str | None = None) -> graphviz.Digraph:
    """The dataflow graph of a Relax function (see the module docstring).

    Example::

        relax_graph(MyModule["main"]).source
    """
    if not isinstance(func, rx.Function):
        raise TVMTypeError(f"relax_graph draws a relax.Function, got {type(func).__name__}")
    return _RelaxGraph(func, name or _func_name(func, "main")).build()


# -- TIR --------------------------------------------------------------------------------------
_KIND = {ts.ForKind.SERIAL: "range", ts.ForKind.PARALLEL: "T.parallel",
         ts.ForKind.VECTORIZED: "T.vectorized", ts.ForKind.UNROLLED: "T.unroll",
         ts.ForKind.THREAD_BINDING: "T.thread_binding"}
_ITER_KIND = {tx.IterVarType.DataPar: "S", tx.IterVarType.CommReduce: "R",
              tx.IterVarType.Ordered: "O", tx.IterVarType.Opaque: "opaque"}
_LOOP_COLOURS = {ts.ForKind.SERIAL: "#ffffff", ts.ForKind.PARALLEL: "#fff8c5",
                 ts.ForKind.VECTORIZED: "#dafbe1", ts.ForKind.UNROLLED: "#fbefff",
                 ts.ForKind.THREAD_BINDING: "#ffebe9"}


def _buffer_text(buf) -> str:
    dims = ", ".join(_expr_text(d) for d in buf.shape) + ("," if len(buf.shape) == 1 else "")
    return f"{buf.name} ({dims}) {buf.dtype}"


def _store_text(s: ts.BufferStore) -> str:
    idx = ", ".join(_expr_text(i) for i in s.indices)
    return f"{s.buffer.name}[{idx}] = {_expr_text(s.value)}"


def _loop_text(loop: ts.For) -> str:
    var = loop.loop_var.name_hint
    if loop.kind == ts.ForKind.THREAD_BINDING and loop.thread_binding is not None:
        return (f"for {var} in T.thread_binding({_expr_text(loop.extent)}, "
                f"thread=\"{loop.thread_binding.thread_tag}\")")
    rng = _expr_text(loop.extent)
    if not (isinstance(loop.min, tx.IntImm) and loop.min.value == 0):
        rng = f"{_expr_text(loop.min)}, {_expr_text(loop.min + loop.extent)}"
    return f"for {var} in {_KIND.get(loop.kind, 'range')}({rng})"


class _TirGraph:
    """Builds the loop-nest tree of one PrimFunc."""

    def __init__(self, func: PrimFunc, name: str):
        self.func = func
        self.g = Graph(name=name, graph_attr={"rankdir": "TB", "ordering": "out",
                                               "fontname": _FONT},
                       node_attr={"fontname": _FONT, "fontsize": "11"},
                       edge_attr={"arrowsize": "0.6"})
        self.name = name
        self.counter = 0

    def node(self, label: str, **attrs) -> str:
        self.counter += 1
        nid = f"n{self.counter}"
        self.g.node(nid, label, **attrs)
        return nid

    def build(self) -> graphviz.Digraph:
        params = []
        for p in self.func.params:
            buf = self.func.buffer_map.get(p)
            params.append(_buffer_text(buf) if buf is not None else f"{p.name_hint}: {p.dtype}")
        root = self.node(_lines(self.name, *params, left=True), shape="box", style="bold")
        self.stmt(self.func.body, root)
        return self.g

    def stmt(self, s, parent: str, edge_label: str | None = None) -> None:
        def link(child: str) -> None:
            self.g.edge(parent, child, **({"label": edge_label} if edge_label else {}))

        if isinstance(s, ts.SeqStmt):
            for x in s.seq:
                self.stmt(x, parent, edge_label)
        elif isinstance(s, ts.For):
            nid = self.node(_loop_text(s), shape="box",
                            style="filled", fillcolor=_LOOP_COLOURS.get(s.kind, "#ffffff"))
            link(nid)
            self.stmt(s.body, nid)
        elif isinstance(s, ts.BlockRealize):
            nid = self.node(self.block_label(s), shape="box", style="rounded,filled",
                            fillcolor="#ddf4ff")
            link(nid)
            if s.block.init is not None:
                init = self.node("T.init()", shape="box", style="rounded,dashed")
                self.g.edge(nid, init)
                self.stmt(s.block.init, init)
            self.stmt(s.block.body, nid)
        elif isinstance(s, ts.BufferStore):
            link(self.node(_short(_store_text(s)), shape="plaintext"))
        elif isinstance(s, ts.IfThenElse):
            nid = self.node(_short(f"if {_expr_text(s.condition)}"), shape="diamond")
            link(nid)
            self.stmt(s.then_case, nid, "then")
            if s.else_case is not None:
                self.stmt(s.else_case, nid, "else")
        elif isinstance(s, ts.LetStmt):
            nid = self.node(_short(f"{s.var.name_hint} = {_expr_text(s.value)}"), shape="box")
            link(nid)
            self.stmt(s.body, nid)
        elif isinstance(s, ts.Evaluate):
            link(self.node(_short(_expr_text(s.value)), shape="plaintext"))
        elif isinstance(s, ts.DeclBuffer):
            nid = self.node(f"T.decl_buffer {_buffer_text(s.buffer)}", shape="box")
            link(nid)
            self.stmt(s.body, nid)
        else:
            nid = self.node(type(s).__name__, shape="box", style="dashed")
            link(nid)
            body = getattr(s, "body", None)
            if body is not None:
                self.stmt(body, nid)

    @staticmethod
    def block_label(realize: ts.BlockRealize) -> str:
        block = realize.block
        lines = [f'block "{block.name_hint}"']
        for iv, value in zip(block.iter_vars, realize.iter_values):
            kind = _ITER_KIND.get(iv.iter_type, "?")
            lines.append(f"{iv.var.name_hint}: {kind} {_expr_text(iv.dom.extent)} = "
                         f"{_short(_expr_text(value))}")
        pred = realize.predicate
        if not (isinstance(pred, tx.IntImm) and pred.value):
            lines.append(_short(f"T.where({_expr_text(pred)})"))
        for buf in block.alloc_buffers or []:
            lines.append(f"alloc {_buffer_text(buf)}")
        return _lines(*lines, left=True)


def tir_graph(func: PrimFunc, name: str | None = None) -> graphviz.Digraph:
    """The loop-nest tree of a PrimFunc (see the module docstring).

    Example::

        tir_graph(mm_relu).source
    """
    if not isinstance(func, PrimFunc):
        raise TVMTypeError(f"tir_graph draws a tir.PrimFunc, got {type(func).__name__}")
    return _TirGraph(func, name or _func_name(func, "main")).build()
