"""Layout: ``storage_align`` and ``transform_layout``.

``storage_align(block, buffer_index, axis, factor, offset)`` asks that the stride of
dimension ``axis`` of the ``buffer_index``-th buffer ``block`` writes be ``k * factor +
offset``; it is recorded as the block annotation ``"buffer_dim_align"`` (a list of
``[buffer_index, axis, factor, offset]``) for the lowering passes, and changes no
computation.

``transform_layout(block, buffer, index_map)`` changes how a buffer is laid out in memory: the
element at ``B[i, j]`` moves to ``B'[*index_map(i, j)]``, every access of the buffer is
rewritten, and the buffer's shape becomes the range of ``index_map``.  ``buffer`` is
``("read", i)`` / ``("write", i)`` (the i-th region the block reads / writes), a buffer name,
or a Buffer; ``index_map`` a Python lambda (``lambda i, j: (j, i)``), an ``IndexMap`` or the
text of a lambda.
"""

from __future__ import annotations

import inspect

from mlckit.arith import Analyzer
from mlckit.error import TVMValueError
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.buffer import Buffer, BufferRegion
from mlckit.tir.expr import IntImm, Range, Var
from mlckit.tir.expr_functor import load_with, map_loads

from .error import ScheduleError
from .instruction import primitive
from .ir_utils import Mutator, Rewrite, replace_stmts, walk

BUFFER_DIM_ALIGN = "buffer_dim_align"


# -- IndexMap -----------------------------------------------------------------------------------
class IndexMap:
    """A map from buffer indices to new indices (TVM's ``tir.IndexMap``).

    Example::

        m = IndexMap.from_func(lambda i, j: (i // 16, j // 16, i % 16, j % 16))
        m.map_indices([vi, vj])        # [vi // 16, vj // 16, vi % 16, vj % 16]
        str(m)                         # "lambda i, j: (i // 16, j // 16, i % 16, j % 16)"
    """

    def __init__(self, initial_indices, final_indices):
        self.initial_indices = list(initial_indices)
        self.final_indices = list(final_indices)

    @staticmethod
    def from_func(fn, ndim: int | None = None, index_dtype: str = "int32") -> IndexMap:
        """The map computed by ``fn`` on fresh index variables (named after its parameters)."""
        names = None
        try:
            params = list(inspect.signature(fn).parameters.values())
            if params and not any(p.kind == p.VAR_POSITIONAL for p in params):
                names = [p.name for p in params]
        except (TypeError, ValueError):
            pass
        if names is None:
            if ndim is None:
                raise TVMValueError("IndexMap.from_func: give ndim for a function taking *args")
            names = [f"i{k}" for k in range(ndim)]
        if ndim is not None and len(names) != ndim:
            raise TVMValueError(f"the index map takes {len(names)} index(es) but the buffer has "
                             f"{ndim} dimension(s)")
        ivars = [Var(n, index_dtype) for n in names]
        out = fn(*ivars)
        if not isinstance(out, (list, tuple)):
            out = [out]
        return IndexMap(ivars, [E.convert(x, index_dtype) if isinstance(x, int) else E.convert(x)
                                for x in out])

    @staticmethod
    def parse(text: str, ndim: int | None = None, index_dtype: str = "int32") -> IndexMap:
        """The map written as the text of a Python lambda (``"lambda i, j: (j, i)"``)."""
        from mlckit.script import tir as T

        fn = eval(text, {"T": T, "__builtins__": {}})  # noqa: S307 - a lambda from a trace
        return IndexMap.from_func(fn, ndim, index_dtype)

    def map_indices(self, indices, ana: Analyzer | None = None) -> list:
        from mlckit.arith.analyzer import substitute

        vmap = {v: i for v, i in zip(self.initial_indices, indices)}
        out = [substitute(f, vmap) for f in self.final_indices]
        return [ana.simplify(x) for x in out] if ana is not None else out

    def as_python(self) -> str:
        """The map as the text of a Python lambda."""
        params = ", ".join(v.name_hint for v in self.initial_indices)
        outs = ", ".join(str(f) for f in self.final_indices)
        if len(self.final_indices) == 1:
            outs += ","
        return f"lambda {params}: ({outs})"

    as_json = as_python
    __str__ = as_python
    __repr__ = as_python


