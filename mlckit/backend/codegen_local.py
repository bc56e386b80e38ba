"""Small "local" buffers kept in scalar variables by the Numba code generator.

A printing rule first: a one-element "local" buffer is a Python scalar named after the
buffer.  Declared with ``T.decl_buffer`` (what ``tir.transform.PromoteInvariantElements``
makes), ``Y_acc[0] = T.float32(0)`` prints ``Y_acc = np.float32(0.0)`` with no allocation;
allocated by a block (what ``tir.transform.ScalarizeLocalBuffers`` makes of a small tile),
the block starts its scalars at zero.  numba_cpu runs both passes first.

The rest is the older print-time rewrite, which numba_cuda relies on (it does not run the
passes) and numba_cpu keeps for the cases the pass leaves (an index made constant by an
unrolled loop outside the allocating block):

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
        shown = ", ".join(names) if len(names) <= 3 else f"{names[0]} ... {names[-1]}"
        self.emit(f"# {shown}: {what}", s)
        self.stmt(s)
        self.pop_scope()
        return True

    def alloc_registers(self, bufs: list, stmt: Stmt):
        """A block's one-element "local" buffers (``ScalarizeLocalBuffers`` makes them) as
        scalar variables, one line per row of a split buffer (``C_local_0_0 = ... = 0``)."""
        rows: dict = {}
        for buf in bufs:
            self.check_buffer_supported(buf)
            self.note_data(buf)
            name = self.bind(buf, buf.name, buf.dtype, scoped=False)
            held = (buf, {(0,) * len(buf.shape): name}, len(self.loops))
            self.scalars[id(buf)] = self.scalars[id(buf.data)] = held
            rows.setdefault((name.rsplit("_", 1)[0], buf.dtype), []).append(name)
        names = [n for row in rows.values() for n in row]
        shown = ", ".join(names) if len(names) <= 3 else f"{names[0]} ... {names[-1]}"
        self.emit(f'# {shown}: one-element "local" buffers, held in scalars', stmt)
        for (_, dtype), row in rows.items():
            zero = f"{np_scalar(dtype)}(0)" if dtype != "bool" else "False"
            self.emit(" = ".join(row) + f" = {zero}", stmt)

    def is_register_alloc(self, buf: Buffer) -> bool:
        return bool(self.flavour.scalarize_limit and is_register(buf)
                    and id(buf) not in self.not_scalar)

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

