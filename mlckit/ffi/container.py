"""``tvm_ffi.Array`` / ``Map`` / ``Shape`` / ``Function``: the FFI's container and function
types, as mlckit's plain Python values.

mlckit passes Python lists/tuples, dicts and callables where TVM passes its FFI objects, so
these names are *types to test against*: ``isinstance(out, tvm_ffi.Array)`` is true for the
tuple a VM function returns, ``isinstance(mod["main"], tvm_ffi.Function)`` for a compiled
kernel.  Called, they build the plain value (``Array([1, 2])`` is the tuple ``(1, 2)``);
``Shape`` is a real tuple type (the VM's shape values are Shapes).

Example::

    import mlckit.ffi as tvm_ffi
    out = vm["main"](x)
    first = out[0] if isinstance(out, tvm_ffi.Array) else out
"""

from __future__ import annotations


class _TypeTest(type):
    """A class that also stands for plain Python types: ``isinstance(x, Array)`` asks the
    class's ``_matches(type(x))``."""

    def __instancecheck__(cls, obj) -> bool:
        return cls.__subclasscheck__(type(obj))

    def __subclasscheck__(cls, other) -> bool:
        return type.__subclasscheck__(cls, other) or cls._matches(other)


class Shape(tuple):
    """A shape: an immutable tuple of ints (``tvm_ffi.Shape([2, 3])``).

    Example::

        Shape([2, 3])          # Shape([2, 3]); equal to the tuple (2, 3)
    """

    def __new__(cls, content=()):
        return super().__new__(cls, (int(d) for d in content))

    def __repr__(self) -> str:
        return f"Shape({list(self)})"


class Array(metaclass=_TypeTest):
    """An immutable sequence of values: any list or tuple except a :class:`Shape`.

    Example::

        isinstance((1, 2), Array)     # True
        Array([1, 2])                 # (1, 2)
    """

    def __new__(cls, content=()):
        return tuple(content)

    @staticmethod
    def _matches(other) -> bool:
        return issubclass(other, (list, tuple)) and not issubclass(other, Shape)


class Map(metaclass=_TypeTest):
    """A mapping: any dict (``Map({"a": 1})`` is the dict ``{"a": 1}``).

    >>> import mlckit.ffi as tvm_ffi
    >>> m = tvm_ffi.Map({"a": 1})
    >>> m["a"], dict(m)
    (1, {'a': 1})
    """

    def __new__(cls, content=()):
        return dict(content)

    @staticmethod
    def _matches(other) -> bool:
        return issubclass(other, dict)


class Function(metaclass=_TypeTest):
    """A function the runtime can call: any Python callable (registered functions, compiled
    kernels, ``mod["main"]``).  ``Function(f)`` checks that ``f`` is callable and returns it.

    >>> import mlckit.ffi as tvm_ffi
    >>> f = tvm_ffi.Function(lambda x: x + 1)
    >>> f(41)
    42
    """

    def __new__(cls, func):
        if not callable(func):
            from mlckit.error import TVMTypeError

            raise TVMTypeError(f"tvm_ffi.Function expects a callable, got {type(func).__name__}")
        return func

    @staticmethod
    def _matches(other) -> bool:
        # instances of ``other`` are callable (classes themselves are not functions)
        return (not issubclass(other, type)
                and any("__call__" in base.__dict__ for base in other.__mro__))