# -- helpers ------------------------------------------------------------------------------------
def _allocation(func, buffer):
    """'alloc' when a block allocates ``buffer``, 'match' when a match_buffer defines it,
    'param' for a function parameter, None when it is nowhere."""
    if any(b is buffer for b in func.buffer_map.values()):
        return "param"
    found = []

    def visit(s):
        if isinstance(s, S.Block):
            if any(b is buffer for b in s.alloc_buffers):
                found.append("alloc")
            if any(m.buffer is buffer for m in s.match_buffers):
                found.append("match")
        return not found

    walk(func.body, visit)
    return found[0] if found else None


class _NumpyEval:
    """Evaluate an index expression on numpy integer arrays (None when it cannot)."""

    def __init__(self, env):
        self.env = env

    def __call__(self, e):
        import numpy as np

        if isinstance(e, Var):
            return self.env.get(id(e))
        if isinstance(e, IntImm):
            return np.int64(e.value)
        ops = {E.Add: np.add, E.Sub: np.subtract, E.Mul: np.multiply,
               E.FloorDiv: np.floor_divide, E.FloorMod: np.mod, E.Min: np.minimum,
               E.Max: np.maximum}
        fn = ops.get(type(e))
        if fn is None:
            return None
        a, b = self(e.a), self(e.b)
        if a is None or b is None:
            return None
        return fn(a, b)


def _extent(index, bound, dom, ana):
    """How many places the new layout gives ``index`` (one of the map's results, spanning
    ``bound``): ``x % c`` takes ``c``, as TVM splits ``x`` by ``c`` and pads it to a multiple
    of ``c`` (``i % 4`` of an ``i`` in [0, 2) takes 4 places, two of them padding, so the map
    is refused without a ``pad_value``, as TVM refuses it); any other index its bound."""
    if isinstance(index, E.FloorMod) and isinstance(index.b, IntImm) and index.b.value > 0:
        dividend = ana.int_set(index.a, dom)
        if dividend is not None and ana.can_prove(E.GE(dividend.min_value, IntImm(
                dividend.min_value.dtype, 0))):
            return IntImm(index.dtype, index.b.value)
    return ana.simplify(bound.max_value + 1)


def _check_bijective(prim, buffer, index_map, new_shape):
    """Raise when the map sends two elements to one place or leaves holes (padding); only
    checked for constant shapes of at most 2**22 elements."""
    import numpy as np

    shape = [d.value if isinstance(d, IntImm) else None for d in buffer.shape]
    new = [d.value if isinstance(d, IntImm) else None for d in new_shape]
    if None in shape or None in new:
        return
    size, new_size = int(np.prod(shape, dtype=np.int64)), int(np.prod(new, dtype=np.int64))
    if size > 2**22:
        return
    grids = np.indices(shape, dtype=np.int64).reshape(len(shape), -1) if shape else \
        np.zeros((0, 1), np.int64)
    ev = _NumpyEval({id(v): grids[k] for k, v in enumerate(index_map.initial_indices)})
    mapped = [ev(f) for f in index_map.final_indices]
    if any(m is None for m in mapped):
        return
    flat = np.zeros(grids.shape[1] if shape else 1, np.int64)
    for m, ext in zip(mapped, new):
        flat = flat * ext + np.broadcast_to(m, flat.shape)
    n_unique = len(np.unique(flat))
    if n_unique < size:
        raise ScheduleError(
            prim, f"the index map {index_map} is not injective on buffer `{buffer.name}` of "
            f"shape {tuple(shape)}: it sends {size - n_unique} element(s) to a place another "
            "element already occupies")
    if new_size > size:
        raise ScheduleError(
            prim, f"the index map {index_map} applied to buffer `{buffer.name}` of shape "
            f"{tuple(shape)} gives shape {tuple(new)} ({new_size} elements for {size}): the "
            "transformation would introduce padding, and pad_value is None")


def _map_region(region, index_map, ana, map_point):
    """A buffer region under ``index_map``: points map to points (``map_point``), ranges are
    relaxed."""
    if all(isinstance(r.extent, IntImm) and r.extent.value == 1 for r in region):
        return [Range(i, IntImm(i.dtype, 1)) for i in map_point([r.min for r in region])]
    fresh, dom = [], {}
    for k, r in enumerate(region):
        if isinstance(r.extent, IntImm) and r.extent.value == 1:
            fresh.append(r.min)
        else:
            v = Var(f"r{k}", r.min.dtype)
            fresh.append(v)
            dom[id(v)] = r
    out = []
    for f in index_map.map_indices(fresh, ana):
        s = ana.int_set(f, dom)
        if s is None:
            return None
        mn = ana.simplify(s.min_value)
        out.append(Range(mn, ana.simplify(s.max_value - mn + 1)))
    return out


