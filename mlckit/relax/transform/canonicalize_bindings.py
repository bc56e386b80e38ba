"""``CanonicalizeBindings``: remove trivial bindings and redundant checks (as TVM's
``relax.transform.CanonicalizeBindings``).

Two steps, in TVM's order:

1. **Symbolic variables** (``CanonicalizeTIRVariables``): a ``match_cast`` that defines a
   symbolic variable from a value of known shape (``y = R.match_cast(x, R.Tensor((n,)))``
   with ``x: R.Tensor((16,))``) replaces that variable everywhere by what it matched
   (``n`` becomes ``16``, ``n * 2`` becomes ``32``).  Two ``match_cast`` that give one variable
   two different constants are refused.
2. **Relax bindings** (``CanonicalizeRelaxBindings``):

   - ``y = x`` (and ``match_cast`` to the struct info the value already has): uses of ``y``
     become uses of ``x``, the binding goes;
   - ``y = R.const(...)``: uses of ``y`` become the constant;
   - ``t[i]`` of a tuple built in place, and a tuple rebuilt from all the fields of another,
     are unwrapped;
   - a ``Var`` defined in a dataflow block and used only there becomes a ``DataflowVar``;
   - in a dataflow block, ``lv = f(x); gv = lv`` (``lv`` used nowhere else) becomes
     ``gv = f(x)``.

Best followed by ``DeadCodeElimination`` (bindings whose uses were all replaced remain).

Example::

    # y = x; z = y; return z        ->   return x
    mod = relax.transform.CanonicalizeBindings()(mod)
"""

from __future__ import annotations

from mlckit.error import TVMValueError
from mlckit.ir.module import GlobalVar
from mlckit.ir.node import Node
from mlckit.ir.op import Op
from mlckit.ir.structural import structural_equal
from mlckit.ir.transform import FunctionPass, PassInfo, Sequential
from mlckit.tir import expr as tx

from ..expr import (
    BindingBlock,
    Constant,
    DataflowBlock,
    DataflowVar,
    Expr,
    Function,
    MatchCast,
    SeqExpr,
    Tuple,
    TupleGetItem,
    Var,
    VarBinding,
)
from ..expr_functor import ExprMutator
from ..struct_info import (
    PrimStructInfo,
    ShapeStructInfo,
    StructInfo,
    TensorStructInfo,
    TupleStructInfo,
)
from .bind_symbolic_vars import _SymbolicVarBinder


# -- 1. symbolic variables --------------------------------------------------------------------------
def infer_symbolic_var_map(pattern: StructInfo, value: StructInfo, out: dict) -> dict:
    """TIR variables standing alone in ``pattern`` -> what ``value`` has at their place
    (TVM's ``InferSymbolicVarMap`` for one binding), collected in ``out`` as lists.

    Example::

        infer_symbolic_var_map(R.Tensor((n,)), R.Tensor((16,)), {})    # {n: [16]}
    """

    def bind(p, v):
        if isinstance(p, tx.Var) and v is not None and p is not v:
            out.setdefault(p, []).append(v)

    def dims(ps, vs):
        if ps is not None and vs is not None and len(ps) == len(vs):
            for p, v in zip(ps, vs):
                bind(p, v)

    if isinstance(pattern, TensorStructInfo) and isinstance(value, TensorStructInfo):
        dims(pattern.dims, value.dims)
    elif isinstance(pattern, ShapeStructInfo) and isinstance(value, ShapeStructInfo):
        dims(pattern.values, value.values)
    elif isinstance(pattern, PrimStructInfo) and isinstance(value, PrimStructInfo):
        bind(pattern.value, value.value)
    elif isinstance(pattern, TupleStructInfo) and isinstance(value, TupleStructInfo):
        if len(pattern.fields) == len(value.fields):
            for p, v in zip(pattern.fields, value.fields):
                infer_symbolic_var_map(p, v, out)
    return out


