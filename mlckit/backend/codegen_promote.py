"""Register promotion is a TIR pass now: ``tir.transform.PromoteInvariantElements`` holds a
loop-invariant element in a one-element "local" buffer, which the Numba generator prints as
a scalar (``codegen_local``).  The lanes of ``codegen_lanes`` name the elements they hold
the same way (``A_ik``): ``scalar_hint`` is the pass's ``register_name``.
"""

from mlckit.tir.transform.promote_invariant_elements import register_name as scalar_hint

__all__ = ["scalar_hint"]