class _LayoutRewriter(Mutator):
    def __init__(self, rw, old, new, index_map):
        super().__init__(rw)
        self.old, self.new, self.index_map = old, new, index_map
        self.ana = Analyzer()
        # as TVM: in a mapped index an iterator of one value is that value (``vc * 8 + vh``
        # of a unit ``vc`` is ``vh``); an index that is the iterator alone stays as it is
        self.unit_as_constant = Analyzer(unit_ranges_as_constants=True)

    def visit_For(self, s):
        for ana in (self.ana, self.unit_as_constant):
            ana.bind(s.loop_var, Range(s.min, s.extent))
        return self.generic(s)

    def visit_Block(self, b):
        for iv in b.iter_vars:
            for ana in (self.ana, self.unit_as_constant):
                ana.bind(iv.var, iv.dom)
        new = self.generic(b)
        changes = {}
        for name in ("reads", "writes"):
            regions = getattr(new, name)
            mapped = [self.region(r) for r in regions]
            if any(m is not r for m, r in zip(mapped, regions)):
                changes[name] = mapped
        allocs = [self.new if x is self.old else x for x in new.alloc_buffers]
        if any(a is not x for a, x in zip(allocs, new.alloc_buffers)):
            changes["alloc_buffers"] = allocs
        if changes:
            new = new.replace(**changes)
            self.rw.link(b, new)
        return new

    def region(self, r):
        if r.buffer is not self.old:
            return r
        mapped = _map_region(r.region, self.index_map, self.ana, self.mapped)
        if mapped is None:
            mapped = [Range(IntImm(d.dtype, 0), d) for d in self.new.shape]
        return BufferRegion(self.new, mapped)

    def field(self, value):
        if isinstance(value, BufferRegion):  # regions are mapped in visit_Block
            return value
        return super().field(value)

    def visit_expr(self, e):
        return self.expr(e)

    def mapped(self, indices) -> list:
        return [i if isinstance(i, Var) else self.unit_as_constant.simplify(i)
                for i in self.index_map.map_indices(indices)]

    def expr(self, e):
        def on_load(load, indices):
            if load.buffer is self.old:
                return E.BufferLoad(self.new, self.mapped(indices))
            return load_with(load, indices)

        return map_loads(e, on_load)

    def visit_BufferStore(self, s):
        value = self.expr(s.value)
        idx = [self.expr(i) for i in s.indices]
        if s.buffer is self.old:
            return S.BufferStore(self.new, value, self.mapped(idx))
        if value is s.value and all(a is b for a, b in zip(idx, s.indices)):
            return s
        return s.replace(value=value, indices=idx)


