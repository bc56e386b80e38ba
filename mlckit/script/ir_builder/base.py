"""The IRBuilder: an imperative, frame-based way to build IR (what the parser calls).

A builder holds a stack of frames.  Entering a frame (``with T.prim_func():``) pushes it;
exiting it turns what was collected inside into IR and hands it to the parent frame, or,
for the outermost frame, makes it the builder's result::

    with IRBuilder() as ib:
        with T.prim_func():
            T.func_name("main")
            A = T.arg("A", T.Buffer((4,), "float32"))
            with T.grid(4) as i:
                T.buffer_store(A, A[i] + 1.0, [i])
    func = ib.get()
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from mlckit.error import TVMError

_STATE = threading.local()


class IRBuilderError(TVMError):
    """Misuse of the IRBuilder (a call outside the frame it needs, a missing result…)."""


class IRBuilderFrame:
    """A scope of the builder.  Subclasses override ``enter`` / ``exit``."""

    def __init__(self):
        self.callbacks: list[Callable[[], None]] = []

    def __enter__(self):
        IRBuilder.current().frames.append(self)
        return self.enter()

    def __exit__(self, exc_type, exc, tb):
        builder = IRBuilder.current()
        if exc_type is not None:
            builder.frames.pop()
            return False
        for callback in reversed(self.callbacks):
            callback()
        self.callbacks.clear()
        if not builder.frames or builder.frames[-1] is not self:
            raise IRBuilderError(f"{type(self).__name__} exited out of order")
        builder.frames.pop()
        self.exit()
        return False

    def enter(self) -> Any:
        """What ``with frame as x`` binds to ``x``."""
        return self

    def exit(self) -> None:
        """Turn the collected content into IR and hand it on."""

    def add_callback(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` just before this frame exits (closes frames opened inside it)."""
        self.callbacks.append(callback)


class IRBuilder:
    """The builder.  ``IRBuilder.current()`` is the innermost active one."""

    def __init__(self):
        self.frames: list[IRBuilderFrame] = []
        self.result: Any = None
        self.has_result = False

    def __enter__(self) -> IRBuilder:
        stack = _stack()
        stack.append(self)
        return self

    def __exit__(self, *exc):
        _stack().pop()
        return False

    @staticmethod
    def current() -> IRBuilder:
        stack = _stack()
        if not stack:
            raise IRBuilderError("no IRBuilder is active: use `with IRBuilder() as ib:`")
        return stack[-1]

    @staticmethod
    def is_in_scope() -> bool:
        return bool(_stack())

    def get(self) -> Any:
        """The finished IR (after the outermost frame has exited)."""
        if not self.has_result:
            raise IRBuilderError("the IRBuilder has no result yet: its outermost frame is still open")
        return self.result

    def set_result(self, value: Any) -> None:
        self.result = value
        self.has_result = True

    @staticmethod
    def find_frame(frame_type: type, innermost: bool = True) -> IRBuilderFrame | None:
        frames = IRBuilder.current().frames
        for frame in reversed(frames) if innermost else frames:
            if isinstance(frame, frame_type):
                return frame
        return None

    @staticmethod
    def last_frame() -> IRBuilderFrame | None:
        frames = IRBuilder.current().frames
        return frames[-1] if frames else None

    @staticmethod
    def name(name: str, value: Any) -> Any:
        """Give ``value`` (a Var, a Buffer …) the name it is bound to in the script."""
        if hasattr(value, "name_hint") and not hasattr(value, "shape"):
            value.name_hint = name
        elif hasattr(value, "name") and hasattr(value, "shape"):  # a tir.Buffer
            old, value.name = value.name, name
            # its own data pointer takes the name too; a view's (``T.Buffer(..., data=Y)``)
            # keeps the name of the variable it was given, so that printing is stable
            if hasattr(value, "data") and value.data.name_hint in ("", old):
                value.data.name_hint = name
        return value

    @staticmethod
    def name_many(names, values) -> list:
        return [IRBuilder.name(n, v) for n, v in zip(names, values)]


def _stack() -> list[IRBuilder]:
    stack = getattr(_STATE, "stack", None)
    if stack is None:
        stack = _STATE.stack = []
    return stack


def frame_of(frame_type: type, what: str):
    """The innermost frame of ``frame_type``, or an IRBuilderError saying ``what`` needs it."""
    frame = IRBuilder.find_frame(frame_type)
    if frame is None:
        raise IRBuilderError(f"{what} must be used inside {frame_type.__name__.replace('Frame', '')}")
    return frame
