"""``FuseTransposeMatmul``: ``matmul(x, permute_dims(w))`` lowered as one call that reads
``w`` in place (TVM's ``relax.transform.FuseTransposeMatmul``), so that no weight is
transposed at run time.

It runs before ``LegalizeOps``.  For each ``R.matmul`` whose second operand is bound to an
``R.permute_dims`` swapping its last two dims (the ``linear`` of PyTorch: ``x @ w.T``), the
operator strategy picks an implementation of the *transposed form* (``form="transposed_b"``,
see ``mlckit.relax.strategy``; the choice is logged on ``mlckit.strategy``):

- ``matmul_nt.generic``: TVM's ``NT_matmul`` kernel, one block reading ``w[j, k]``::

      lv = R.permute_dims(w0)                  lv0 = R.call_tir(cls.NT_matmul, (x, w0),
      lv0 = R.matmul(x, lv)           ─►                        out_sinfo=R.Tensor((1, 128)))

- ``matmul_nt`` (CPU targets, large static problems): ``R.call_dps_packed(
  "mlckit.lib.matmul_nt", (x, w0), ...)``, NumPy's BLAS reading a transposed view.

The ``permute_dims`` binding goes when nothing else uses it.  A constant weight (bound by
``BindParams``) is read in place too: no transpose at all, neither at run time nor folded at
compile time.  Left alone: other permutations, unknown ranks.

Example::

    mod = relax.transform.FuseTransposeMatmul()(mod)
    mod = relax.transform.LegalizeOps()(mod)
"""

from __future__ import annotations

from mlckit.ir.module import IRModule
from mlckit.ir.op import Op
from mlckit.ir.transform import ModulePass, PassContext, PassInfo

from .. import strategy
from ..expr import Call, Expr, Function, Var, VarBinding
from ..expr_functor import ExprMutator, PyExprVisitor
from .legalize_ops import _Legalizer, know_all_shape_values

FORM = "transposed_b"


def _swaps_last_two(call: Call) -> bool:
    """``permute_dims(w, axes)`` exchanging the last two dims of ``w`` and nothing else."""
    ndim = call.args[0].struct_info.ndim
    if ndim < 2:
        return False
    axes = call.attrs.axes
    if axes is None:
        return ndim == 2
    want = list(range(ndim))
    want[-2:] = want[-1], want[-2]
    return [int(a) for a in axes] == want


class _Fuser(_Legalizer):
    def __init__(self, mod: IRModule):
        super().__init__(mod, {}, set(), False)
        self.matmul = Op.get("relax.matmul")
        self.permute = Op.get("relax.permute_dims")
        self.transposes: dict[int, Expr] = {}  # id(var) -> w, for var = permute_dims(w)
        self.absorbed: set[int] = set()  # id of the permute_dims vars a fused matmul read

    def transform(self) -> IRModule:
        for gv, func in list(self.mod.functions.items()):
            if isinstance(func, Function):
                self.transposes, self.absorbed = {}, set()
                new = self.visit_expr(func)
                if self.absorbed:
                    new = _drop_unused(new, self.absorbed)
                self.builder_.update_func(gv, new)
        return self.builder_.get()

    def visit_var_binding_(self, binding: VarBinding) -> None:
        value = binding.value
        if isinstance(value, Call) and value.op is self.permute and _swaps_last_two(value):
            self.transposes[id(binding.var)] = value.args[0]
        super().visit_var_binding_(binding)

    def visit_call_(self, call: Call):
        w = None
        if call.op is self.matmul and isinstance(call.args[1], Var):
            w = self.transposes.get(id(call.args[1]))
        if w is None or not all(know_all_shape_values(e.struct_info)
                                for e in (call, call.args[0], w)):
            return self.visit_expr_post_order(call)
        x, w_new = self.visit_expr(call.args[0]), self.visit_expr(w)
        # the transposed-form call: arguments (x, w), computing x @ w^T — the struct info of
        # the matmul it replaces is set on it (inferred from (x, w) it would be x @ w)
        form_call = Call(call.op, [x, w_new], call.attrs)
        form_call.__dict__["struct_info_"] = call.struct_info
        impl = strategy.select(form_call, self.target, form=FORM)
        if impl is None:
            return self.visit_expr_post_order(call)
        self.absorbed.add(id(call.args[1]))
        return self.lower_call(form_call, impl.lower, impl)


class _Uses(PyExprVisitor):
    def __init__(self):
        super().__init__()
        self.used: set[int] = set()

    def visit_var_(self, op: Var) -> None:
        self.used.add(id(op))

    def visit_dataflow_var_(self, op) -> None:
        self.used.add(id(op))


def _drop_unused(func: Function, candidates: set[int]) -> Function:
    """``func`` without the bindings of ``candidates`` (permute_dims vars) no one uses."""
    uses = _Uses()
    uses.visit_expr(func)
    dead = candidates - uses.used
    if not dead:
        return func

    class _Dropper(ExprMutator):
        def visit_var_binding_(self, binding: VarBinding) -> None:
            if id(binding.var) not in dead:
                super().visit_var_binding_(binding)

    return _Dropper().visit_expr(func)


def FuseTransposeMatmul() -> ModulePass:  # noqa: N802 - TVM's name
    """The pass lowering ``matmul(x, permute_dims(w))`` through the strategy's transposed
    form (see the module doc).

    Example::

        mod = relax.transform.FuseTransposeMatmul()(mod)   # NT_matmul, or mlckit.lib.matmul_nt
    """

    def run(mod: IRModule, ctx: PassContext) -> IRModule:
        return _Fuser(mod).transform()

    return ModulePass(run, PassInfo(0, "FuseTransposeMatmul"))


__all__ = ["FuseTransposeMatmul"]