# -- the primitives -----------------------------------------------------------------------------
class LayoutMixin:
    def _block_arg(self, block):
        return self.get_block(block) if isinstance(block, str) else block

    @primitive("StorageAlign", inputs=("block",),
               attrs=("buffer_index", "axis", "factor", "offset"), py_name="storage_align")
    def _storage_align(self, block, buffer_index: int, axis: int, factor: int,
                       offset: int) -> None:
        prim = "storage_align"
        sref = self._block_sref(block, prim)
        bstmt = sref.stmt
        bname = bstmt.name_hint
        index = self._int(buffer_index, prim)
        if not 0 <= index < len(bstmt.writes):
            raise ScheduleError(prim, f"block `{bname}` writes {len(bstmt.writes)} buffer "
                                f"region(s), so buffer_index must be in [0, {len(bstmt.writes)}),"
                                f" got {index}", [bstmt])
        buf = bstmt.writes[index].buffer
        factor, offset, axis = (self._int(factor, prim), self._int(offset, prim),
                                self._int(axis, prim))
        if factor <= 0:
            raise ScheduleError(prim, f"factor must be a positive number, got {factor}")
        ndim = len(buf.shape)
        if not -ndim <= axis < ndim:
            raise ScheduleError(prim, f"buffer `{buf.name}` has {ndim} dimension(s), so axis must "
                                f"be in [{-ndim}, {ndim}), got {axis}")
        if axis < 0:
            axis += ndim
        func = self.mod[sref.func_name]
        if _allocation(func, buf) != "alloc":
            raise ScheduleError(prim, f"buffer `{buf.name}` is not allocated by a block (it is a "
                                "function parameter or defined by a match_buffer); only "
                                "allocated buffers can be aligned", [bstmt])
        old = bstmt.annotations.get(BUFFER_DIM_ALIGN)
        if old is None:
            entries = []
        else:
            ok = isinstance(old, (list, tuple)) and all(
                isinstance(t, (list, tuple)) and len(t) == 4
                and all(isinstance(x, int) or isinstance(x, IntImm) for x in t) for t in old)
            if not ok:
                raise ScheduleError(
                    prim, f"the annotation {BUFFER_DIM_ALIGN!r} of block `{bname}` is {old!r}; "
                    "it must be a list of [buffer_index, axis, factor, offset]", [bstmt])
            entries = [[int(getattr(x, "value", x)) for x in t] for t in old]
        new_entry = [index, axis, factor, offset]
        for k, t in enumerate(entries):
            if t[0] == index and t[1] == axis:
                entries[k] = new_entry
                break
        else:
            entries.append(new_entry)
        anns = dict(bstmt.annotations)
        anns[BUFFER_DIM_ALIGN] = entries
        rw = Rewrite()
        new_block = rw.derive(bstmt, annotations=anns)
        self._commit(sref.func_name, replace_stmts(func.body, {id(bstmt): new_block}, rw), rw)

    def storage_align(self, block, buffer_index: int, axis: int, factor: int,
                      offset: int) -> None:
        """Require ``stride[axis] == k * factor + offset`` for the ``buffer_index``-th buffer
        ``block`` writes (e.g. to avoid shared-memory bank conflicts).  ``block`` may be a
        BlockRV or a block name.

        Before / after ``sch.storage_align(block_B, 0, axis=0, factor=128, offset=127)``::

            with T.block("B"):                         with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])        vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * 2                  T.block_attr({"buffer_dim_align":
                                                                         [[0, 0, 128, 127]]})
                                                           B[vi, vj] = A[vi, vj] * 2
        """
        return self._storage_align(self._block_arg(block), buffer_index, axis, factor, offset)

    def _buffer_arg(self, prim, block, buffer):
        """``["read" | "write", index]`` for a buffer given as a pair, a name or a Buffer."""
        bstmt = self._block_sref(block, prim).stmt
        bname = bstmt.name_hint
        cands = [("read", i, r.buffer) for i, r in enumerate(bstmt.reads)]
        cands += [("write", i, w.buffer) for i, w in enumerate(bstmt.writes)]
        if isinstance(buffer, str):
            found = {}
            for kind, i, b in cands:  # as TVM: a buffer read and written stands for the write
                if b.name == buffer:
                    found[id(b)] = (kind, i)
            if not found:
                names = sorted({b.name for _, _, b in cands})
                raise ScheduleError(prim, f"block `{bname}` accesses no buffer named {buffer!r} "
                                    f"(it accesses: {', '.join(names) or 'none'})", [bstmt])
            if len(found) > 1:
                raise ScheduleError(prim, f"block `{bname}` accesses several buffers named "
                                    f"{buffer!r}; pass ('read', i) or ('write', i)", [bstmt])
            return list(next(iter(found.values())))
        if isinstance(buffer, Buffer):
            for kind, i, b in cands:
                if b is buffer:
                    return [kind, i]
            raise ScheduleError(prim, f"block `{bname}` does not access buffer `{buffer.name}`",
                                [bstmt])
        if isinstance(buffer, (list, tuple)) and len(buffer) == 2:
            kind, i = buffer[0], self._int(buffer[1], prim)
            if kind not in ("read", "write"):
                raise ScheduleError(prim, f"the buffer kind must be 'read' or 'write', got {kind!r}")
            regions = bstmt.reads if kind == "read" else bstmt.writes
            if not 0 <= i < len(regions):
                raise ScheduleError(prim, f"block `{bname}` has {len(regions)} {kind} region(s), "
                                    f"so the buffer index must be in [0, {len(regions)}), got {i}",
                                    [bstmt])
            return [kind, i]
        raise ScheduleError(prim, "buffer must be ('read', i), ('write', i), a buffer name or a "
                            f"Buffer, got {buffer!r}")

    @primitive("TransformLayout", inputs=("block",),
               attrs=("buffer", "index_map", "pad_value", "assume_injective_transform"),
               py_name="transform_layout")
    def _transform_layout(self, block, buffer, index_map, pad_value=None,
                          assume_injective_transform: bool = False) -> None:
        prim = "transform_layout"
        sref = self._block_sref(block, prim)
        bstmt = sref.stmt
        kind, i = self._buffer_arg(prim, block, buffer)
        old = (bstmt.reads if kind == "read" else bstmt.writes)[i].buffer
        ndim = len(old.shape)
        dtype = old.shape[0].dtype if old.shape else "int32"
        try:
            if isinstance(index_map, str):
                index_map = IndexMap.parse(index_map, ndim, dtype)
            elif not isinstance(index_map, IndexMap):
                index_map = IndexMap.from_func(index_map, ndim, dtype)
        except (ValueError, TypeError, SyntaxError, NameError) as err:
            raise ScheduleError(prim, f"cannot use the index map for buffer `{old.name}`: "
                                f"{err}") from None
        if len(index_map.initial_indices) != ndim:
            raise ScheduleError(prim, f"the index map takes {len(index_map.initial_indices)} "
                                f"index(es) but buffer `{old.name}` has {ndim} dimension(s)")
        if pad_value is not None:
            raise ScheduleError(prim, "pad_value is not supported by mlckit yet: use an index map "
                                "that introduces no padding")
        func = self.mod[sref.func_name]
        where = _allocation(func, old)
        if where == "match":
            raise ScheduleError(prim, f"buffer `{old.name}` is defined by a match_buffer of a "
                                "block; only function parameters and allocated buffers can be "
                                "transformed", [bstmt])
        ana = Analyzer()
        shape = []
        dom = {id(v): Range(IntImm(d.dtype, 0), d) for v, d in zip(index_map.initial_indices,
                                                                 old.shape)}
        for f in index_map.final_indices:
            s = ana.int_set(f, dom)
            if s is None:
                raise ScheduleError(prim, f"cannot bound the index {f} of the index map "
                                    f"{index_map} over the shape of buffer `{old.name}`")
            if not ana.can_prove(E.EQ(ana.simplify(s.min_value), IntImm(f.dtype, 0))):
                raise ScheduleError(prim, f"the index {f} of the index map {index_map} starts at "
                                    f"{s.min_value}, not 0, over the shape of buffer `{old.name}`")
            shape.append(_extent(f, s, dom, ana))
        if not assume_injective_transform:
            _check_bijective(prim, old, index_map, shape)
        new = old.replace(shape=shape, strides=[])
        rw = Rewrite()
        new_body = _LayoutRewriter(rw, old, new, index_map).visit_stmt(func.body)
        new_func = func.replace(body=new_body)
        if where == "param":
            new_func = new_func.replace(buffer_map={
                p: (new if b is old else b) for p, b in func.buffer_map.items()})
        self._commit(sref.func_name, new_body, rw, func=new_func)

    def transform_layout(self, block, buffer, index_map, pad_value=None, *,
                         assume_injective_transform: bool = False) -> None:
        """Lay out a buffer anew: the element at ``B[idx]`` moves to ``B[*index_map(*idx)]``,
        every access is rewritten and the shape becomes the range of ``index_map``.

        ``block`` (a BlockRV or a name) accesses the buffer; ``buffer`` is ``("read", i)``,
        ``("write", i)``, a buffer name or a Buffer; ``index_map`` a lambda or an IndexMap.

        Before / after ``sch.transform_layout(block_B, ("write", 0), lambda i, j: (j, i))``::

            B = T.alloc_buffer((16, 32))                B = T.alloc_buffer((32, 16))
            with T.block("B"):                          with T.block("B"):
                B[vi, vj] = A[vi, vj] * 2                   B[vj, vi] = A[vi, vj] * 2
            with T.block("C"):                          with T.block("C"):
                C[vi, vj] = B[vi, vj] + 1                   C[vi, vj] = B[vj, vi] + 1
        """
        block = self._block_arg(block)
        prim = "transform_layout"
        kind, i = self._buffer_arg(prim, block, buffer)
        if not isinstance(index_map, (IndexMap, str)):
            bstmt = self._block_sref(block, prim).stmt
            old = (bstmt.reads if kind == "read" else bstmt.writes)[i].buffer
            dtype = old.shape[0].dtype if old.shape else "int32"
            try:
                index_map = IndexMap.from_func(index_map, len(old.shape), dtype)
            except (ValueError, TypeError) as err:
                raise ScheduleError(prim, f"cannot use the index map for buffer `{old.name}`: "
                                    f"{err}") from None
        return self._transform_layout(block, [kind, i], index_map, pad_value,
                                      assume_injective_transform)
