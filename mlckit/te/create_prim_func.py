"""``te.create_prim_func``: a TensorIR PrimFunc from tensor expressions, as TVM v0.23 makes it.

Each ``te.compute`` becomes one block named after the op (made unique: ``main``,
``main_1``) inside a nest of serial loops named after the compute's index variables; the
block iterators are ``v_<name>``, bound with ``T.axis.remap`` semantics (spatial, then
reduce).  A reduction gets ``T.init()`` storing the reducer's identity and the update
``Y[v_i, v_j] = Y[v_i, v_j] + ...``.  Tensors listed in ``ops`` become the parameters
(``var_<name>`` handles bound to buffers named after the tensors); the other computes are
``T.alloc_buffer``s of the root block.  The function carries ``global_symbol = "main"`` and
``tir.noalias = True``.

    A = te.placeholder((128,), name="A")
    B = te.compute((128,), lambda i: A[i] * 2, name="B")
    te.create_prim_func([A, B]).show()

prints::

    @T.prim_func
    def main(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
        T.func_attr({"tir.noalias": True})
        for i in range(128):
            with T.block("B"):
                v_i = T.axis.spatial(128, i)
                T.reads(A[v_i])
                T.writes(B[v_i])
                B[v_i] = A[v_i] * T.float32(2.0)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlckit.error import TVMTypeError, TVMValueError
from mlckit.tir import dtype as dt
from mlckit.tir.analysis.block_access_region import get_block_access_region
from mlckit.tir.buffer import Buffer, decl_buffer
from mlckit.tir.expr import (
    BufferLoad,
    IntImm,
    IterVar,
    IterVarType,
    PrimExpr,
    Range,
    Var,
)
from mlckit.tir.function import PrimFunc
from mlckit.tir.stmt import (
    Block,
    BlockRealize,
    BufferStore,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    stmt_seq,
)

from .expr_util import post_order, rewrite
from .index_dtype import normalize_index_dtype
from .reduce import Reduce
from .simplify import simplify
from .tensor import ComputeOp, Operation, PlaceholderOp, ProducerLoad, Tensor

# Block annotations create_prim_func drops (TVM's LayoutFreePlaceholdersNormalizer).
_DROPPED_ANNOTATIONS = ("const_matrix", "auto_scheduler_simplify_const_tensor_indices", "workload")
_LAYOUT_FREE = "layout_free_placeholders"


def create_prim_func(ops, index_dtype_override: str | None = None) -> PrimFunc:
    """The PrimFunc computing the tensors in ``ops`` from the placeholders in ``ops``.

    ``ops`` lists the function's parameters in order: te.Tensors (placeholders, outputs,
    and any intermediate the caller wants to pass in) and, optionally, tir.Vars for scalar
    parameters.  ``index_dtype_override="int64"`` makes every index (shapes, loops, block
    iterators) that dtype.

    Example::

        func = te.create_prim_func([A, B, C]).with_attr({"global_symbol": "mm_relu"})
    """
    args = list(ops) if isinstance(ops, (list, tuple)) else [ops]
    for pos, a in enumerate(args):
        if not isinstance(a, (Tensor, Var)):
            raise TVMTypeError(
                f"te.create_prim_func: argument {pos} must be a te.Tensor or a tir.Var, "
                f"got {type(a).__name__}"
            )
    tensors = [a for a in args if isinstance(a, Tensor)]
    if not tensors:
        raise TVMValueError("te.create_prim_func needs at least one te.Tensor argument")
    builder = _Builder(args)
    for op in _post_dfs_order([t.op for t in tensors]):
        builder.stage(op)
    func = builder.finish()
    if index_dtype_override is not None:
        func = normalize_index_dtype(func, dt.check_dtype(index_dtype_override))
    return func


def _post_dfs_order(roots: list) -> list:
    """Every operation the roots depend on, inputs before their readers (TVM's PostDFSOrder)."""
    order: list[Operation] = []
    visited: set[int] = set()

    def visit(op):
        if id(op) in visited:
            return
        visited.add(id(op))
        for t in op.input_tensors:
            visit(t.op)
        order.append(op)

    for op in roots:
        visit(op)
    return order


@dataclass
class _Scope:
    """One level of a compute's loop nest: its loops and the block iterators there."""

    loops: list = field(default_factory=list)      # (loop var, Range)
    iters: list = field(default_factory=list)      # block IterVars
    bindings: list = field(default_factory=list)   # their values
    store_indices: list = field(default_factory=list)
    remap: dict = field(default_factory=dict)      # id(te axis var) -> block var

    def add(self, axis: IterVar | None, iv: IterVar, value) -> None:
        self.iters.append(iv)
        self.bindings.append(value)
        if axis is not None:
            if axis.iter_type != IterVarType.CommReduce:
                self.store_indices.append(iv.var)
            self.remap[id(axis.var)] = iv.var

    def renew(self, axes: list) -> None:
        """Fresh block variables (same names), so a second block defines its own."""
        self.iters = [iv.replace(var=Var(iv.var.name_hint, iv.var.dtype)) for iv in self.iters]
        self.store_indices = []
        for axis, iv in zip(axes, self.iters):
            if axis.iter_type != IterVarType.CommReduce:
                self.store_indices.append(iv.var)
            self.remap[id(axis.var)] = iv.var


class _Builder:
    """The state of one create_prim_func call (TVM's CreateFuncInfo)."""

    def __init__(self, args: list):
        self.args = args
        self.arg_index = {id(a): i for i, a in enumerate(args) if isinstance(a, Tensor)}
        self.buffers: dict[int, Buffer] = {}  # id(tensor) -> its buffer
        self.root_alloc: list[Buffer] = []
        self.stmts: list = []
        self.layout_free: set[int] = set()
        self.names: dict[str, int] = {}

    # -- names and buffers ------------------------------------------------------------
    def fresh_name(self, base: str) -> str:
        """``base`` with dots made underscores, suffixed ``_1``, ``_2`` ... when taken."""
        base = base.replace(".", "_")
        if base not in self.names:
            self.names[base] = 0
            return base
        name = base
        while name in self.names:
            self.names[base] += 1
            name = f"{base}_{self.names[base]}"
        self.names[name] = 0
        return name

    def buffer_of(self, tensor: Tensor) -> Buffer:
        return self.buffers[id(tensor)]

    def declare(self, tensor: Tensor) -> Buffer:
        buf = decl_buffer(tensor.shape, tensor.dtype, tensor.name)
        self.buffers[id(tensor)] = buf
        if id(tensor) not in self.arg_index:
            self.root_alloc.append(buf)
        return buf

    def to_tir(self, e: PrimExpr, remap: dict) -> PrimExpr:
        """``e`` reading buffers instead of tensors, with the compute's axes remapped."""

        def visit(node):
            if isinstance(node, ProducerLoad):
                return BufferLoad(self.buffer_of(node.producer), node.indices)
            if isinstance(node, Var):
                return remap.get(id(node))
            return None

        return rewrite(e, visit)

    # -- stages -----------------------------------------------------------------------
    def stage(self, op: Operation) -> None:
        if isinstance(op, PlaceholderOp):
            tensor = op.output(0)
            if id(tensor) not in self.arg_index:
                listed = ", ".join(a.name for a in self.args if isinstance(a, Tensor))
                raise TVMValueError(
                    f"te.create_prim_func: the placeholder {tensor.name!r} is read by the "
                    f"computation but is not an argument; the arguments are [{listed}]"
                )
            self.declare(tensor)
        elif isinstance(op, ComputeOp):
            self.stmts.append(self.compute(op))
        else:
            raise TVMTypeError(f"te.create_prim_func: unsupported operation {type(op).__name__} "
                               f"{op.name!r}; only te.placeholder and te.compute are supported")

    def compute(self, op: ComputeOp):
        axes = op.axis + op.reduce_axis
        scopes = self.scopes(axes)
        outputs = [op.output(i) for i in range(op.num_outputs)]
        buffers = [self.declare(t) for t in outputs]
        annotations = self.annotations(op)
        leaf = scopes[-1]
        reduce = op.body[0] if isinstance(op.body[0], Reduce) else None
        if reduce is not None:
            init = self.init_stmt(leaf, buffers, reduce)
            body = self.reduce_stmt(leaf, buffers, reduce)
            blocks = [self.block(leaf, self.fresh_name(op.name), body, init, annotations)]
        else:
            blocks = []
            for i, (buf, value) in enumerate(zip(buffers, op.body)):
                if i > 0:
                    leaf.renew(axes)
                store = BufferStore(buf, simplify(self.to_tir(value, leaf.remap)),
                                    leaf.store_indices)
                blocks.append(self.block(leaf, self.fresh_name(buf.name), store, None,
                                         annotations))
        body = stmt_seq(*blocks)
        for level in range(len(scopes), 0, -1):
            scope = scopes[level - 1]
            if level < len(scopes):
                init = None
                if reduce is not None and any(iv.iter_type == IterVarType.CommReduce
                                              for iv in scope.iters):
                    init = self.init_stmt(scope, buffers, reduce)
                name = self.fresh_name(f"{op.name}_l{level}")
                body = self.block(scope, name, body, init, annotations)
            for loop_var, dom in reversed(scope.loops):
                body = For(loop_var, dom.min, dom.extent, ForKind.SERIAL, body)
        return body

    def scopes(self, axes: list) -> list[_Scope]:
        """The loop levels: an axis whose range uses another axis goes one level deeper;
        deeper levels re-bind the outer axes as single-point block iterators."""
        levels = _nested_levels(axes)
        scopes: list[_Scope] = []
        defined: set[int] = set()
        for depth, level in enumerate(levels):
            scope = _Scope()
            in_level = {id(a) for a in level}
            for axis in axes:
                index_type = f"int{max(dt.bits(axis.dom.min.dtype), dt.bits(axis.dom.extent.dtype))}"
                name = axis.var.name_hint
                if id(axis) in in_level:
                    lo, extent = axis.dom.min, axis.dom.extent
                    if depth > 0:
                        prev = scopes[depth - 1].remap
                        lo, extent = self.to_tir(lo, prev), self.to_tir(extent, prev)
                    dom = Range(simplify(lo), simplify(extent))
                    loop_var = Var(name, index_type)
                    iv = IterVar(dom, Var(f"v_{name}", index_type), axis.iter_type,
                                 axis.thread_tag)
                    scope.loops.append((loop_var, dom))
                    scope.add(axis, iv, loop_var)
                    defined.add(id(axis.var))
                elif id(axis.var) in defined:
                    prev_value = scopes[depth - 1].remap[id(axis.var)]
                    iv = IterVar(Range(prev_value, IntImm(index_type, 1)),
                                 Var(f"v_{name}", index_type), axis.iter_type, axis.thread_tag)
                    scope.add(axis, iv, prev_value)
            if depth == len(levels) - 1 and not scope.iters:
                # a block needs an iterator: a scalar compute gets a dummy one
                scope.add(None, IterVar(Range(0, 1), Var("vi", "int32"), IterVarType.DataPar),
                          IntImm("int32", 0))
            scopes.append(scope)
        return scopes

    def annotations(self, op: ComputeOp) -> dict:
        """The op's attrs as block annotations, tensors replaced by their buffers; a
        layout-free placeholder that is a parameter goes to the function attribute instead."""
        out = {}
        for key, value in op.attrs.items():
            if key in _DROPPED_ANNOTATIONS:
                continue
            if isinstance(value, (list, tuple)):
                value = [self.buffer_of(v) if isinstance(v, Tensor) else v for v in value]
            elif isinstance(value, Tensor):
                value = self.buffer_of(value)
            if key == _LAYOUT_FREE and isinstance(value, list):
                params = {id(self.buffers[t]): i for t, i in self.arg_index.items()
                          if t in self.buffers}
                kept = [b for b in value if id(b) not in params]
                self.layout_free.update(params[id(b)] for b in value if id(b) in params)
                if not kept:
                    continue
                value = kept
            out[key] = value
        return out

    def init_stmt(self, scope: _Scope, buffers: list, reduce: Reduce):
        starts = reduce.init or reduce.combiner.identity_element
        return stmt_seq(*[BufferStore(buf, self.to_tir(v, scope.remap), scope.store_indices)
                          for buf, v in zip(buffers, starts)])

    def reduce_stmt(self, scope: _Scope, buffers: list, reduce: Reduce):
        indices = scope.store_indices
        lhs = [BufferLoad(buf, indices) for buf in buffers]
        rhs = [simplify(self.to_tir(s, scope.remap)) for s in reduce.source]
        combined = [self.to_tir(c, scope.remap) for c in reduce.combiner(lhs, rhs)]
        if len(buffers) == 1:
            body = BufferStore(buffers[0], combined[0], indices)
        else:
            # several values reduce together: compute all of them before storing any
            temps = [Var(f"v_{buf.name}", buf.dtype) for buf in buffers]
            body = stmt_seq(*[BufferStore(buf, t, indices) for buf, t in zip(buffers, temps)])
            for temp, value in reversed(list(zip(temps, combined))):
                body = LetStmt(temp, value, body)
        condition = simplify(self.to_tir(reduce.condition, scope.remap))
        if not (isinstance(condition, IntImm) and condition.value):
            body = IfThenElse(condition, body)
        return body

    def block(self, scope: _Scope, name: str, body, init, annotations: dict) -> BlockRealize:
        block = Block(scope.iters, [], [], name, body, init, [], [], dict(annotations))
        reads, writes = get_block_access_region(block, self.visible_buffers())
        block = block.replace(reads=reads, writes=writes)
        return BlockRealize(scope.bindings, IntImm("bool", True), block)

    def visible_buffers(self) -> list:
        return list(self.buffers.values())

    # -- the function -----------------------------------------------------------------
    def finish(self) -> PrimFunc:
        params, buffer_map = [], {}
        for a in self.args:
            if isinstance(a, Var):
                params.append(a)
                continue
            if id(a) not in self.buffers:  # only reachable through its own op
                raise TVMValueError(f"te.create_prim_func: the tensor {a.name!r} is not "
                                    "computed from the other arguments")
            handle = Var(f"var_{a.name}", "handle")
            params.append(handle)
            buffer_map[handle] = self.buffer_of(a)
        root = Block([], [], [], "root", stmt_seq(*self.stmts), None, list(self.root_alloc))
        body = BlockRealize([], IntImm("bool", True), root)
        attrs = {"global_symbol": "main", "tir.noalias": True}
        if self.layout_free:
            attrs["layout_free_buffers"] = sorted(self.layout_free)
        return PrimFunc(params, body, None, buffer_map, attrs)


def _nested_levels(axes: list) -> list[list[IterVar]]:
    """Axes grouped by depth: 0 when the range uses no other axis, else one more than the
    deepest axis it uses (TVM's GenerateNestedIterLevels)."""
    by_var = {id(a.var): a for a in axes}
    depth: dict[int, int] = {}

    def depth_of(axis) -> int:
        if id(axis) in depth:
            return depth[id(axis)]
        d = 0
        for e in (axis.dom.min, axis.dom.extent):
            for v in post_order(simplify(e)):
                dep = by_var.get(id(v)) if isinstance(v, Var) else None
                if dep is not None:
                    d = max(d, depth_of(dep) + 1)
        depth[id(axis)] = d
        return d

    for a in axes:
        depth_of(a)
    levels: list[list] = [[] for _ in range(max(depth.values(), default=0) + 1)]
    for a in axes:
        levels[depth[id(a)]].append(a)
    return levels
