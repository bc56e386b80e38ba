"""A pass's config in the PassContext (``config={"tir.UnrollLoop": {...}}``), as TVM's
``TVM_REGISTER_PASS_CONFIG_OPTION``: a dataclass of the fields and their defaults.

Example::

    @dataclass(frozen=True)
    class UnrollLoopConfig:
        auto_max_step: int = 0
    config = pass_config(UnrollLoopConfig, "tir.UnrollLoop", ctx)
"""

from __future__ import annotations

from dataclasses import fields

from mlckit.error import TVMValueError
from mlckit.ir.transform import PassContext

__all__ = ["pass_config"]


def pass_config(cls, key: str, ctx: PassContext | None = None):
    """``cls`` filled from ``ctx.config[key]`` (the current PassContext by default): a dict
    of some of its fields, or an instance; a clear error names an unknown field."""
    ctx = ctx or PassContext.current()
    given = ctx.config.get(key) or {}
    if isinstance(given, cls):
        return given
    known = {f.name: f for f in fields(cls)}
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise TVMValueError(f"{key} config: unknown field(s) {unknown}; the fields are "
                            f"{sorted(known)}")
    return cls(**{k: type(known[k].default)(v) for k, v in given.items()})
