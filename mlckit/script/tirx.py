"""TVM >= 0.24's ``T`` namespace: ``from mlckit.script import tirx as T``.

The same builders and parser as :mod:`mlckit.script.tir`, under TVM 0.27's rules: a function
with blocks is written ``@T.prim_func(s_tir=True)``, a block ``T.sblock``, its annotations
``T.sblock_attr`` and its buffers ``T.sblock_alloc_buffer`` (``T.alloc_buffer`` allocates
in the enclosing block too)::

    from mlckit.script import tirx as T

    @T.prim_func(s_tir=True)
    def add_one(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.sblock("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = A[vi] + T.float32(1)

As in TVM 0.27, ``T.block`` and ``T.block_attr`` are not here, and a ``@T.prim_func``
without ``s_tir=True`` may not hold blocks; the errors say what to write instead.  The
function is structurally equal to the one written with ``T.block``, and prints back as it
was written (``add_one.script(tir_spelling="tir")`` prints the older spelling).
"""

from mlckit.error import TVMAttributeError
from mlckit.script.tir import *  # noqa: F403 - the same T namespace ...
from mlckit.script.tir import make_prim_func

prim_func = make_prim_func("tirx")  # ... whose functions are spelled and checked as TVM 0.27's

# TVM 0.27's tirx has no T.block / T.block_attr: refused below with their new names
del block, block_attr  # noqa: F821 - bound by the import * above

_RENAMED = {"block": "sblock", "block_attr": "sblock_attr"}


def __getattr__(name: str):
    if name in _RENAMED:
        raise TVMAttributeError(
            f"T.{name} is spelled T.{_RENAMED[name]} in TVM >= 0.24's tirx namespace "
            f"(from tvm.script import tirx as T); write T.{_RENAMED[name]}, or use "
            "`from tvm.script import tir as T` for TVM 0.23's spelling")
    from mlckit.error import did_you_mean

    raise AttributeError(f"module 'mlckit.script.tirx' has no attribute {name!r}"
                         + did_you_mean(name, [*globals(), *_RENAMED.values()]))
