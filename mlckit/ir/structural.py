"""Generic structural equality and hashing over IR nodes.

Two IR objects are structurally equal when they have the same shape of nodes and the same
constants, up to a consistent renaming of the variables they define (loop variables,
parameters, bindings, buffers).  Variables are matched where they are *defined* (the
``_def_fields`` of a node); a use must then refer to the matched variable.  With
``map_free_vars=True`` variables that are never defined (free) are matched on first use too.

Example::

    assert_structural_equal(parsed, expected)   # raises ValueError with the first difference
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mlckit.error import TVMValueError
from mlckit.ffi.registry import register_func

from .node import Node


class _Mismatch(Exception):
    def __init__(self, path: str, lhs: Any, rhs: Any, reason: str):
        super().__init__(reason)
        self.path, self.lhs, self.rhs, self.reason = path, lhs, rhs, reason


def _is_var(obj) -> bool:
    return getattr(obj, "_is_var", False)


def _order(cls) -> tuple[str, ...]:
    return getattr(cls, "_eq_order", None) or cls.field_names()


def _short(obj: Any, limit: int = 300) -> str:
    try:
        text = obj.script() if isinstance(obj, Node) else repr(obj)
    except Exception:  # noqa: BLE001 - best effort for an error message
        text = f"<{type(obj).__name__}>"
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + " ..."


class _Equal:
    def __init__(self, map_free_vars: bool):
        self.map_free_vars = map_free_vars
        self.l2r: dict[int, Any] = {}
        self.r2l: dict[int, Any] = {}
        self.keep: list[Any] = []  # keeps mapped objects alive so ids stay unique

    def fail(self, path, lhs, rhs, reason):
        raise _Mismatch(path, lhs, rhs, reason)

    def map_var(self, path, lhs, rhs) -> bool:
        """Record lhs <-> rhs; False if one side is already mapped elsewhere."""
        a, b = self.l2r.get(id(lhs)), self.r2l.get(id(rhs))
        if a is None and b is None:
            self.l2r[id(lhs)] = rhs
            self.r2l[id(rhs)] = lhs
            self.keep += [lhs, rhs]
            return True
        return a is rhs and b is lhs

    def var(self, path, lhs, rhs, define: bool):
        if type(lhs) is not type(rhs):
            self.fail(path, lhs, rhs, f"{type(lhs).__name__} vs {type(rhs).__name__}")
        mapped = self.l2r.get(id(lhs))
        if mapped is not None:
            if mapped is not rhs:
                self.fail(path, lhs, rhs, "variables are bound to different definitions")
            return
        if self.r2l.get(id(rhs)) is not None:
            self.fail(path, lhs, rhs, "variables are bound to different definitions")
        if not (define or self.map_free_vars or lhs is rhs):
            if getattr(lhs, "_free_eq_by_fields", False):  # its fields hold the variables
                self.fields(path, lhs, rhs, define=False)
                self.map_var(path, lhs, rhs)
                return
            self.fail(path, lhs, rhs, "free variables differ (use map_free_vars=True to match them)")
        self.map_var(path, lhs, rhs)
        self.fields(path, lhs, rhs, define=True)

    def fields(self, path, lhs, rhs, define: bool):
        cls = type(lhs)
        defs = cls._def_fields
        for name in _order(cls):
            if name in cls._eq_ignore:
                continue
            self.eq(f"{path}.{name}", getattr(lhs, name), getattr(rhs, name), define or name in defs)

    def eq(self, path: str, lhs: Any, rhs: Any, define: bool = False):
        if lhs is rhs and not (define and isinstance(lhs, Node)):
            return
        if isinstance(lhs, Node) or isinstance(rhs, Node):
            if type(lhs) is not type(rhs):
                self.fail(path, lhs, rhs, f"{type(lhs).__name__} vs {type(rhs).__name__}")
            if _is_var(lhs):
                self.var(path, lhs, rhs, define)
            elif hasattr(lhs, "_structural_key"):  # GlobalVar, Op: compared by name
                if lhs._structural_key() != rhs._structural_key():
                    self.fail(path, lhs, rhs, "names differ")
            else:
                self.fields(path, lhs, rhs, define)
            return
        if isinstance(lhs, (list, tuple)) and isinstance(rhs, (list, tuple)):
            if len(lhs) != len(rhs):
                self.fail(path, lhs, rhs, f"lengths differ: {len(lhs)} vs {len(rhs)}")
            for i, (a, b) in enumerate(zip(lhs, rhs)):
                self.eq(f"{path}[{i}]", a, b, define)
            return
        if isinstance(lhs, dict) and isinstance(rhs, dict):
            self.dict(path, lhs, rhs, define)
            return
        if isinstance(lhs, np.ndarray) or isinstance(rhs, np.ndarray):
            if not (
                isinstance(lhs, np.ndarray)
                and isinstance(rhs, np.ndarray)
                and lhs.dtype == rhs.dtype
                and lhs.shape == rhs.shape
                and np.array_equal(lhs, rhs, equal_nan=lhs.dtype.kind in "fc")
            ):
                self.fail(path, lhs, rhs, "constant arrays differ")
            return
        if isinstance(lhs, float) and isinstance(rhs, float):
            if not (lhs == rhs or (math.isnan(lhs) and math.isnan(rhs))):
                self.fail(path, lhs, rhs, "values differ")
            return
        if type(lhs) is not type(rhs) or lhs != rhs:
            self.fail(path, lhs, rhs, "values differ")

    def dict(self, path, lhs: dict, rhs: dict, define: bool):
        if len(lhs) != len(rhs):
            self.fail(path, lhs, rhs, f"sizes differ: {len(lhs)} vs {len(rhs)}")
        named = [_key_name(k) for k in lhs]
        if all(n is not None for n in named):
            rnamed = {_key_name(k): k for k in rhs}
            for key, name in zip(lhs, named):
                if name not in rnamed:
                    self.fail(f"{path}[{name!r}]", lhs[key], None, f"key {name!r} is missing on the right")
                self.eq(f"{path}[{name!r}]", lhs[key], rhs[rnamed[name]], define)
            return
        for i, ((ka, va), (kb, vb)) in enumerate(zip(lhs.items(), rhs.items())):
            self.eq(f"{path}.keys[{i}]", ka, kb, define)
            self.eq(f"{path}.values[{i}]", va, vb, define)


def _key_name(key) -> str | None:
    if isinstance(key, str):
        return key
    if hasattr(key, "_structural_key"):
        return key._structural_key()
    return None


def structural_equal(lhs: Any, rhs: Any, map_free_vars: bool = False) -> bool:
    """True when ``lhs`` and ``rhs`` are structurally equal (see module doc).

    >>> import mlckit as tvm
    >>> from mlckit import tir
    >>> x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    >>> tvm.ir.structural_equal(x + 1, x + 1), tvm.ir.structural_equal(x + 1, y + 1)
    (True, False)
    >>> tvm.ir.structural_equal(x + 1, y + 1, map_free_vars=True)
    True
    """
    try:
        _Equal(map_free_vars).eq("<root>", lhs, rhs)
    except _Mismatch:
        return False
    return True


class Difference:
    """The first difference between two IR objects: ``path`` (``<root>.body.block …``),
    the two sub-objects there (``lhs``, ``rhs``) and the ``reason``."""

    def __init__(self, path: str, lhs: Any, rhs: Any, reason: str):
        self.path, self.lhs, self.rhs, self.reason = path, lhs, rhs, reason

    def __repr__(self) -> str:
        return f"Difference({self.path}: {self.reason})"


def first_difference(lhs: Any, rhs: Any, map_free_vars: bool = False) -> Difference | None:
    """The first difference :func:`assert_structural_equal` would report, or None.

    Example::

        d = first_difference(answer, expected)
        d.path, d.lhs, d.rhs      # '<root>.body.block.body…', B[vk, vj], B[vj, vk]
    """
    try:
        _Equal(map_free_vars).eq("<root>", lhs, rhs)
    except _Mismatch as m:
        return Difference(m.path, m.lhs, m.rhs, m.reason)
    return None


def assert_structural_equal(lhs: Any, rhs: Any, map_free_vars: bool = False) -> None:
    """Raise ``ValueError`` naming the path of the first difference between lhs and rhs.

    >>> import mlckit as tvm
    >>> from mlckit import tir
    >>> x = tir.Var("x", "int32")
    >>> try:
    ...     tvm.ir.assert_structural_equal(x + 1, x + 2)
    ... except ValueError as err:
    ...     print(err)
    StructuralEqual check failed at <root>.b.value: values differ
      lhs: 1
      rhs: 2
    """
    try:
        _Equal(map_free_vars).eq("<root>", lhs, rhs)
    except _Mismatch as m:
        raise TVMValueError(
            f"StructuralEqual check failed at {m.path}: {m.reason}\n"
            f"  lhs: {_short(m.lhs)}\n  rhs: {_short(m.rhs)}"
        ) from None


class _Hash:
    def __init__(self, map_free_vars: bool):
        self.map_free_vars = map_free_vars
        self.var_index: dict[int, int] = {}
        self.keep: list[Any] = []

    def h(self, obj: Any) -> int:
        if isinstance(obj, Node):
            if _is_var(obj):
                idx = self.var_index.get(id(obj))
                if idx is None:
                    idx = self.var_index[id(obj)] = len(self.var_index)
                    self.keep.append(obj)
                    return hash(("var-def", type(obj).__name__, idx, self.node_fields(obj)))
                return hash(("var", idx))
            if hasattr(obj, "_structural_key"):
                return hash((type(obj).__name__, obj._structural_key()))
            return hash((type(obj).__name__, self.node_fields(obj)))
        if isinstance(obj, (list, tuple)):
            return hash(("seq", tuple(self.h(x) for x in obj)))
        if isinstance(obj, dict):
            items = [(_key_name(k) or self.h(k), self.h(v)) for k, v in obj.items()]
            if all(_key_name(k) is not None for k in obj):
                items.sort()
            return hash(("dict", tuple(items)))
        if isinstance(obj, np.ndarray):
            return hash(("array", obj.dtype.str, obj.shape, obj.tobytes()))
        if isinstance(obj, float) and math.isnan(obj):
            return hash("nan")
        return hash(obj)

    def node_fields(self, obj: Node) -> tuple:
        cls = type(obj)
        return tuple(self.h(getattr(obj, n)) for n in _order(cls) if n not in cls._eq_ignore)


def structural_hash(obj: Any, map_free_vars: bool = False) -> int:
    """A hash consistent with ``structural_equal``: equal objects hash equal.

    >>> import mlckit as tvm
    >>> from mlckit import tir
    >>> x = tir.Var("x", "int32")
    >>> tvm.ir.structural_hash(x * 2) == tvm.ir.structural_hash(x * 2)
    True
    """
    return _Hash(map_free_vars).h(obj)


# tvm_ffi.structural_equal / structural_hash (mlckit.ffi) find the comparison by these names.
register_func("ffi.StructuralEqual", structural_equal, override=True)
register_func("ffi.StructuralHash", structural_hash, override=True)
