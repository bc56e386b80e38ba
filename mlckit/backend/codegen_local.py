"""One-element "local" buffers (registers) printed as Python scalars by the Numba generators.

A one-element "local" buffer is a Python scalar named after the buffer: in lowered TIR an
allocation declaring it (what ``tir.transform.PromoteInvariantElements`` and
``ScalarizeLocalBuffers`` make, flattened) prints as a comment, and
``Y_acc[0] = T.float32(0)`` as ``Y_acc = np.float32(0.0)``.  LLVM keeps a scalar in a register, where a Numba
array lives in memory.  Which buffers become registers is the passes' decision, visible in
TVMScript; the printer only spells them.  A register used other than by an element access,
or across a ``prange`` (scalars would be shared by its iterations), raises ``_NotScalar``:
``generate`` starts again with that buffer printed as an array.

Example::

    # Y_acc: a one-element "local" buffer, held in a scalar
    Y_acc = np.float32(0.0)
"""

from __future__ import annotations

from mlckit.tir.buffer import Buffer
from mlckit.tir.expr import IntImm
from mlckit.tir.stmt import Allocate, DeclBuffer, ForKind
from mlckit.tir.transform.promote_invariant_elements import is_register


class _NotScalar(Exception):
    """A register cannot be printed as a scalar (see the module docstring)."""

    def __init__(self, key: int):
        super().__init__(key)
        self.key = key


class LocalScalars:
    """Mixin of the generator: one-element "local" buffers as Python scalars."""

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
            held = (buf, names[-1], len(self.loops))
            self.scalars[id(buf)] = self.scalars[id(buf.data)] = held
        what = ('a one-element "local" buffer, held in a scalar' if len(names) == 1
                else 'one-element "local" buffers, held in scalars')
        shown = ", ".join(names) if len(names) <= 3 else f"{names[0]} ... {names[-1]}"
        self.emit(f"# {shown}: {what}", s)
        self.stmt(s)
        self.pop_scope()
        return True

    def _declares_register(self, s) -> bool:
        decl = getattr(s, "body", None)
        return bool(self.flavour.scalar_registers and isinstance(s, Allocate)
                    and isinstance(decl, DeclBuffer) and decl.buffer.data is s.buffer_var
                    and is_register(decl.buffer) and id(decl.buffer) not in self.not_scalar)

    def scalar_access(self, buf: Buffer, indices) -> str:
        """The scalar variable for ``buf[indices]``; ``_NotScalar`` when the index is not the
        constant 0 here, or a parallel loop lies between the allocation and the access."""
        _, name, depth = self.scalars[id(buf)]
        if any(loop.kind == ForKind.PARALLEL for loop in self.loops[depth:]):
            raise _NotScalar(id(buf))
        if not all(isinstance(i, IntImm) and i.value == 0 for i in indices):
            raise _NotScalar(id(buf))
        return name
