"""``FuseOpsByPattern``: group the bindings that match a dataflow pattern into functions
(TVM's ``relax.transform.FuseOpsByPattern``), the first step of offloading subgraphs to a
library such as cuBLAS (``relax.backend``).

For each pattern in turn (the first has the highest priority), each binding of each dataflow
block is tried as the root of a match; a match whose bindings are all still free and whose
intermediate values are used only inside it (and that the pattern's ``check`` accepts)
becomes a group.  Each group becomes a function, called at the place of its last binding,
named ``fused_<op names>`` and marked ``R.func_attr({"Composite": "<pattern name>",
"Primitive": True})``.  With ``annotate_codegen=True`` the composite function is wrapped in
an outer function marked ``{"Codegen": "<prefix of the pattern name>", "global_symbol":
...}`` (named ``fused_<op names>_<codegen>``), which ``RunCodegen`` hands to that library::

    lv = R.permute_dims(w); lv1 = R.matmul(x, lv)         lv = cls.fused_relax_permute_dims_
    lv2 = R.add(lv1, b); lv3 = R.nn.relu(lv2)       ─►       relax_matmul_relax_add_relax_nn_
                                                              relu_cublas(w, x, b)

Parameters are the values the group reads, in order of first use.  Constants stay inside the
function with ``bind_constants=True`` and become parameters ``param_0`` … otherwise.

Example::

    pattern = relax.backend.get_pattern("numpy.matmul_bias_relu")
    mod = relax.transform.FuseOpsByPattern([pattern], annotate_codegen=True)(mod)
"""

from __future__ import annotations

from mlckit.error import TVMTypeError
from mlckit.ir.module import IRModule
from mlckit.ir.transform import ModulePass, PassInfo

from ..analysis.graph_partitioner import Group
from ..analysis.tir_op_pattern_kind import OpPatternKind as K
from ..dpl import DFPattern, match_bindings
from ..expr import (
    BindingBlock,
    Call,
    Constant,
    DataflowBlock,
    DataflowVar,
    Expr,
    Function,
    SeqExpr,
    Var,
    VarBinding,
)
from ..expr_functor import ExprMutator, PyExprVisitor
from .fuse_ops import _OperatorFusor, _used_vars, is_fusible_function


class FusionPattern:
    """A named pattern: ``name`` (``"<codegen>.<what>"``, e.g. ``"cublas.matmul_bias"``),
    ``pattern`` (a DFPattern matched at the group's last binding), ``annotation_patterns``
    (name → sub-pattern, to find the matched operands: ``"lhs"``, ``"bias"``, ``"root"``)
    and ``check`` (``PatternCheckContext -> bool``, may reject a match).  ``attrs_getter``
    is accepted for TVM's signature and not used.

    Example::

        FusionPattern("numpy.matmul", is_op("relax.matmul")(wildcard(), wildcard()))
    """

    def __init__(self, name: str, pattern: DFPattern, annotation_patterns=None, check=None,
                 attrs_getter=None):
        if not isinstance(name, str) or not isinstance(pattern, DFPattern):
            raise TVMTypeError(f"FusionPattern takes a name and a DFPattern, got "
                               f"{type(name).__name__} and {type(pattern).__name__}")
        self.name, self.pattern = name, pattern
        self.annotation_patterns = dict(annotation_patterns or {})
        self.check, self.attrs_getter = check, attrs_getter

    def __repr__(self):
        return f"FusionPattern({self.name!r}, {self.pattern!r})"


class PatternCheckContext:
    """What a pattern's ``check`` sees about one match: ``matched_expr`` (the root value),
    ``annotated_expr`` (annotation name → matched expression), ``matched_bindings`` (variable
    → value for the bindings the group takes), ``var_usages`` (variable → the variables whose
    bindings use it) and ``value_to_bound_var`` (value → its variable).

    A pattern's check receives one and may refuse the match::

        def only_square(ctx: PatternCheckContext) -> bool:
            return ctx.annotated_expr["lhs"].struct_info.shape == ctx.annotated_expr["rhs"].struct_info.shape

        FuseOpsByPattern([("dnnl.matmul", matmul_pattern, annotations, only_square)])
    """

    def __init__(self, matched_expr, annotated_expr, matched_bindings, var_usages,
                 value_to_bound_var):
        self.matched_expr = matched_expr
        self.annotated_expr = annotated_expr
        self.matched_bindings = matched_bindings
        self.var_usages = var_usages
        self.value_to_bound_var = value_to_bound_var


