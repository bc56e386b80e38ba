"""``FuseOps``: group the bindings of dataflow blocks into fused Relax functions (as TVM's
``relax.transform.FuseOps``), to be turned into single kernels by ``FuseTIR``.

1. **Graph.** Every value of every Relax function (not ``Primitive`` ones) becomes a node:
   parameters and block outputs are visible outside (``extern_ref``); a binding of
   ``R.call_tir`` takes the ``op_pattern`` of its PrimFunc (``AnnotateTIROpPattern``;
   opaque without one), a ``TupleGetItem`` is injective, anything else opaque; edges go from
   each argument to its consumer.
2. **Partition.** ``GraphPartitioner`` merges nodes into their post-dominators by TVM's rules
   (``mlckit.relax.analysis.graph_partitioner``): a matmul followed by element-wise ops
   becomes one group; element-wise and broadcast chains join their consumer.
3. **Functions.** Each group of more than one binding becomes a private function
   ``fused_<kernel names>`` with ``R.func_attr({"Primitive": True})``; its parameters are
   the values the group reads (constants become parameters ``param_0`` …, a tuple read only
   through ``t[i]`` is passed field by field as ``t_i``); it returns the values used after
   the group (a tuple when there are several).  The block calls it at the place of the
   group's last binding.

The MLP of the course::

    lv = R.call_tir(cls.dense, (x, w0)); lv1 = R.call_tir(cls.add, (lv, b0))
    lv2 = R.call_tir(cls.relu, (lv1,)); lv3 = R.call_tir(cls.dense1, (lv2, w1))
    lv4 = R.call_tir(cls.add1, (lv3, b1))

becomes ``lv = cls.fused_dense_add_relu(x, w0, b0)`` and
``lv1 = cls.fused_dense1_add1(lv, w1, b1)``.

``fuse_opt_level=-1`` takes the ``PassContext``'s opt_level (0 fuses nothing); the config
``"relax.FuseOps.max_depth"`` bounds a group (256).

Example::

    mod = FuseOps()(AnnotateTIROpPattern()(mod))
"""

from __future__ import annotations

from mlckit.error import InternalError
from mlckit.ir.module import GlobalVar, IRModule
from mlckit.ir.node import Node
from mlckit.ir.op import Op
from mlckit.ir.transform import ModulePass, PassInfo
from mlckit.tir import expr as tx

from ..analysis.graph_partitioner import GraphNode, GraphPartitioner, IndexedForwardGraph
from ..analysis.struct_info import collect_tir_vars, erase_to_well_defined
from ..analysis.tir_op_pattern_kind import OpPatternKind as K
from ..analysis.well_formed import definable_tir_vars
from ..block_builder import BlockBuilder
from ..expr import (
    Binding,
    Call,
    Constant,
    DataflowBlock,
    DataflowVar,
    DataTypeImm,
    Expr,
    Function,
    MatchCast,
    PrimValue,
    SeqExpr,
    ShapeExpr,
    StringImm,
    Tuple,
    TupleGetItem,
    Var,
    VarBinding,
)
from ..expr_functor import PyExprMutator
from ..struct_info import ShapeStructInfo, StructInfo, TupleStructInfo
from .bind_symbolic_vars import bind_symbolic_vars

_CALL_TIR = ("relax.call_tir", "relax.call_tir_inplace")
_LEAVES = (Var, Constant, ShapeExpr, PrimValue, StringImm, DataTypeImm)


def is_fusible_function(func) -> bool:
    """Relax functions FuseOps works on: not already fused (``Primitive``), not offloaded
    (``Codegen``).

    Example::

        is_fusible_function(mod["main"])      # True
    """
    return isinstance(func, Function) and not func.attrs.get("Primitive") \
        and "Codegen" not in func.attrs


def _is_call_tir(expr) -> bool:
    return isinstance(expr, Call) and isinstance(expr.op, Op) and expr.op.name in _CALL_TIR


