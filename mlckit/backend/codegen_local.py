"""Small "local" buffers kept in scalar variables by the Numba code generator.

A printing rule first: a one-element "local" buffer declared with ``T.decl_buffer`` (what
``tir.transform.PromoteInvariantElements`` makes) is a Python scalar named after the buffer
(``Y_acc``): ``Y_acc[0] = T.float32(0)`` prints ``Y_acc = np.float32(0.0)``, with no
allocation.  Then, for the blocks' own allocations:

A ``"local"`` buffer of at most ``Flavour.scalarize_limit`` elements, every access of which
has constant indices once unrolled loops are repeated, becomes one Python variable per
element (``C_local_0_3``), so that LLVM keeps it in registers (a Numba array lives in
memory).  When an access turns out not to be constant, ``_NotScalar`` makes ``generate``
start again with that buffer kept as an array.

Example::

    # C_local: (2, 8) "local" buffer kept in scalar variables
    C_local_0_0 = C_local_0_1 = ... = np.float32(0)
"""

from __future__ import annotations

import math

from mlckit.tir.buffer import Buffer
from mlckit.tir.expr import IntImm, Var
from mlckit.tir.stmt import Allocate, DeclBuffer, ForKind, Stmt
from mlckit.tir.transform.promote_invariant_elements import is_register

from .codegen_common import np_scalar


class _NotScalar(Exception):
    """A buffer chosen to become scalars has an access whose index is not a constant."""

    def __init__(self, key: int):
        super().__init__(key)
        self.key = key



class LocalScalars:
    """Mixin of the generator: the scalar form of small "local" buffers."""

    def register_decl(self, s: Allocate) -> bool:
        """Print ``s`` (an allocation declaring a one-element "local" buffer) as a Python
        scalar: every access is the scalar, the declaration a comment (one for a chain of
        them); False when it is not one."""
        regs = []
        while self._declares_register(s):
            regs.append(s.body.buffer)
            s = s.body.body
        if not regs:
            return False
        self.push_scope()
        names = []
        for buf in regs:
            names.append(self.bind(buf, buf.name, buf.dtype))
            held = (buf, {(0,) * len(buf.shape): names[-1]}, len(self.loops))
            self.scalars[id(buf)] = self.scalars[id(buf.data)] = held
        what = ('a one-element "local" buffer, held in a scalar' if len(names) == 1
                else 'one-element "local" buffers, held in scalars')
        self.emit(f"# {', '.join(names)}: {what}", s)
        self.stmt(s)
        self.pop_scope()
        return True

    def _declares_register(self, s) -> bool:
        decl = getattr(s, "body", None)
        return bool(self.flavour.scalarize_limit and isinstance(s, Allocate)
                    and isinstance(decl, DeclBuffer) and decl.buffer.data is s.buffer_var
                    and is_register(decl.buffer) and id(decl.buffer) not in self.not_scalar)

    def scalarizable(self, buf: Buffer) -> bool:
        limit = self.flavour.scalarize_limit
        if not limit or id(buf) in self.not_scalar or not buf.scope.startswith("local"):
            return False
        if not buf.shape or not all(isinstance(d, IntImm) for d in buf.shape):
            return False
        return math.prod(d.value for d in buf.shape) <= limit

    def alloc_scalars(self, buf: Buffer, stmt: Stmt):
        """A small "local" buffer as one Python variable per element, so that LLVM keeps
        it in registers (a Numba array lives in memory)."""
        shape = [d.value for d in buf.shape]
        names = {}
        for index in _product(shape):
            obj = Var(f"{buf.name}_{'_'.join(map(str, index))}", buf.dtype)
            names[index] = self.bind(obj, obj.name_hint, buf.dtype, scoped=False)
        self.scalars[id(buf)] = (buf, names, len(self.loops))
        dims = ", ".join(map(str, shape))
        self.emit(f"# {buf.name}: ({dims}) \"local\" buffer kept in scalar variables", stmt)
        zero = f"{np_scalar(buf.dtype)}(0)" if buf.dtype != "bool" else "False"
        row = shape[-1]
        flat = list(names.values())
        for k in range(0, len(flat), row):
            self.emit(" = ".join(flat[k:k + row]) + f" = {zero}", stmt)

    def scalar_access(self, buf: Buffer, indices) -> str:
        """The scalar variable for ``buf[indices]``; ``_NotScalar`` when the indices are not
        constants here, or a parallel loop lies between the allocation and the access."""
        _, names, depth = self.scalars[id(buf)]
        if any(loop.kind == ForKind.PARALLEL for loop in self.loops[depth:]):
            raise _NotScalar(id(buf))
        index = tuple(self.const_int(i) for i in indices)
        if index not in names:
            raise _NotScalar(id(buf))
        return names[index]



def _product(shape):
    """Every index tuple of ``shape``, in row-major order."""
    if not shape:
        yield ()
        return
    for k in range(shape[0]):
        for rest in _product(shape[1:]):
            yield (k, *rest)

