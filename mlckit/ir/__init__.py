"""IR infrastructure shared by TIR and Relax: nodes, modules, ops, equality, diagnostics."""

from . import instrument, transform
from .diagnostics import DiagnosticError
from .module import GlobalVar, IRModule
from .node import Node, Span, node
from .op import Op, register_op, register_op_attr
from .structural import assert_structural_equal, structural_equal, structural_hash