# -- 1. the graph ---------------------------------------------------------------------------------
class _GraphCreator:
    """The indexed forward graph of the Relax functions of a module (TVM's GraphCreator)."""

    def __init__(self, mod: IRModule):
        self.mod = mod
        self.graph = IndexedForwardGraph()
        self.keep: list = []  # the objects the graph's ids stand for stay alive
        self.input_params: set[int] = set()

    @staticmethod
    def create(mod: IRModule) -> IndexedForwardGraph:
        creator = _GraphCreator(mod)
        for func in mod.functions.values():
            if is_fusible_function(func):
                creator.function(func)
        return creator.graph

    def function(self, func: Function) -> None:
        for p in func.params:
            node = self._create_node(p)
            node.extern_ref = True  # passed in from outside
            node.pattern = K.kOpaque
            self._add_to_post_dfs(node, p)
        num_input = func.attrs.get("num_input")
        if num_input is not None:
            self.input_params |= {id(p) for p in func.params[int(num_input):]}
        self.expr(func.body)

    def expr(self, expr) -> None:
        if isinstance(expr, SeqExpr):
            for block in expr.blocks:
                for binding in block.bindings:
                    self.binding(binding)
            self.expr(expr.body)
        elif isinstance(expr, Function):
            self.function(expr)

    def binding(self, binding: Binding) -> None:
        node = self._create_node(binding.var)
        if isinstance(binding, MatchCast):
            node.pattern = K.kOpaque
            self._add_to_post_dfs(node, binding.var)
            return
        if not isinstance(binding.var, DataflowVar):
            node.extern_ref = True  # an output of its block
        value = binding.value
        if isinstance(value, Call):
            self._call(value, node)
        elif isinstance(value, TupleGetItem):
            pattern = K.kOpaque if id(value.tuple_value) in self.input_params else K.kInjective
            node.pattern = pattern
            self._leaf(value.tuple_value, node, pattern)
        else:
            node.pattern = K.kOpaque
            for leaf in _post_order_leaves(value):
                self._leaf(leaf, node, K.kOpaque)
        self._add_to_post_dfs(node, binding.var)

    def _call(self, call: Call, node: GraphNode) -> None:
        pattern = K.kOpaque
        args = call.args
        if _is_call_tir(call):
            func = self.mod[call.args[0]]
            args = call.args[1].fields
            if "op_pattern" in getattr(func, "attrs", {}):
                pattern = K(int(func.attrs["op_pattern"]))
        node.pattern = pattern
        for arg in args:
            self._leaf(arg, node, pattern)

    def _leaf(self, expr, consumer: GraphNode, pattern: K) -> None:
        if isinstance(expr, Tuple):
            for field in expr.fields:
                self._leaf(field, consumer, pattern)
            return
        if not isinstance(expr, _LEAVES):
            return  # GlobalVar, ExternFunc, Op
        node = self.graph.node_map.get(id(expr))
        if node is None:
            node = self._create_node(expr)
            node.pattern = K.kOpaque  # constants are never fused
            self._add_to_post_dfs(node, expr)
        node.outputs.append((consumer, pattern))

    def _create_node(self, key) -> GraphNode:
        if id(key) in self.graph.node_map:
            raise InternalError(f"FuseOps: {key!r} is defined twice")
        node = GraphNode()
        self.graph.node_map[id(key)] = node
        self.keep.append(key)
        return node

    def _add_to_post_dfs(self, node: GraphNode, key) -> None:
        node.ref = key
        node.index = len(self.graph.post_dfs_order)
        self.graph.post_dfs_order.append(node)


def _post_order_leaves(expr) -> list:
    """The Vars and Constants ``expr`` uses, in post order (variables defined inside it and
    nested functions are not entered)."""
    out: list = []

    def walk(x):
        if isinstance(x, (Var, Constant)):
            out.append(x)
        elif isinstance(x, (list, tuple)):
            for item in x:
                walk(item)
        elif isinstance(x, (VarBinding, MatchCast)):
            walk(x.value)
        elif isinstance(x, Node) and not isinstance(x, (Function, StructInfo, tx.PrimExpr,
                                                           GlobalVar, Op)):
            for name in type(x).field_names():
                walk(getattr(x, name))

    walk(expr)
    return out


