"""The TIR IRBuilder: PrimFuncs (``T.prim_func``, ``T.arg``, ``T.func_attr``, ``T.match_buffer``)
and buffers (``T.buffer``, ``T.Buffer``)."""

from __future__ import annotations

from numbers import Integral

from mlckit.error import TVMTypeError, TVMValueError
from mlckit.tir import dtype as dt
from mlckit.tir import expr as E
from mlckit.tir.buffer import Buffer, BufferRegion, MatchBufferRegion
from mlckit.tir.buffer import decl_buffer as _tir_decl_buffer
from mlckit.tir.expr import PrimExpr, Range, Var, convert

from ..base import IRBuilder, IRBuilderError
from . import frames
from .frames import (
    PrimFuncFrame,
    current_span,
)


# -- helpers ---------------------------------------------------------------------------------
def _prim_func_frame(method: str) -> PrimFuncFrame:
    """The PrimFuncFrame, which must be the innermost frame (TVM's FindPrimFuncFrame)."""
    last = IRBuilder.last_frame() if IRBuilder.is_in_scope() else None
    if isinstance(last, PrimFuncFrame):
        return last
    outer = IRBuilder.find_frame(PrimFuncFrame) if IRBuilder.is_in_scope() else None
    if outer is not None:
        raise IRBuilderError(f"{method} must be called at the top of the PrimFunc, "
                             "not inside a loop, block or other scope")
    raise IRBuilderError(f"{method} must be called inside a T.prim_func")


def _shape(shape) -> list:
    if isinstance(shape, (PrimExpr, Integral)):
        shape = (shape,)
    if not isinstance(shape, (list, tuple)):
        raise TVMTypeError(f"a buffer shape must be a tuple of sizes, got {type(shape).__name__}")
    out = []
    for s in shape:
        s = convert(s)
        if not isinstance(s, PrimExpr) or not (dt.is_int(s.dtype)):
            raise TVMTypeError(f"a buffer dimension must be an integer expression, got {s!r}")
        out.append(s)
    return out


def _buffer_decl(shape, dtype, name, data, strides, elem_offset, scope, align,
                 offset_factor, buffer_type, axis_separators) -> Buffer:
    if buffer_type not in ("", "default", "auto"):
        raise TVMValueError(f"buffer_type must be 'default' or 'auto', got {buffer_type!r}")
    shape = _shape(shape)
    dtype = dt.check_dtype(dtype)
    if strides:
        idx = shape[0].dtype if shape else "int32"
        strides = [Var(s, idx) if isinstance(s, str) else convert(s) for s in strides]
    buf = _tir_decl_buffer(shape, dtype, name, data, strides or [], elem_offset, scope,
                      align if align and align > 0 else -1, offset_factor,
                      "auto_broadcast" if buffer_type == "auto" else "", axis_separators)
    if data is None:
        buf.data.span = current_span()
    buf.span = current_span()
    return buf


def buffer(shape, dtype="float32", data=None, strides=None, elem_offset=None, scope="global",
           align=0, offset_factor=0, buffer_type="", axis_separators=None) -> Buffer:
    """Declare a buffer: ``T.Buffer((128, 128), "float32")`` in a parameter annotation.

    Example::

        def f(A: T.Buffer((128,), "float32")): ...
    """
    return _buffer_decl(shape, dtype, "", data, strides, elem_offset, scope, align,
                        offset_factor, buffer_type, axis_separators)


class BufferProxy:
    """``T.Buffer``: call it (``T.Buffer((4, 4), "float32")``) to declare a buffer; the old
    subscript form ``T.Buffer[(4, 4), "float32"]`` works too."""

    def __call__(self, shape, dtype="float32", data=None, strides=None, elem_offset=None,
                 scope="global", align=0, offset_factor=0, buffer_type="",
                 axis_separators=None) -> Buffer:
        return buffer(shape, dtype, data, strides, elem_offset, scope, align, offset_factor,
                      buffer_type, axis_separators)

    def __getitem__(self, keys) -> Buffer:
        if not isinstance(keys, tuple):
            return self(keys)
        if len(keys) >= 2 and not isinstance(keys[1], str):
            return self(keys)
        return self(*keys)

    def __instancecheck__(self, obj) -> bool:
        return isinstance(obj, Buffer)


Buffer_ = BufferProxy()


