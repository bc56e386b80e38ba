"""``ToNonDataflow``: dataflow blocks become ordinary binding blocks, dataflow vars become
ordinary vars (as TVM's ``relax.transform.ToNonDataflow``).

Example::

    mod = relax.transform.ToNonDataflow()(mod)   # no `with R.dataflow():` remains
"""

from __future__ import annotations

from mlckit.ir.transform import ModulePass, PassInfo

from ..expr import BindingBlock, DataflowBlock, DataflowVar, Var
from ..expr_functor import ExprMutator


class _ToNonDataflow(ExprMutator):
    def visit_var_def(self, var):
        if isinstance(var, DataflowVar):
            new = Var(var.name_hint, var.struct_info_, span=var.span)
            self.var_remap[id(var)] = new
            return new
        return super().visit_var_def(var)

    def visit_dataflow_block_(self, block: DataflowBlock):
        out = self.visit_binding_block_(block)
        return BindingBlock(out.bindings, span=block.span)


def ToNonDataflow() -> ModulePass:  # noqa: N802 - TVM's name
    """The pass turning every dataflow block into a plain binding block.

    Example::

        mod = ToNonDataflow()(mod)
    """
    return ModulePass(lambda mod, ctx: _ToNonDataflow().transform_module(mod),
                      PassInfo(0, "ToNonDataflow"))