# -- 3. one fused function --------------------------------------------------------------------------
class _FunctionCreator:
    """Collects the bindings of one group, its parameters and arguments, its outputs; then
    builds the fused function (TVM's FunctionCreator)."""

    def __init__(self):
        self.bindings: list[Binding] = []
        self.params: list[Var] = []
        self.arguments: list[Expr] = []
        self.name_hint = "fused"
        self.function: Function | None = None
        self._defined: set[int] = set()
        self._outputs: list[Var] = []
        self._n_const_params = 0
        self._tuple_param_idx: dict[int, int] = {}
        self._partial_tuples: dict[int, list[int]] = {}  # tuple arg -> indices read

    # -- collecting ---------------------------------------------------------------------------
    def append_binding(self, binding: Binding) -> None:
        if isinstance(binding, VarBinding):
            value = binding.value
            if _is_call_tir(value):
                self.name_hint += "_" + value.args[0].name_hint
                for arg in value.args[1].fields:
                    self._check_def_and_update_param(arg)
            elif isinstance(value, Call):
                if isinstance(value.op, Op):
                    self.name_hint += "_" + value.op.name
                elif isinstance(value.op, GlobalVar):
                    name = value.op.name_hint
                    self.name_hint += "_" + (name[len("fused_"):] if name.startswith("fused_")
                                             else name)
                for arg in value.args:
                    for a in (arg.fields if isinstance(arg, Tuple) else [arg]):
                        self._check_def_and_update_param(a)
                    if isinstance(arg.struct_info, TupleStructInfo):
                        self._partial_tuples.pop(id(arg), None)  # used as a whole
            elif isinstance(value, TupleGetItem):
                self._check_def_and_update_param(value.tuple_value)
                indices = self._partial_tuples.get(id(value.tuple_value))
                if indices is not None and value.index not in indices:
                    indices.append(value.index)
            self._defined.add(id(binding.var))
            if not isinstance(binding.var, DataflowVar):
                self.append_output(binding.var)
        self.bindings.append(binding)

    def append_output(self, var: Var) -> int:
        """Mark ``var`` (bound in the group) as an output; returns its output index."""
        for i, v in enumerate(self._outputs):
            if v is var:
                return i
        self._outputs.append(var)
        return len(self._outputs) - 1

    @property
    def outputs(self) -> list[Var]:
        """The variables of the group read after it, in output order."""
        return list(self._outputs)

    def output_index(self, var: Var) -> int | None:
        for i, v in enumerate(self._outputs):
            if v is var:
                return i
        return None

    def _check_def_and_update_param(self, expr: Expr) -> None:
        if any(a is expr for a in self.arguments):
            return
        is_var = isinstance(expr, Var)
        if is_var and id(expr) in self._defined:
            return
        if is_var:
            name = expr.name_hint
        else:
            name = f"param_{self._n_const_params}"
            self._n_const_params += 1
        sinfo = expr.struct_info
        if not _is_inlinable_constant(expr):
            self.arguments.append(expr)
            self.params.append(Var(name, sinfo))
        if isinstance(sinfo, TupleStructInfo):
            self._partial_tuples[id(expr)] = []
            self._tuple_param_idx[id(expr)] = len(self.arguments) - 1

    # -- building ---------------------------------------------------------------------------------
    def create_function(self, attrs: dict) -> None:
        item_params = self._expand_partial_tuples()
        if not self._outputs:
            self.function = None  # nothing of the group is used: dead code
            return
        param_of = {id(a): p for a, p in zip(self.arguments, self.params)}
        remap: dict[int, Expr] = {}

        def sub(expr):
            hit = param_of.get(id(expr))
            if hit is not None:
                return hit
            if isinstance(expr, Var):
                return remap.get(id(expr), expr)
            if isinstance(expr, Tuple):
                return Tuple([sub(f) for f in expr.fields])
            if isinstance(expr, TupleGetItem):
                return TupleGetItem(sub(expr.tuple_value), expr.index)
            if isinstance(expr, Call):
                return Call(expr.op, [sub(a) for a in expr.args], expr.attrs,
                            list(expr.sinfo_args), span=expr.span)
            return expr

        outputs: list = [None] * len(self._outputs)
        bb = BlockBuilder()
        with bb.function("fused", self.params, attrs={**attrs, "Primitive": True},
                         private=True):
            with bb.dataflow():
                for binding in self.bindings:
                    value = binding.value
                    index = self.output_index(binding.var)
                    if isinstance(value, TupleGetItem):
                        item = item_params.get(id(value.tuple_value), {}).get(value.index)
                        if item is not None:
                            remap[id(binding.var)] = item
                            if index is not None:
                                outputs[index] = item
                            continue
                    if index is not None:
                        out = bb.emit_output(sub(value))
                        remap[id(binding.var)] = out
                        outputs[index] = out
                    elif isinstance(binding, VarBinding):
                        bb.emit_normalized(VarBinding(binding.var, bb.normalize(sub(value))))
                    else:
                        bb.emit_normalized(MatchCast(binding.var, bb.normalize(sub(value)),
                                                     binding.struct_info))
            bb.emit_func_output(outputs[0] if len(outputs) == 1 else Tuple(outputs))
        func = bb.get()["fused"]
        func = self._add_free_symbolic_vars(func)
        self.function = _renew_symbolic_vars(func)

    def _expand_partial_tuples(self) -> dict[int, dict[int, Var]]:
        """A tuple read only through ``t[i]`` becomes one parameter per field read."""
        out: dict[int, dict[int, Var]] = {}
        order = sorted(self._partial_tuples, key=lambda k: -self._tuple_param_idx[k])
        for key in order:
            indices = self._partial_tuples[key]
            pos = self._tuple_param_idx[key]
            tuple_arg, param = self.arguments[pos], self.params[pos]
            new_args, new_params = [], []
            for i in indices:
                item = Var(f"{param.name_hint}_{i}", param.struct_info.fields[i])
                new_args.append(TupleGetItem(tuple_arg, i))
                new_params.append(item)
                out.setdefault(key, {})[i] = item
            self.arguments[pos:pos + 1] = new_args
            self.params[pos:pos + 1] = new_params
        return out

    def _add_free_symbolic_vars(self, func: Function) -> Function:
        """Symbolic variables the body uses but no parameter defines become a ``tir_vars``
        shape parameter (and argument)."""
        defined = {id(v) for p in func.params for v in definable_tir_vars(p.struct_info)}
        free = [v for v in collect_tir_vars(func.body) if id(v) not in defined]
        if not free:
            return func
        param = Var("tir_vars", ShapeStructInfo(list(free)))
        self.params.append(param)
        self.arguments.append(ShapeExpr(list(free)))
        defined |= {id(v) for v in free}
        ret = erase_to_well_defined(func.body.body.struct_info, defined)
        return func.replace(params=[*func.params, param], ret_struct_info=ret)


