"""TVMScript programs the notebook-tool tests share, as text (what a notebook cell holds)."""

# The course's end-to-end MLP (notebook 03, "MyModule"): three PrimFuncs and a Relax main
# calling them with R.call_tir inside a dataflow block — the text the VM tests parse too.
from tests.runtime.vm.mlp_modules import MLP_SOURCE as MLP_MODULE

__all__ = ["MLP_MODULE"]
