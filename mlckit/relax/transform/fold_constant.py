"""``FoldConstant``: compute at compile time what depends only on constants (as TVM's
``relax.transform.FoldConstant``).

- ``R.call_tir(kernel, (c0, c1, ...), out_sinfo=R.Tensor(shape, dtype))`` with constant
  arguments and a constant shape runs ``kernel`` now (compiled for ``"llvm"`` by
  ``tir.build``, as TVM does) and becomes ``R.const(result)``;
- inside a dataflow block, a high-level operator whose arguments are constants is legalized
  (its ``FLegalize`` attribute, or the implementation ``LegalizeOps`` would choose) and
  folded the same way when that gives one ``call_tir``;
- a variable bound to a constant is replaced by the constant at its uses; a variable bound
  to ``R.shape([...])`` and passed to an operator becomes that shape;
- bindings left unused are removed.

Kernels that cannot be compiled for the CPU, ``call_tir`` with symbolic arguments
(``tir_vars``) or tuple outputs are left as they are.  The kernels themselves stay in the
module (``DeadCodeElimination`` removes those nothing calls).

Example::

    mod = relax.transform.BindParams("main", params)(mod)
    mod = relax.transform.FoldConstant()(mod)     # e.g. transposed weights computed once
"""

from __future__ import annotations

import importlib

import numpy as np

from mlckit.error import TVMError
from mlckit.ffi.registry import get_global_func
from mlckit.ir.module import GlobalVar, IRModule
from mlckit.ir.op import Op
from mlckit.ir.structural import structural_equal, structural_hash
from mlckit.ir.transform import FunctionPass, PassInfo
from mlckit.tir import dtype as dt
from mlckit.tir import expr as tx
from mlckit.tir.function import PrimFunc

from ..analysis.remove_all_unused import remove_all_unused
from ..expr import Call, Constant, Function, ShapeExpr, Tuple, Var
from ..expr_functor import PyExprMutator
from ..struct_info import TensorStructInfo

_EVAL_TARGET = "llvm"
_EVAL_NAME = "tir_function"


class _PrimFuncEvaluator:
    """Compiled PrimFuncs, cached by structural equality (None: it cannot be compiled)."""

    def __init__(self):
        self._cache: dict[int, list] = {}

    def get(self, func: PrimFunc):
        bucket = self._cache.setdefault(structural_hash(func), [])
        for known, built in bucket:
            if known is func or structural_equal(known, func):
                return built
        built = self._build(func)
        bucket.append((func, built))
        return built

    @staticmethod
    def _build(func: PrimFunc):
        tir_build = get_global_func("tir.build")  # registered by mlckit.driver, above relax
        try:
            module = tir_build(func.with_attr("global_symbol", _EVAL_NAME), target=_EVAL_TARGET)
            return module[_EVAL_NAME]
        except Exception:  # noqa: BLE001 - as TVM: a kernel that does not compile is not folded
            return None


_EVALUATOR = _PrimFuncEvaluator()


class _ConstantFolder(PyExprMutator):
    def __init__(self, mod: IRModule | None):
        super().__init__(mod)
        self.evaluator = _EVALUATOR

    def _prim_func(self, gv) -> PrimFunc | None:
        if not isinstance(gv, GlobalVar):
            return None
        funcs = self.builder_._mod
        if gv in funcs.functions or gv.name_hint in funcs:
            func = funcs[gv]
            return func if isinstance(func, PrimFunc) else None
        return None

    def fold_call_tir(self, call: Call) -> Constant | None:
        """The constant ``call`` computes, or None when it cannot be folded."""
        if len(call.args) != 2 or not isinstance(call.args[1], Tuple):
            return None
        func = self._prim_func(call.args[0])
        args = call.args[1].fields
        if func is None or not all(isinstance(a, Constant) for a in args):
            return None
        out = call.sinfo_args[0] if len(call.sinfo_args) == 1 else None
        if not isinstance(out, TensorStructInfo) or out.dims is None:
            return None
        if not all(isinstance(d, tx.IntImm) for d in out.dims):
            return None
        kernel = self.evaluator.get(func)
        if kernel is None:
            return None
        result = np.empty([int(d.value) for d in out.dims], dtype=dt.to_numpy(out.dtype))
        kernel(*[np.ascontiguousarray(a.data) for a in args], result)
        return Constant(result)

    def visit_call_(self, call: Call):
        post = self.visit_expr_post_order(call)
        if not isinstance(post.op, Op):
            return post
        if post.op.name == "relax.call_tir":
            return self.fold_call_tir(post) or post
        args = []
        for a in post.args:
            bound = self.lookup_binding(a) if isinstance(a, Var) else None
            args.append(bound if isinstance(bound, ShapeExpr) else a)
        if any(a is not b for a, b in zip(args, post.args)):
            post = Call(post.op, args, post.attrs, list(post.sinfo_args), span=post.span)
        if not self.builder_.current_block_is_dataflow():
            return post
        legalize = _legalization(post)
        if legalize is not None and all(_is_constant_like(a) for a in post.args):
            normalized = self.builder_.normalize(post)
            legalized = self.builder_.normalize(legalize(self.builder_, normalized))
            if isinstance(legalized, Call) and isinstance(legalized.op, Op) and \
                    legalized.op.name == "relax.call_tir":
                return self.fold_call_tir(legalized) or post
        return post

    def visit_var_(self, op: Var):
        bound = self.lookup_binding(op)
        if isinstance(bound, Constant):
            return bound
        return super().visit_var_(op)


def _legalization(call: Call):
    """How ``call``'s operator is lowered: its ``FLegalize`` attribute (TVM's), else the
    implementation the operator strategy picks (``mlckit.relax.strategy``, found late: it
    comes with the operators); None when there is none."""
    legalize = call.op.get_attr("FLegalize")
    if legalize is not None:
        return legalize
    try:
        strategy = importlib.import_module("mlckit.relax.strategy")
    except ImportError:
        return None
    try:
        impl = strategy.select(call)
    except TVMError:
        return None  # no implementation applies here: the call is not folded
    return None if impl is None else impl.lower


def _is_constant_like(expr) -> bool:
    """Only calls whose tensor arguments are all constants are worth legalizing here."""
    if isinstance(expr, Tuple):
        return all(_is_constant_like(f) for f in expr.fields)
    return not isinstance(expr, Var)


def fold_constant(func: Function, mod: IRModule | None = None) -> Function:
    """``func`` with its constant computations folded (see the module doc).

    Example::

        main = fold_constant(mod["main"], mod)
    """
    folded = _ConstantFolder(mod).visit_expr(func)
    return remove_all_unused(folded)


def FoldConstant() -> FunctionPass:  # noqa: N802 - TVM's name
    """The pass folding constants in every Relax function.

    Example::

        mod = FoldConstant()(mod)
    """
    return FunctionPass(lambda func, mod, ctx: fold_constant(func, mod),
                        PassInfo(0, "FoldConstant"))


__all__ = ["FoldConstant", "fold_constant"]
