"""The registry of library patterns (TVM's ``relax.backend.pattern_registry``)."""

from __future__ import annotations

from mlckit.error import TVMTypeError

from ..transform.fuse_ops_by_pattern import FusionPattern

_PATTERNS: list[FusionPattern] = []  # highest priority first


def register_patterns(patterns: list) -> None:
    """Register patterns (FusionPatterns or ``(name, pattern[, annotations[, check]])``
    tuples); later ones have higher priority, as in TVM.  A name registered again replaces
    the old entry.

    Example::

        register_patterns([("numpy.matmul", *make_matmul_pattern())])
    """
    entries = []
    for item in patterns:
        if isinstance(item, FusionPattern):
            entries.append(item)
        elif isinstance(item, tuple):
            entries.append(FusionPattern(*item))
        else:
            raise TVMTypeError(f"register_patterns: cannot register a {type(item).__name__} as "
                               "a pattern (a FusionPattern or a (name, pattern, ...) tuple)")
    names = {e.name for e in entries}
    _PATTERNS[:] = [p for p in _PATTERNS if p.name not in names]
    for entry in entries:
        _PATTERNS.insert(0, entry)


def get_patterns_with_prefix(prefix: str) -> list[FusionPattern]:
    """The patterns whose names start with ``prefix``, highest priority first.

    Example::

        get_patterns_with_prefix("numpy")    # [numpy.matmul_transposed_bias_relu, ...]
    """
    return [p for p in _PATTERNS if p.name.startswith(prefix)]


def get_pattern(name: str) -> FusionPattern | None:
    """The pattern registered as ``name``, or None.

    Example::

        get_pattern("cublas.matmul_transposed_bias_relu")
    """
    return next((p for p in _PATTERNS if p.name == name), None)


__all__ = ["get_pattern", "get_patterns_with_prefix", "register_patterns"]