def _is_inlinable_constant(expr) -> bool:
    """A PrimValue or shape without variables (or a tuple of them) stays in the function."""
    if isinstance(expr, Tuple):
        return all(_is_inlinable_constant(f) for f in expr.fields)
    if isinstance(expr, PrimValue):
        return not collect_tir_vars(expr.value)
    if isinstance(expr, ShapeExpr):
        return not collect_tir_vars(expr.values)
    return False


def _renew_symbolic_vars(func: Function) -> Function:
    """Fresh TIR variables for those the parameters define, so the fused function shares
    none with its caller (TVM's SymbolicVarRenewMutator)."""
    defined: list = []
    for p in func.params:
        for v in definable_tir_vars(p.struct_info):
            if not any(v is d for d in defined):
                defined.append(v)
    if not defined:
        return func
    return bind_symbolic_vars(func, {v: tx.Var(v.name_hint, v.dtype) for v in defined})


# -- 2 + 3. the fusor -----------------------------------------------------------------------------
class _OperatorFusor(PyExprMutator):
    """Replace each multi-binding group of a dataflow block by a call of its fused function."""

    def __init__(self, mod: IRModule, node_group: dict):
        super().__init__(mod)
        self.node_group = node_group  # id(var or constant) -> Group
        self.group2func: dict[int, _FunctionCreator] = {}  # id(group root) -> creator
        self.groups: dict[int, object] = {}
        self.tuple_get_indices: dict[int, int] = {}
        self.group_deps: dict[int, list] = {}

    def transform(self) -> IRModule:
        for gv, func in list(self.mod.functions.items()):
            if is_fusible_function(func):
                self.builder_.update_func(gv, self.visit_expr(func))
        return self.builder_.get()

    def group_of(self, var) -> object | None:
        group = self.node_group.get(id(var))
        return None if group is None else group.find_root()

    def _single(self, group) -> bool:
        return group.num_nodes == 1 and not group.attrs

    def visit_dataflow_block_(self, block: DataflowBlock):
        if any(self.group_of(b.var) is None for b in block.bindings):
            return super().visit_dataflow_block_(block)  # not in the graph (a nested scope)
        self.group2func = {}
        for binding in block.bindings:  # 1. the bindings of each group
            group = self.group_of(binding.var)
            if self._single(group):
                continue
            self.groups[id(group)] = group
            creator = self.group2func.setdefault(id(group), _FunctionCreator())
            creator.append_binding(binding)
        self._collect_boundary(block.bindings)  # 2. what each group must return
        for gid, creator in self.group2func.items():  # 3. the functions
            creator.create_function(dict(self.groups[gid].attrs))
        # 4. emit, groups in dependency order, each call at the group's last binding
        self.builder_._begin_dataflow_block()
        pending: dict[int, list] = {}
        try:
            for binding in self._topo_sort(block.bindings):
                group = self.group_of(binding.var)
                if self._single(group):
                    self.visit_binding(binding)
                    continue
                creator = self.group2func[id(group)]
                func = creator.function
                if func is None:
                    continue
                tuple_out = isinstance(func.struct_info.ret, TupleStructInfo)
                if tuple_out and id(binding.var) in self.tuple_get_indices and (
                        not isinstance(binding.var.struct_info, TupleStructInfo)
                        or _is_nested_tuple(func)):
                    pending.setdefault(id(group), []).append(binding.var)
                if binding is not creator.bindings[-1]:
                    continue
                self._emit_group_call(binding, creator, pending.get(id(group), []))
        finally:
            new_block = self.builder_._end_block()
        return new_block

    def _emit_group_call(self, binding: Binding, creator: _FunctionCreator, pending: list):
        if not isinstance(binding, VarBinding):
            raise InternalError("FuseOps: the last binding of a group must bind a variable")
        func = creator.function
        gv = self.builder_.add_func(func, creator.name_hint)
        call = Call(gv, [self.visit_expr(a) for a in creator.arguments])
        if isinstance(binding.var, DataflowVar):
            new_var = self.builder_.emit(call)
        else:
            new_var = self.builder_.emit_output(call)
        outputs = creator.outputs
        if len(outputs) == 1:
            self.var_remap[id(outputs[0])] = new_var
            return
        # several outputs: each variable read after the group takes its field of the tuple
        # (those read by later groups first, in binding order, as TVM; then block outputs)
        waiting = [id(v) for v in pending]
        done: set[int] = set()
        for var in [*pending, *outputs]:
            if id(var) in done or (id(var) not in waiting and isinstance(var, DataflowVar)):
                continue
            done.add(id(var))
            item = TupleGetItem(new_var, creator.output_index(var))
            emit = self.builder_.emit if isinstance(var, DataflowVar) else self.builder_.emit_output
            self.var_remap[id(var)] = emit(item)

    def _collect_boundary(self, bindings: list) -> None:
        for binding in bindings:
            cur = self.group_of(binding.var)
            for used in _used_vars(binding.value):
                producer = self.group_of(used)
                if producer is None:
                    continue
                if producer is not cur:
                    for dep in self.group_deps.get(id(producer), []):
                        if dep is cur:
                            raise InternalError(
                                f"FuseOps: a cyclic dependency between the groups of "
                                f"{binding.var.name_hint!r} and {used.name_hint!r}")
                    self.group_deps.setdefault(id(cur), []).append(producer)
                    creator = self.group2func.get(id(producer))
                    if creator is not None:
                        self.tuple_get_indices[id(used)] = creator.append_output(used)

    def _topo_sort(self, bindings: list) -> list:
        """Bindings grouped by group, groups after the groups they depend on, otherwise in
        the original order."""
        per_group: dict[int, list] = {}
        order = []
        for binding in bindings:
            group = self.group_of(binding.var)
            order.append(group)
            per_group.setdefault(id(group), []).append(binding)
        visited: set[int] = set()
        out: list = []

        def visit(group):
            if id(group) in visited:
                return
            visited.add(id(group))
            for dep in self.group_deps.get(id(group), []):
                visit(dep)
            out.extend(per_group.get(id(group), []))

        for group in order:
            visit(group)
        return out


