"""``te.tag_scope``: give every ``te.compute`` made inside it a tag (TVM's ``te.tag_scope``).

Tags classify operators ("elemwise", "broadcast", "injective", ...); topi uses them::

    @te.tag_scope(tag="elemwise")
    def relu(x):
        return te.compute(x.shape, lambda *i: te.max(x(*i), 0))
"""

from __future__ import annotations

import functools

from mlckit.error import TVMValueError


class TagScope:
    """The tag in effect for ``te.compute``; usable with ``with`` or as a decorator."""

    _current: TagScope | None = None

    def __init__(self, tag: str):
        self.tag = tag
        self._previous: TagScope | None = None

    @classmethod
    def get_current(cls) -> TagScope | None:
        return cls._current

    def __enter__(self) -> TagScope:
        if TagScope._current is not None:
            raise TVMValueError(
                f"te.tag_scope({self.tag!r}) inside te.tag_scope({TagScope._current.tag!r}): "
                "nested tags are not allowed"
            )
        self._previous, TagScope._current = TagScope._current, self
        return self

    def __exit__(self, *exc) -> None:
        TagScope._current = self._previous

    def __call__(self, fdecl):
        @functools.wraps(fdecl)
        def tagged(*args, **kwargs):
            with TagScope(self.tag):
                return fdecl(*args, **kwargs)

        return tagged


def tag_scope(tag: str) -> TagScope:
    """A scope (``with`` block or decorator) tagging the computes made inside with ``tag``.

    >>> from mlckit import te
    >>> A = te.placeholder((4, 8), "float32", name="A")
    >>> with te.tag_scope("elemwise"):
    ...     B = te.compute((4, 8), lambda i, j: A[i, j] * 2, name="B")
    >>> B.op.tag
    'elemwise'
    """
    return TagScope(tag)