def canonicalize_tir_variables(func: Function) -> Function:
    """``func`` with the symbolic variables its top-level ``match_cast`` bindings pin down
    replaced (see the module doc, step 1).

    Example::

        func = canonicalize_tir_variables(mod["main"])
    """
    found: dict = {}
    for block in func.body.blocks if isinstance(func.body, SeqExpr) else []:
        for binding in block.bindings:
            if isinstance(binding, MatchCast):
                infer_symbolic_var_map(binding.struct_info, binding.value.struct_info, found)
    if not found:
        return func
    mapping = {}
    for var, values in found.items():
        consts = {int(v.value) for v in values if isinstance(v, tx.IntImm)}
        if len(consts) > 1:
            raise TVMValueError(
                f"CanonicalizeBindings: the match_cast bindings must be consistent, but they "
                f"give the symbolic variable {var.name_hint} the values {sorted(consts)}")
        mapping[var] = values[0]
    return _SymbolicVarBinder(mapping).visit_expr(func)


# -- 2. relax bindings: plan ------------------------------------------------------------------------
class _Plan:
    def __init__(self):
        self.replace_usage: dict[int, Var] = {}
        self.replace_binding: dict[int, Var] = {}
        self.remove: set[int] = set()
        self.inline_constant: dict[int, Constant] = {}


class _Planner:
    """Where each variable is defined and used (TVM's CanonicalizePlanner)."""

    def __init__(self):
        self.current_block: BindingBlock | None = None
        self.def_blocks: dict[int, BindingBlock] = {}
        self.trivial: dict[int, tuple[Var, Var]] = {}
        self.known: dict[int, Expr] = {}
        self.constants: dict[int, tuple[Var, Constant]] = {}
        self.defined_in_dataflow: list[Var] = []
        self.used_outside_home: set[int] = set()

    @staticmethod
    def collect(expr) -> _Plan:
        planner = _Planner()
        planner.expr(expr)
        return planner.plan()

    def plan(self) -> _Plan:
        plan = _Plan()
        for var in self.defined_in_dataflow:
            if not isinstance(var, DataflowVar) and id(var) not in self.used_outside_home:
                new = DataflowVar(var.name_hint, var.struct_info_, span=var.span)
                plan.replace_binding[id(var)] = new
                plan.replace_usage[id(var)] = new
        for key, (_, constant) in self.constants.items():
            plan.inline_constant[key] = constant
        for bound_var, bound_to in self.trivial.values():
            while id(bound_to) in self.trivial:
                bound_to = self.trivial[id(bound_to)][1]
            while id(bound_to) in plan.replace_binding:
                bound_to = plan.replace_binding[id(bound_to)]
            if (isinstance(bound_var, DataflowVar) or not isinstance(bound_to, DataflowVar)
                    or id(bound_var) not in self.used_outside_home):
                plan.replace_usage[id(bound_var)] = bound_to  # y = x: use x
            else:
                # gv = lv with gv used after the block: bind gv where lv was bound
                plan.replace_binding[id(bound_to)] = bound_var
                plan.replace_usage[id(bound_to)] = bound_var
            plan.remove.add(id(bound_var))
        return plan

    def inside_dataflow(self) -> bool:
        return isinstance(self.current_block, DataflowBlock)

    # -- walking ----------------------------------------------------------------------------------
    def expr(self, e) -> None:
        if isinstance(e, Var):
            home = self.def_blocks.get(id(e))
            if not self.inside_dataflow() or (home is not None and self.current_block is not None
                                              and self.current_block is not home):
                self.used_outside_home.add(id(e))
        elif isinstance(e, Function):
            saved, self.current_block = self.current_block, None
            for v in free_vars(e):
                self.used_outside_home.add(id(v))
            self.expr(e.body)
            self.current_block = saved
        elif isinstance(e, SeqExpr):
            saved, self.current_block = self.current_block, None
            for block in e.blocks:
                self.current_block = block
                for binding in block.bindings:
                    self.binding(binding)
                self.current_block = None
            self.expr(e.body)
            self.current_block = saved
        elif isinstance(e, Node) and not isinstance(e, (StructInfo, tx.PrimExpr, GlobalVar, Op)):
            for name in type(e).field_names():
                self._field(getattr(e, name))

    def _field(self, value) -> None:
        if isinstance(value, Node):
            self.expr(value)
        elif isinstance(value, (list, tuple)):
            for v in value:
                self._field(v)

    def binding(self, binding) -> None:
        var = binding.var
        same_sinfo = isinstance(binding, VarBinding) or structural_equal(
            var.struct_info, binding.value.struct_info)
        value = binding.value
        unwrapped = self.unwrap_known_value(value)
        if unwrapped is not None:
            value = unwrapped
        if isinstance(value, Var) and same_sinfo:
            self.trivial[id(var)] = (var, value)
        if isinstance(value, Constant):
            self.constants[id(var)] = (var, value)
        self.known[id(var)] = value
        self.def_blocks[id(var)] = self.current_block
        self.expr(binding.value)
        if self.inside_dataflow():
            self.defined_in_dataflow.append(var)

    def _unwrap_var(self, expr):
        while isinstance(expr, Var) and id(expr) in self.known:
            new = self.known[id(expr)]
            if new is expr:
                break
            expr = new
        return expr

    def unwrap_known_value(self, expr):
        """``t[i]`` of a tuple built in place is the field; a tuple of all the fields of
        another tuple, in order, is that tuple."""
        if isinstance(expr, TupleGetItem):
            tup = self._unwrap_var(expr.tuple_value)
            if isinstance(tup, Tuple):
                return tup.fields[expr.index]
        if isinstance(expr, Tuple) and expr.fields:
            first = self._unwrap_var(expr.fields[0])
            if not isinstance(first, TupleGetItem):
                return None
            sinfo = first.tuple_value.struct_info
            if not isinstance(sinfo, TupleStructInfo) or len(sinfo.fields) != len(expr.fields):
                return None
            source = self._unwrap_var(first.tuple_value)
            for i, field in enumerate(expr.fields):
                item = self._unwrap_var(field)
                if not (isinstance(item, TupleGetItem) and item.index == i
                        and self._unwrap_var(item.tuple_value) is source):
                    return None
            return source
        return None


