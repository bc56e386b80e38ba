"""``s_tir.analysis``: analyses of schedulable TensorIR (TVM >= 0.24's names), the functions
of :mod:`mlckit.tir.analysis`.

Example::

    from mlckit import s_tir
    s_tir.analysis.verify_well_formed(MyModule["main"])    # True, or a DiagnosticError
"""

from mlckit.tir.analysis import verify_well_formed

__all__ = ["verify_well_formed"]