class _Usages(PyExprVisitor):
    """variable -> the variables whose binding uses it; a use elsewhere (a block's result, a
    branch) counts as a use by ``None``."""

    def __init__(self):
        super().__init__()
        self.usages: dict[Var, list] = {}

    def visit_var_binding_(self, binding: VarBinding) -> None:
        for v in _used_vars(binding.value):
            self.usages.setdefault(v, []).append(binding.var)
        super().visit_var_binding_(binding)

    def visit_seq_expr_(self, op: SeqExpr) -> None:
        for v in _used_vars(op.body):
            self.usages.setdefault(v, []).append(None)
        super().visit_seq_expr_(op)


def _as_fusion_pattern(p) -> FusionPattern:
    if isinstance(p, FusionPattern):
        return p
    if isinstance(p, tuple) and 2 <= len(p) <= 4:
        return FusionPattern(*p)
    raise TVMTypeError(f"FuseOpsByPattern: a pattern must be a FusionPattern or a tuple (name, "
                       f"pattern[, annotations[, check]]), got {type(p).__name__} {p!r}")


def _partition_block(block: DataflowBlock, patterns: list, usages: dict) -> dict:
    """id(var) -> Group for every binding of ``block``: one group per match, one per binding
    left alone."""
    var2val = {b.var: b.value for b in block.bindings if isinstance(b, VarBinding)}
    value_to_var = {id(v): var for var, v in var2val.items()}
    taken: dict[int, Group] = {}
    for fp in patterns:
        for binding in block.bindings:
            if not isinstance(binding, VarBinding) or id(binding.var) in taken:
                continue
            found = match_bindings(fp.pattern, binding.value, var2val)
            if found is None:
                continue
            matched, bindings = found
            group_vars = [b.var for b in block.bindings
                          if b.var is binding.var or b.var in bindings]
            if any(id(v) in taken for v in group_vars):
                continue
            if _leaks(group_vars, binding.var, usages):
                continue  # an intermediate value is needed outside: the group cannot own it
            annotated = {name: matched[id(p)][1] for name, p in fp.annotation_patterns.items()
                         if id(p) in matched}
            if fp.check is not None:
                ctx = _Context(binding.value, annotated,
                               {v: var2val[v] for v in group_vars}, usages, value_to_var)
                if not fp.check(ctx):
                    continue
            group = Group(K.kOpaque, binding.var)
            group.num_nodes = len(group_vars)
            group.attrs = {"Composite": fp.name}
            for v in group_vars:
                taken[id(v)] = group
    for b in block.bindings:
        taken.setdefault(id(b.var), Group(K.kOpaque, b.var))
    return taken


class _Context(PatternCheckContext):
    """The context of one match, built from the block's tables."""

    def __init__(self, matched_expr, annotated, matched_bindings, usages, value_to_var):
        super().__init__(matched_expr, annotated, matched_bindings,
                         {v: [u for u in us if u is not None] for v, us in usages.items()},
                         _ByIdentity(value_to_var))


class _ByIdentity(dict):
    """A mapping keyed by the identity of expressions."""

    def __init__(self, by_id: dict):
        super().__init__()
        self.by_id = by_id

    def __getitem__(self, expr: Expr):
        return self.by_id[id(expr)]

    def __contains__(self, expr) -> bool:
        return id(expr) in self.by_id


def _leaks(group_vars: list, root: Var, usages: dict) -> bool:
    inside = {id(v) for v in group_vars}
    for v in group_vars:
        if v is root:
            continue
        if not isinstance(v, DataflowVar):
            return True
        if any(u is None or id(u) not in inside for u in usages.get(v, [])):
            return True
    return False


class _PatternFusor(_OperatorFusor):
    def __init__(self, mod, patterns, bind_constants, annotate_codegen):
        super().__init__(mod, {})
        self.patterns, self.bind_constants = patterns, bind_constants
        self.annotate_codegen = annotate_codegen

    def visit_function_(self, op: Function):
        visitor = _Usages()
        visitor.visit_expr(op)
        self.usages = visitor.usages
        return super().visit_function_(op)

    def visit_dataflow_block_(self, block: DataflowBlock):
        self.node_group = _partition_block(block, self.patterns, self.usages)
        return super().visit_dataflow_block_(block)

    def _emit_group_call(self, binding, creator, pending):
        if self.bind_constants:
            _bind_constants(creator)
        _name_params_after_arguments(creator, [self.visit_expr(a) for a in creator.arguments])
        func = creator.function
        creator.name_hint = creator.name_hint.replace(".", "_")
        if self.annotate_codegen:
            codegen = func.attrs["Composite"].split(".")[0]
            creator.function = _wrap_for_codegen(func, codegen)
            creator.name_hint += "_" + codegen
        super()._emit_group_call(binding, creator, pending)


