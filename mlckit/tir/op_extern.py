"""TIR calls that leave TIR: ``T.call_extern``, ``T.call_packed`` and the pointers they take.

A tensor intrinsic's implementation usually ends in a call of a function written outside
TIR (a C micro-kernel, a hardware instruction's wrapper)::

    T.call_extern("int32", "tmm16", C.access_ptr("w"), A.access_ptr("r"), sa, sb, sc)

- ``call_extern(dtype, name, *args)`` calls the C function ``name`` (``tir.call_extern``);
  ``call_pure_extern`` is the same for a function without side effects;
- ``call_packed(name, *args)`` calls a function of the global registry
  (``mlckit.register_func``) with TVM's packed calling convention (``tir.tvm_call_packed``);
- ``buffer.access_ptr("r")`` is ``T.tvm_access_ptr(T.type_annotation("float32"), A.data,
  A.elem_offset, extent, 1)``: the address of the buffer's first element, with the access
  mask 1 (read), 2 (write) or 3 (both).

An extern has no body in TIR: the backends look its implementation up when they build (a C
library imported with the ``pragma_import_llvm`` annotation, or a function registered with
:func:`mlckit.tir.register_extern`).

These are the functions of TVM's ``tvm.tir.op`` with the same signatures; in scripts
``T.call_extern`` also takes the dtype as a keyword (``dtype="int32"``), as TVM's does.
"""

from __future__ import annotations

from mlckit.error import TVMTypeError, TVMValueError
from mlckit.ir.op import Op, register_op

from .expr import Call, PrimExpr, StringImm, convert

# the access masks of tvm_access_ptr (TVM's Buffer.READ / Buffer.WRITE)
READ, WRITE = 1, 2

for _name in ("call_extern", "call_pure_extern", "tvm_call_packed", "tvm_access_ptr",
              "type_annotation", "address_of"):
    register_op(f"tir.{_name}")


def _name_arg(fn: str, name) -> StringImm:
    if isinstance(name, StringImm):
        return name
    if not isinstance(name, str):
        raise TVMTypeError(f"T.{fn}: the function name must be a string, got {name!r}")
    return StringImm(name)


def _args(args) -> list:
    from .buffer import Buffer

    out = []
    for a in args:
        if isinstance(a, Buffer):
            # TVM packs a whole buffer as a DLTensor; mlckit passes its data pointer
            a = a.data
        a = convert(a)
        if not isinstance(a, PrimExpr):
            raise TVMTypeError(f"an extern call's argument must be a TIR expression, got {a!r}")
        out.append(a)
    return out


def call_extern(dtype: str, func_name: str, *args) -> Call:
    """Call the external (C) function ``func_name`` returning ``dtype``.

    Example::

        T.call_extern("int32", "tmm16", C.access_ptr("w"), A.access_ptr("r"), 16)
    """
    return Call(dtype, Op.get("tir.call_extern"),
                [_name_arg("call_extern", func_name), *_args(args)])


def call_pure_extern(dtype: str, func_name: str, *args) -> Call:
    """``call_extern`` of a function without side effects (``tir.call_pure_extern``).

    >>> from mlckit import tir
    >>> tir.call_pure_extern("float32", "expf", tir.Var("x", "float32"))
    T.call_pure_extern("float32", "expf", x)
    """
    return Call(dtype, Op.get("tir.call_pure_extern"),
                [_name_arg("call_pure_extern", func_name), *_args(args)])


def call_packed(*args) -> Call:
    """Call the registered (``mlckit.register_func``) function ``args[0]`` with the other
    arguments; returns int32 like TVM's (``tir.tvm_call_packed``).

    Example::

        T.call_packed("env.print_value", x)
    """
    if not args:
        raise TVMTypeError("T.call_packed needs the name of the function to call")
    return Call("int32", Op.get("tir.tvm_call_packed"),
                [_name_arg("call_packed", args[0]), *_args(args[1:])])


def type_annotation(dtype: str) -> Call:
    """An expression standing for the type ``dtype`` (the first argument of tvm_access_ptr).

    >>> from mlckit import tir
    >>> tir.type_annotation("float32")
    T.type_annotation("float32")
    """
    return Call(dtype, Op.get("tir.type_annotation"), [])


def tvm_access_ptr(ptype, data, offset, extent, rw_mask) -> Call:
    """The address ``data + offset`` (in elements of ``ptype``) of a buffer's memory, used
    for ``extent`` elements with the access mask ``rw_mask`` (1 read, 2 write, 3 both).

    >>> from mlckit import tir
    >>> A = tir.decl_buffer((4, 4), "float32", name="A")
    >>> tir.tvm_access_ptr(tir.type_annotation("float32"), A.data, 0, 16, 1)
    T.tvm_access_ptr(T.type_annotation("float32"), A, 0, 16, 1)
    """
    return Call("handle", Op.get("tir.tvm_access_ptr"),
                [convert(ptype), convert(data), convert(offset), convert(extent),
                 convert(rw_mask, "int32")])


def address_of(buffer_load) -> Call:
    """The address of one buffer element (``T.address_of(A[i, j])``).

    >>> from mlckit import tir
    >>> A = tir.decl_buffer((4, 4), "float32", name="A")
    >>> i = tir.Var("i", "int32")
    >>> tir.address_of(tir.BufferLoad(A, [i, 0]))
    T.address_of(A[i, 0])
    """
    return Call("handle", Op.get("tir.address_of"), [convert(buffer_load)])


EXTERN_OPS = ("tir.call_extern", "tir.call_pure_extern")

# extern name -> its implementation (see register_extern)
_EXTERNS: dict = {}


def register_extern(name: str, func=None, override: bool = False):
    """Register the implementation of the extern function ``name`` for the backends.

    ``func`` receives the call's arguments as the generated code passes them: numbers, and
    for pointers (``A.data``, ``A.access_ptr("r")``) the address as an integer.  It may be

    - a C function loaded with ctypes (``ctypes.CDLL(path).tmm16``): every backend;
    - a ``numba.njit`` function: lnumpy and numba_cpu;
    - a plain Python function: lnumpy only.

    A C micro-kernel can also come with the function: ``sch.annotate(loop,
    "pragma_import_llvm", mlckit.contrib.clang.create_llvm(c_source))``.

    Example::

        @tir.register_extern("add_one")
        @numba.njit
        def add_one(x):
            return x + 1
    """
    def register(f):
        if not callable(f):
            raise TVMTypeError(f"register_extern({name!r}): the implementation must be "
                               f"callable, got {type(f).__name__}")
        if name in _EXTERNS and not override and _EXTERNS[name] is not f:
            raise TVMValueError(f"an implementation of the extern {name!r} is already "
                                "registered; pass override=True to replace it")
        _EXTERNS[name] = f
        return f

    if not isinstance(name, str):
        raise TVMTypeError(f"register_extern: the name must be a string, got {name!r}")
    return register if func is None else register(func)


def get_extern(name: str):
    """The implementation registered for the extern ``name``, or None."""
    return _EXTERNS.get(name)

__all__ = ["READ", "WRITE", "address_of", "call_extern", "call_packed", "call_pure_extern",
           "get_extern", "register_extern", "tvm_access_ptr", "type_annotation"]
