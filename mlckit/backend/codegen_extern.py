"""Extern calls and matched buffers in the Python code generators.

A tensorized block calls a micro-kernel on tiles of buffers::

    C_1 = T.match_buffer(C_acc[vi_o * 16:vi_o * 16 + 16, ...], (16, 16), strides=("sc", 1), ...)
    T.call_extern("int32", "tmm16", T.tvm_access_ptr(T.type_annotation("float32"), C_1.data,
                  C_1.elem_offset, C_1.strides[0] * 16, 2), ..., C_1.strides[0])

is written as (TVM's LowerMatchBuffer, then its C calling convention)::

    # T.match_buffer C_1: a 16 x 16 tile of C_acc
    C_1_elem_offset = vi_o * 16 * 1024 + vj_o * 16
    sc = 1024
    tmm16(address(C_acc, C_1_elem_offset), ..., sc)

- a matched buffer shares the memory of its source (``C_1.data`` is ``C_acc``'s); its
  ``elem_offset`` is the region's start in elements and its ``strides`` the source's;
  where the body reads or writes it elementwise, it is a view of the region
  (``C_1 = C_acc[vi_o * 16:vi_o * 16 + 16, ...]``);
- ``T.tvm_access_ptr(type, data, offset, ...)`` is ``address(array, offset)``: the address
  of element ``offset`` of the array's memory, an integer (``a.ctypes.data`` plus the byte
  offset); a buffer's ``data`` passed on its own is ``address(array, 0)``;
- ``T.call_extern(dtype, "f", ...)`` is ``f(...)``: the backend puts the implementation of
  ``f`` (a C function through ctypes, or a registered Python / Numba function) in the
  module's namespace under that name; ``src.externs`` lists what the code calls.
"""

from __future__ import annotations

from mlckit.arith import Analyzer
from mlckit.tir import dtype as dt
from mlckit.tir.buffer import Buffer
from mlckit.tir.expr import BufferLoad, Call, IntImm, StringImm, Var

from .codegen_common import P_ADD, P_ATOM, RESERVED, CodegenError

__all__ = ["ExternCalls", "EXTERN_CALLS"]

EXTERN_CALLS = ("call_extern", "call_pure_extern")