def _bind_constants(creator) -> None:
    """Constants the group reads go back into its function (FuseOps makes them parameters)."""
    bound = {id(p): a for a, p in zip(creator.arguments, creator.params)
             if isinstance(a, Constant)}
    if not bound:
        return
    keep = [(a, p) for a, p in zip(creator.arguments, creator.params) if id(p) not in bound]
    creator.arguments = [a for a, _ in keep]
    creator.params = [p for _, p in keep]
    binder = ExprMutator()
    binder.var_remap.update(bound)
    func = creator.function
    creator.function = func.replace(params=list(creator.params),
                                    body=binder.visit_expr(func.body))


def _name_params_after_arguments(creator, arguments: list) -> None:
    """A parameter takes the name its argument has at the call (``lv`` for the result of an
    earlier group, as TVM names it), not the name of the variable it replaced."""
    renamed = {}
    params = []
    for arg, p in zip(arguments, creator.params):
        if isinstance(arg, Var) and arg.name_hint != p.name_hint:
            new = Var(arg.name_hint, p.struct_info)
            renamed[id(p)] = new
            p = new
        params.append(p)
    if not renamed:
        return
    binder = ExprMutator()
    binder.var_remap.update(renamed)
    func = creator.function
    creator.params = params
    creator.function = func.replace(params=params, body=binder.visit_expr(func.body))


def _wrap_for_codegen(composite: Function, codegen: str) -> Function:
    """``def outer(params): local_func = <composite>; return local_func(params)`` with
    ``Codegen`` on the outer function (as TVM prints it)."""
    inner = composite.replace(attrs={"Composite": composite.attrs["Composite"]})
    params = [Var(p.name_hint, p.struct_info) for p in composite.params]
    local = Var("local_func", inner.struct_info)
    output = Var("output", composite.ret_struct_info)
    body = SeqExpr([BindingBlock([VarBinding(local, inner),
                                  VarBinding(output, Call(local, params))])], output)
    return Function(params, body, composite.ret_struct_info, attrs={"Codegen": codegen})


def fuse_ops_by_pattern(mod: IRModule, patterns: list, bind_constants: bool = True,
                        annotate_codegen: bool = False) -> IRModule:
    """``mod`` with the matches of ``patterns`` grouped into functions (see the module doc).

    Example::

        mod = fuse_ops_by_pattern(mod, relax.backend.get_patterns_with_prefix("numpy"))
    """
    patterns = [_as_fusion_pattern(p) for p in patterns]
    out = _PatternFusor(mod, patterns, bind_constants, annotate_codegen).transform()
    for gv, func in list(out.functions.items()):
        if isinstance(func, Function) and "Codegen" in func.attrs \
                and "global_symbol" not in func.attrs:
            out.functions[gv] = func.with_attr("global_symbol", gv.name_hint)
    return out


def FuseOpsByPattern(patterns, bind_constants: bool = True,  # noqa: N802 - TVM's name
                     annotate_codegen: bool = False) -> ModulePass:
    """The pass grouping the matches of ``patterns`` into ``Composite`` functions (see the
    module doc); ``patterns`` are FusionPatterns or ``(name, pattern[, annotations[,
    check]])`` tuples, highest priority first.

    Example::

        mod = relax.transform.FuseOpsByPattern(patterns, annotate_codegen=True)(mod)
    """
    patterns = [_as_fusion_pattern(p) for p in patterns]

    def run(mod: IRModule, ctx) -> IRModule:
        return fuse_ops_by_pattern(mod, patterns, bind_constants, annotate_codegen)

    return ModulePass(run, PassInfo(0, "FuseOpsByPattern"))


__all__ = ["FuseOpsByPattern", "FusionPattern", "PatternCheckContext", "fuse_ops_by_pattern",
           "is_fusible_function"]
