"""``mlckit.instrument``: pass instruments (alias of ``mlckit.ir.instrument``, as
``tvm.instrument``).

Example::

    with tvm.transform.PassContext(instruments=[tvm.instrument.PrintAfterAll()]):
        mod = seq(mod)
"""

from .ir.instrument import *  # noqa: F403
from .ir.instrument import (
    PassInstrument,
    PassPrintingInstrument,
    PassTimingInstrument,
    PrintAfterAll,
    PrintBeforeAll,
    pass_instrument,
)

__all__ = ["PassInstrument", "PassPrintingInstrument", "PassTimingInstrument", "PrintAfterAll",
           "PrintBeforeAll", "pass_instrument"]