# -- functions ---------------------------------------------------------------------------------
def prim_func(is_private: bool = False) -> PrimFuncFrame:
    """Open a PrimFunc: ``with T.prim_func(): T.func_name("main"); A = T.arg(...)``."""
    return PrimFuncFrame(is_private)


def arg(name: str, obj):
    """Add a parameter: a Buffer (a handle param bound to it in buffer_map) or a Var.

    Example::

        A = T.arg("A", T.Buffer((4,), "float32"))
        n = T.arg("n", T.int32())
    """
    frame = _prim_func_frame("T.arg")
    if isinstance(obj, Buffer):
        IRBuilder.name(name, obj)
        handle = Var(f"{name}_handle", "handle", span=current_span())
        frame.args.append(handle)
        frame.buffer_map[handle] = obj
        return obj
    if isinstance(obj, Var):
        IRBuilder.name(name, obj)
        frame.args.append(obj)
        return obj
    raise TVMTypeError(f"a PrimFunc parameter must be a T.Buffer or a scalar Var (T.handle, "
                    f"T.int32() …), got {type(obj).__name__}")


def func_name(name: str) -> None:
    """Name the PrimFunc being built."""
    frame = _prim_func_frame("T.func_name")
    if frame.name is not None:
        raise IRBuilderError(f"the PrimFunc is already named {frame.name!r}")
    frame.name = name


def func_attr(attrs: dict) -> None:
    """Set attributes of the PrimFunc: ``T.func_attr({"tir.noalias": True})``.

    TVM >= 0.24's keys (``"tirx.noalias"``, ``"tirx.is_scheduled"``) name the same attributes
    as v0.23's ``"tir."`` ones: they are stored under the ``"tir."`` key, and a function
    printed in the tirx spelling writes them back as ``"tirx."``."""
    frame = _prim_func_frame("T.func_attr")
    for key, value in attrs.items():
        if isinstance(key, str) and key.startswith("tirx."):
            key = "tir." + key[len("tirx."):]
        if key == "global_symbol" and frame.is_private:
            raise TVMValueError("a private function may not have a global_symbol attribute")
        if key in frame.attrs:
            raise TVMValueError(f"duplicate PrimFunc attribute {key!r}")
        frame.attrs[key] = value


def func_ret(ret_type):
    """Set the return type of the PrimFunc."""
    frame = _prim_func_frame("T.func_ret")
    if frame.ret_type is not None:
        raise IRBuilderError("the PrimFunc already has a return type")
    frame.ret_type = ret_type
    return ret_type


def match_buffer(param, shape=None, dtype="float32", data=None, strides=None, elem_offset=None,
                 scope="global", align=-1, offset_factor=0, buffer_type="default",
                 axis_separators=None) -> Buffer:
    """Bind a buffer to a handle parameter, or (inside a block) view a region of a buffer.

    Example::

        A = T.match_buffer(a, (n, 128), "float32")          # a: T.handle
        sub = T.match_buffer(A[vi, 0:16], (16,))             # in a block
    """
    if shape is None:
        if isinstance(param, BufferRegion):
            dtype = param.buffer.dtype
            shape = [r.extent for r in param.region]
        else:
            raise TVMValueError("T.match_buffer needs a shape when binding a parameter")
    buf = _buffer_decl(shape, dtype, "", data, strides, elem_offset, scope, align,
                       offset_factor, buffer_type, axis_separators)
    if isinstance(param, Var):
        frame = _prim_func_frame("T.match_buffer")
        if not any(a is param for a in frame.args):
            raise TVMValueError(f"T.match_buffer: {param.name_hint!r} is not a parameter of the "
                             "function (only a T.handle parameter can be matched)")
        frame.buffer_map[param] = buf
        return buf
    if isinstance(param, E.BufferLoad):
        param = _region_from_load(param)
    if isinstance(param, BufferRegion):
        frame = frames._block_frame("T.match_buffer(region)")
        frame.match_buffers.append(MatchBufferRegion(buf, param, span=current_span()))
        return buf
    raise TVMTypeError(f"T.match_buffer expects a T.handle parameter or a buffer region, "
                    f"got {type(param).__name__}")


def _region_from_load(load: E.BufferLoad) -> BufferRegion:
    return BufferRegion(load.buffer, [Range(i, E.IntImm(i.dtype, 1)) for i in load.indices])