def _is_nested_tuple(func: Function) -> bool:
    ret = func.struct_info.ret
    return isinstance(ret, TupleStructInfo) and any(isinstance(f, TupleStructInfo)
                                                    for f in ret.fields)


def _used_vars(expr) -> list:
    """The relax Vars ``expr`` uses (any depth, but not inside nested functions)."""
    return [v for v in _post_order_leaves(expr) if isinstance(v, Var)]


def fuse_ops(mod: IRModule, opt_level: int = 2, max_fuse_depth: int = 256) -> IRModule:
    """``mod`` with the bindings of its dataflow blocks grouped into fused functions.

    Example::

        fused = fuse_ops(AnnotateTIROpPattern()(mod))
    """
    graph = _GraphCreator.create(mod)
    groups = GraphPartitioner(opt_level, max_fuse_depth).partition(graph)
    node_group = {id(node.ref): groups[node.index] for node in graph.post_dfs_order}
    fusor = _OperatorFusor(mod, node_group)
    fusor.keep = [node.ref for node in graph.post_dfs_order]  # ids above stay valid
    return fusor.transform()


def FuseOps(fuse_opt_level: int = -1) -> ModulePass:  # noqa: N802 - TVM's name
    """The pass fusing operators by their patterns (see the module doc).

    Example::

        mod = relax.transform.FuseOps()(relax.transform.AnnotateTIROpPattern()(mod))
    """

    def run(mod: IRModule, ctx) -> IRModule:
        level = ctx.opt_level if fuse_opt_level == -1 else fuse_opt_level
        depth = int(ctx.config.get("relax.FuseOps.max_depth", 256))
        return fuse_ops(mod, level, depth)

    return ModulePass(run, PassInfo(0, "FuseOps"))


__all__ = ["FuseOps", "fuse_ops", "is_fusible_function"]