def free_vars(func: Function) -> list[Var]:
    """The relax Vars ``func`` uses without defining them (first use first).

    Example::

        free_vars(inner_function)       # [x] when it reads the enclosing x
    """
    defined: set[int] = set()
    out: list[Var] = []

    def walk(x):
        if isinstance(x, Var):
            if id(x) not in defined and not any(x is v for v in out):
                out.append(x)
        elif isinstance(x, Function):
            defined.update(id(p) for p in x.params)
            walk(x.body)
        elif isinstance(x, SeqExpr):
            for block in x.blocks:
                for b in block.bindings:
                    walk(b.value)
                    defined.add(id(b.var))
            walk(x.body)
        elif isinstance(x, Node) and not isinstance(x, (StructInfo, tx.PrimExpr, GlobalVar, Op)):
            for name in type(x).field_names():
                walk(getattr(x, name))
        elif isinstance(x, (list, tuple)):
            for y in x:
                walk(y)

    walk(func)
    return out


# -- 2. relax bindings: rewrite ---------------------------------------------------------------------
class _BindingCanonicalizer(ExprMutator):
    def __init__(self, plan: _Plan):
        super().__init__()
        self.plan = plan

    def visit_var_binding_(self, binding: VarBinding) -> None:
        if id(binding.var) not in self.plan.remove:
            super().visit_var_binding_(binding)

    def visit_match_cast_(self, binding: MatchCast) -> None:
        if id(binding.var) not in self.plan.remove:
            super().visit_match_cast_(binding)

    def visit_var_def(self, var: Var) -> Var:
        while id(var) in self.plan.replace_binding:
            var = self.plan.replace_binding[id(var)]
        return super().visit_var_def(var)

    def visit_var_(self, op: Var):
        while id(op) in self.plan.replace_usage:
            op = self.plan.replace_usage[id(op)]
        constant = self.plan.inline_constant.get(id(op))
        if constant is not None:
            return constant
        return super().visit_var_(op)

    def visit_dataflow_block_(self, block: DataflowBlock):
        return _fold_into_outputs(super().visit_dataflow_block_(block))


