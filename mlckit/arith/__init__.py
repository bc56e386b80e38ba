"""Integer arithmetic on index expressions: affine simplification and bounds (TVM's ``arith``).

Example::

    ana = Analyzer()
    ana.bind(i_1, Range(0, 32))
    ana.simplify((i_0 * 32 + i_1) // 32)      # i_0
    ana.const_int_bound(i_0 * 32 + i_1)       # ConstIntBound(min_value=..., max_value=...)
"""

from .analyzer import Analyzer, ConstIntBound, IntSet, substitute

__all__ = ["Analyzer", "ConstIntBound", "IntSet", "substitute"]
