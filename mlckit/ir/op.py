"""The operator registry: ``Op.get("relax.call_tir")``, with per-op attributes.

An op is registered once, with its attributes (struct-info inference, purity, legalization
…) set by the module that defines it::

    call_tir = register_op("relax.call_tir", num_inputs=2, purity=True)
    call_tir.set_attr("FInferStructInfo", infer_call_tir)
"""

from __future__ import annotations

from typing import Any

from mlckit.error import TVMKeyError
from mlckit.ffi.registry import load_registered_packages

from .node import Node, node


@node
class Op(Node):
    """A primitive operator, interned by name.

    >>> from mlckit import ir
    >>> add = ir.Op.get("relax.add")
    >>> add, add is ir.Op.get("relax.add")
    (I.Op("relax.add"), True)
    """

    name: str
    attrs: dict[str, Any] = None  # type: ignore[assignment]

    def get_attr(self, key: str, default: Any = None) -> Any:
        return self.attrs.get(key, default)

    def set_attr(self, key: str, value: Any) -> Op:
        self.attrs[key] = value
        return self

    @staticmethod
    def get(name: str) -> Op:
        """The registered operator of this name; an unknown name is a ``TVMError``.

        >>> from mlckit import ir
        >>> ir.Op.get("relax.add").name
        'relax.add'
        """
        if name not in _OPS:
            load_registered_packages()  # relax's ops are registered at its (lazy) import
        try:
            return _OPS[name]
        except KeyError:
            raise TVMKeyError(f"operator {name!r} is not registered") from None

    @staticmethod
    def list_names() -> list[str]:
        load_registered_packages()
        return sorted(_OPS)

    def __hash__(self):
        return hash(("Op", self.name))

    def _structural_key(self) -> str:
        return self.name


Op._eq_ignore = ("attrs",)
_OPS: dict[str, Op] = {}


def register_op(name: str, **attrs) -> Op:
    """Register (or fetch) the op ``name`` and set ``attrs`` on it.

    >>> from mlckit import ir
    >>> op = ir.register_op("my.op", num_inputs=1)
    >>> ir.Op.get("my.op") is op
    True
    """
    op = _OPS.get(name)
    if op is None:
        op = _OPS[name] = Op(name, {})
    op.attrs.update(attrs)
    return op


def register_op_attr(op_name: str, attr_key: str, value: Any = None, level: int = 10):
    """Set the attribute ``attr_key`` of the op ``op_name`` (registering the op if new).

    With ``value`` it is set at once; without, this is a decorator that sets the decorated
    function and returns it unchanged (TVM's ``tvm.ir.register_op_attr``; ``level`` is
    accepted for TVM's signature, a later registration simply wins).

    >>> from mlckit import ir
    >>> @ir.register_op_attr("my.intrin", "FLowerDoc")
    ... def lower(x):
    ...     return x
    >>> ir.Op.get("my.intrin").get_attr("FLowerDoc") is lower
    True
    """

    def _register(v):
        register_op(op_name).set_attr(attr_key, v)
        return v

    return _register(value) if value is not None else _register
