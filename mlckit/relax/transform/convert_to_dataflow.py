"""``ConvertToDataflow``: runs of pure bindings become dataflow blocks (as TVM's
``relax.transform.ConvertToDataflow``).

In every sequence of a function, consecutive bindings that are neither an ``If`` nor an
impure call (``R.print``, ``R.call_packed`` …) are gathered into a ``DataflowBlock`` when
there are at least ``min_size`` of them; existing dataflow blocks join the run around them.
``CanonicalizeBindings`` follows (as in TVM), so that variables used only inside a new block
become ``DataflowVar``\\ s.

Example::

    # gv = R.call_tir(...); gv1 = R.call_tir(...); return gv1
    mod = relax.transform.ConvertToDataflow()(mod)
    # with R.dataflow(): lv = ...; gv1 = ...; R.output(gv1)
"""

from __future__ import annotations

from mlckit.ir.transform import FunctionPass, PassInfo, Sequential

from ..analysis.remove_all_unused import is_impure_call
from ..expr import BindingBlock, Call, DataflowBlock, Function, If, SeqExpr
from ..expr_functor import ExprMutator
from .canonicalize_bindings import CanonicalizeBindings


class _DataflowBlockExtractor(ExprMutator):
    def __init__(self, min_size: int):
        super().__init__()
        self.min_size = min_size

    def visit_seq_expr_(self, op: SeqExpr):
        body = self.visit_expr(op.body)
        changed = body is not op.body
        blocks: list = []
        plain: list = []  # bindings before the current run (they stay out of dataflow)
        run: list = []  # the current run of dataflow bindings
        run_from_block: DataflowBlock | None = None

        def flush():
            nonlocal plain, run, run_from_block, changed
            if not run:
                return
            if len(run) < self.min_size and run_from_block is None:
                plain += run
            else:
                if plain:
                    blocks.append(BindingBlock(plain))
                blocks.append(DataflowBlock(run))
                plain = []
                changed = changed or run_from_block is None or \
                    len(run_from_block.bindings) != len(run)
            run, run_from_block = [], None

        for block in op.blocks:
            new = self.visit_binding_block(block)
            changed = changed or new is not block
            if isinstance(new, DataflowBlock):
                run += new.bindings
                run_from_block = new
                continue
            for binding in new.bindings:
                value = binding.value
                pure = not isinstance(value, If) and not (
                    isinstance(value, Call) and is_impure_call(value))
                if pure:
                    run.append(binding)
                else:
                    flush()
                    plain.append(binding)
        flush()
        if plain:
            blocks.append(BindingBlock(plain))
        if not changed:
            return op
        return SeqExpr(blocks, body, span=op.span)


def convert_to_dataflow(func: Function, min_size: int = 2) -> Function:
    """``func`` with its runs of pure bindings in dataflow blocks (without the
    canonicalization that the pass adds).

    Example::

        func = convert_to_dataflow(mod["main"], min_size=2)
    """
    return _DataflowBlockExtractor(min_size).visit_expr(func)


def ConvertToDataflow(min_size: int = 2) -> Sequential:  # noqa: N802 - TVM's name
    """The pass (then ``CanonicalizeBindings``, as TVM).

    Example::

        mod = ConvertToDataflow()(mod)
    """
    inner = FunctionPass(lambda func, mod, ctx: convert_to_dataflow(func, min_size),
                         PassInfo(0, "ConvertToDataflow"))
    return Sequential([inner, CanonicalizeBindings()], name="ConvertToDataflow")


__all__ = ["ConvertToDataflow", "convert_to_dataflow"]