def _vars_used(value) -> set[int]:
    out: set[int] = set()

    def walk(x):
        if isinstance(x, Var):
            out.add(id(x))
        elif isinstance(x, Node) and not isinstance(x, (StructInfo, tx.PrimExpr, GlobalVar, Op)):
            for name in type(x).field_names():
                walk(getattr(x, name))
        elif isinstance(x, (list, tuple)):
            for y in x:
                walk(y)

    if isinstance(value, (VarBinding, MatchCast)):
        walk(value.value)
    else:
        walk(value)
    return out


def _fold_into_outputs(block: BindingBlock) -> BindingBlock:
    """``lv = f(x); gv = lv`` with ``lv`` used nowhere else becomes ``gv = f(x)``."""
    disqualified: set[int] = set()
    outputs: set[int] = set()
    candidates: dict[int, Expr] = {}
    for binding in reversed(block.bindings):
        var, value = binding.var, binding.value
        if isinstance(var, DataflowVar):
            disqualified |= _vars_used(value)
            if id(var) not in disqualified and id(var) in outputs:
                candidates[id(var)] = value
        elif isinstance(value, DataflowVar):
            if id(value) in outputs:
                disqualified.add(id(value))
            outputs.add(id(value))
        else:
            disqualified |= _vars_used(value)
    if not candidates:
        return block
    out = []
    for binding in block.bindings:
        if isinstance(binding.var, DataflowVar) and id(binding.var) in candidates:
            continue
        value = binding.value
        if not isinstance(binding.var, DataflowVar) and isinstance(value, DataflowVar) \
                and id(value) in candidates:
            if isinstance(binding, MatchCast):
                out.append(MatchCast(binding.var, candidates[id(value)], binding.struct_info,
                                     span=binding.span))
            else:
                out.append(VarBinding(binding.var, candidates[id(value)], span=binding.span))
        else:
            out.append(binding)
    return DataflowBlock(out, span=block.span)


def canonicalize_relax_bindings(func: Function) -> Function:
    """``func`` with trivial bindings folded away (see the module doc, step 2).

    Example::

        func = canonicalize_relax_bindings(mod["main"])
    """
    return _BindingCanonicalizer(_Planner.collect(func)).visit_expr(func)


def canonicalize_bindings(func: Function) -> Function:
    """Both steps on one function.

    Example::

        func = canonicalize_bindings(mod["main"])
    """
    return canonicalize_relax_bindings(canonicalize_tir_variables(func))


def CanonicalizeBindings() -> Sequential:  # noqa: N802 - TVM's name
    """The pass (a ``Sequential`` of ``CanonicalizeTIRVariables`` and
    ``CanonicalizeRelaxBindings``, opt_level 1 each, as TVM).

    Example::

        mod = CanonicalizeBindings()(mod)
    """
    return Sequential([
        FunctionPass(lambda f, m, c: canonicalize_tir_variables(f),
                     PassInfo(1, "CanonicalizeTIRVariables")),
        FunctionPass(lambda f, m, c: canonicalize_bindings(f),
                     PassInfo(1, "CanonicalizeRelaxBindings")),
    ], name="CanonicalizeBindings")


__all__ = ["CanonicalizeBindings", "canonicalize_bindings", "canonicalize_relax_bindings",
           "canonicalize_tir_variables", "free_vars", "infer_symbolic_var_map"]