class ExternCalls:
    """Mixin of the generator: ``T.call_extern`` and ``T.match_buffer`` in blocks."""

    externs: dict  # extern name -> (return dtype, argument dtypes)
    extern_names: dict  # extern name -> the Python name the code calls it by
    data_owner: dict  # id(data Var) -> the Buffer whose array holds that memory

    def note_data(self, buf: Buffer) -> None:
        """Remember that ``buf.data`` is the memory of ``buf``'s array."""
        self.data_owner.setdefault(id(buf.data), buf)
        self.keep.append(buf)

    # -- expressions ---------------------------------------------------------------------
    def extern_expr(self, e: Call, short: str) -> tuple[str, int]:
        if short in EXTERN_CALLS:
            name = e.args[0]
            if not isinstance(name, StringImm) or not name.value.isidentifier():
                raise CodegenError(f"{self.name}: T.{short} needs a function name that is a "
                                   f"Python identifier, got {name!r}")
            args = e.args[1:]
            sig = (e.dtype, tuple(a.dtype for a in args))
            seen = self.externs.setdefault(name.value, sig)
            if seen != sig:
                raise CodegenError(
                    f"{self.name}: the extern {name.value!r} is called with two different "
                    f"signatures: {_sig_text(*seen)} and {_sig_text(*sig)}")
            pyname = self.extern_py_name(name.value)
            return f"{pyname}({', '.join(self.extern_arg(a) for a in args)})", P_ATOM
        if short == "tvm_call_packed":
            if self.flavour.name not in ("lnumpy", "numba"):
                raise CodegenError(f"{self.name}: T.call_packed calls a Python function, which "
                                   f"the {self.flavour.name} backend cannot do")
            self.uses_packed = True
            args = [repr(e.args[0].value)] + [self.packed_arg(a) for a in e.args[1:]]
            return f"call_packed({', '.join(args)})", P_ATOM
        if short == "tvm_access_ptr":
            _ptype, data, offset = e.args[0], e.args[1], e.args[2]
            return self.address(data, offset), P_ATOM
        if short == "address_of":
            load = e.args[0]
            if not isinstance(load, BufferLoad):
                raise CodegenError(f"{self.name}: T.address_of expects a buffer element")
            offset = _flat_offset(load.buffer, load.indices)
            return self.address(load.buffer.data, offset), P_ATOM
        raise CodegenError(f"{self.name}: T.{short} may only appear as an argument of "
                           "T.tvm_access_ptr")

    def extern_py_name(self, name: str) -> str:
        """The Python name the extern ``name`` is called by: its own, unless the function or
        a variable already has it (``axpb_1``)."""
        pyname = self.extern_names.get(name)
        if pyname is None:
            pyname, n = name, 0
            while pyname in RESERVED or pyname == self.name or pyname in self.name_dtype:
                n += 1
                pyname = f"{name}_{n}"
            self.name_dtype[pyname] = "__unique__"
            self.extern_names[name] = pyname
        return pyname

    def extern_arg(self, a) -> str:
        if isinstance(a, Var) and a.dtype == "handle" and id(a) in self.data_owner:
            return self.address(a, IntImm("int64", 0))
        return self.expr(a, 0)

    def packed_arg(self, a) -> str:
        """A buffer (its data) reaches a packed function as its NumPy array."""
        if isinstance(a, Var) and a.dtype == "handle" and id(a) in self.data_owner:
            return self.name_of(self.data_owner[id(a)])
        return self.expr(a, 0)

    def packed_statement(self, s) -> bool:
        """``T.call_packed(...)`` as a statement: Numba runs it in object mode."""
        v = s.value
        if not (isinstance(v, Call) and getattr(v.op, "name", "") == "tir.tvm_call_packed"):
            return False
        if self.flavour.name != "numba":
            return False
        self.emit("with objmode():  # T.call_packed: a Python function, run by the interpreter", s)
        self.indent += 1
        self.emit(self.expr_text(v), s)
        self.indent -= 1
        return True

    def address(self, data, offset) -> str:
        owner = self.data_owner.get(id(data)) if isinstance(data, Var) else None
        if owner is None:
            raise CodegenError(f"{self.name}: the pointer {getattr(data, 'name_hint', data)!r} "
                               "is not the data of a buffer of this function")
        self.helpers.add("address")
        return f"address({self.name_of(owner)}, {self.expr(offset, 0)})"

    # -- T.match_buffer in a block --------------------------------------------------------
    def match_buffers(self, block, stmt) -> None:
        for m in block.match_buffers:
            buf, src = m.buffer, m.source
            base = self.data_owner.get(id(src.buffer.data), src.buffer)
            self.data_owner[id(buf.data)] = base
            self.keep.append(buf)
            label = self.bind(buf, buf.name, f"buffer:{buf.dtype}:view", scoped=False)
            self.emit(f"# T.match_buffer {label}: a "
                      f"{' x '.join(self.expr_text(r.extent) for r in src.region)} tile of "
                      f"{src.buffer.name}", stmt)
            strides = _strides(src.buffer)
            offset = src.buffer.elem_offset
            for r, s in zip(src.region, strides):
                offset = offset + r.min * s
            offset = Analyzer().simplify(offset)
            self.define_or_check(buf.elem_offset, offset, f"{label}.elem_offset", stmt)
            lead = len(src.region) - len(buf.shape)
            for i, s in enumerate(buf.strides):
                self.define_or_check(s, strides[lead + i], f"{label}.strides[{i}]", stmt)
            for i, d in enumerate(buf.shape):
                self.define_or_check(d, src.region[lead + i].extent, f"{label}.shape[{i}]",
                                     stmt)
            if _accessed(block, buf):
                parts = []
                for k, r in enumerate(src.region):
                    lo = self.expr(r.min, P_ADD)
                    parts.append(lo if k < lead else
                                 f"{lo}:{self.expr(r.min + r.extent, P_ADD)}")
                self.emit(f"{label} = {self.name_of(src.buffer)}[{', '.join(parts)}]", stmt)

    def define_or_check(self, target, value, what: str, stmt) -> None:
        """Bind a variable of a matched buffer (its offset, a stride) to ``value``; a constant
        must equal it (TVM's LowerMatchBuffer)."""
        if isinstance(target, IntImm):
            diff = Analyzer().simplify(value - target)
            if not (isinstance(diff, IntImm) and diff.value == 0):
                hint = (" (declare the buffer with offset_factor=... for a symbolic offset)"
                        if what.endswith("elem_offset") else "")
                raise CodegenError(
                    f"{self.name}: T.match_buffer {what} is {target.value} but the matched "
                    f"region has {self.expr_text(value)}{hint}")
            return
        if isinstance(target, Var) and id(target) not in self.names:
            hint = target.name_hint
            if not hint or hint.startswith("_"):  # unnamed: "_elem_offset" -> "A_elem_offset"
                hint = what.replace(".", "_").replace("[", "_").replace("]", "")
            name = self.bind(target, hint, target.dtype)
            self.emit(f"{name} = {self.expr_text(value)}", stmt)


def _strides(buf: Buffer) -> list:
    if buf.strides:
        return list(buf.strides)
    out, step = [], IntImm(buf.shape[-1].dtype if buf.shape else "int32", 1)
    for d in reversed(buf.shape):
        out.append(step)
        step = step * d
    return out[::-1]


def _flat_offset(buf: Buffer, indices):
    offset = buf.elem_offset
    for i, s in zip(indices, _strides(buf)):
        offset = offset + i * s
    return offset


def _accessed(block, buf) -> bool:
    """Whether the block's body loads or stores ``buf`` element by element."""
    found = []

    def visit(x):
        if found:
            return
        if isinstance(x, BufferLoad) and x.buffer is buf:
            found.append(x)
            return
        if getattr(x, "buffer", None) is buf and type(x).__name__ == "BufferStore":
            found.append(x)
            return
        if hasattr(x, "field_names"):
            for name in x.field_names():
                if name == "buffer":
                    continue
                v = getattr(x, name)
                for y in v if isinstance(v, list) else [v]:
                    if hasattr(y, "field_names"):
                        visit(y)

    visit(block.body)
    return bool(found)


def _sig_text(ret: str, args: tuple) -> str:
    return f"({', '.join(args)}) -> {ret}"


# the dtypes an extern's arguments and result may have, as ctypes types' names
def ctype_name(dtype: str) -> str:
    if dtype == "handle":
        return "c_void_p"
    if dt.is_float(dtype):
        return {"float32": "c_float", "float64": "c_double"}.get(dtype, "")
    return {"int8": "c_int8", "int16": "c_int16", "int32": "c_int32", "int64": "c_int64",
            "uint8": "c_uint8", "uint16": "c_uint16", "uint32": "c_uint32",
            "uint64": "c_uint64", "bool": "c_bool"}.get(dtype, "")

