"""The implementations of extern calls: C micro-kernels compiled here, registered functions.

When a PrimFunc calls ``T.call_extern("int32", "tmm16", ...)``, the backend that builds it
looks ``tmm16`` up, in this order:

1. the C code imported with a ``pragma_import_llvm`` annotation on a loop or block of the
   function (TVM links that LLVM module into the kernel).  mlckit compiles the text with the
   machine's C compiler into a shared library (cached under ``$MLCKIT_CACHE_DIR/extern``)
   and loads it with ctypes: C or C++ source (what ``mlckit.contrib.clang.create_llvm``
   returns without clang), or LLVM IR text / a ``.ll`` file (compiled by ``llc``);
2. the functions registered with :func:`mlckit.tir.register_extern`.

A C function is called through ctypes with the argument types of the call (a pointer is a
``void *``, ``int32`` an ``int``, ``float32`` a ``float``), from Python (lnumpy) and from
Numba-compiled code alike.  Unlike TVM, the C code is not inlined into the kernel: each call
is a real function call (a few nanoseconds).

Example::

    impls = resolve_externs(func, {"tmm16": ("int32", ("handle", "handle", ...))}, "numba")
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import threading
from pathlib import Path

from mlckit.error import TVMError
from mlckit.tir.op_extern import get_extern

from .codegen_extern import ctype_name
from .disk_cache import cache_root

__all__ = ["ExternError", "call_packed", "collect_externs", "compile_library", "libraries_of",
           "resolve_externs"]

IMPORT_KEYS = ("pragma_import_llvm", "pragma_import_c")


class ExternError(TVMError):
    """An extern call has no usable implementation, or its C code does not compile."""


def _cache_dir() -> Path:
    return cache_root() / "extern"


def is_llvm_ir(text: str) -> bool:
    """Whether ``text`` is LLVM IR (as clang -S -emit-llvm writes it) rather than C."""
    head = text.lstrip()
    return head.startswith(("; ModuleID", "source_filename", "target datalayout",
                            "target triple")) or "\ndefine " in text


def find_cc() -> str:
    """The C compiler: ``$CC``, else ``cc``, ``gcc`` or ``clang`` on the PATH."""
    for cand in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if cand and shutil.which(cand):
            return cand
    raise ExternError("no C compiler found (looked for $CC, cc, gcc, clang): mlckit compiles "
                      "the C code of extern functions with one; install gcc or clang")


_LOCK = threading.Lock()
_LIBS: dict[str, ctypes.CDLL] = {}


def compile_library(code: str, options=()) -> ctypes.CDLL:
    """``code`` (C / C++ source, LLVM IR text, or the path of such a file) compiled into a
    shared library and loaded (once per text and process; the library is cached on disk).

    Example::

        lib = compile_library('extern "C" int one() { return 1; }')
        lib.one()      # 1
    """
    if os.path.isfile(code) and "\n" not in code:
        with open(code) as f:
            text = f.read()
    else:
        text = code
    llvm = is_llvm_ir(text)
    lang = "llvm" if llvm else ("c++" if 'extern "C"' in text else "c")
    digest = hashlib.sha256(f"{lang}\0{' '.join(options)}\0{text}".encode()).hexdigest()[:20]
    with _LOCK:
        lib = _LIBS.get(digest)
        if lib is not None:
            return lib
        directory = _cache_dir()
        directory.mkdir(parents=True, exist_ok=True)
        so = directory / f"lib{digest}.so"
        if not so.exists():
            _build(text, lang, so, list(options))
        lib = _LIBS[digest] = ctypes.CDLL(str(so))
        return lib


def _build(text: str, lang: str, so: Path, options: list) -> None:
    tmp = so.with_name(f".{so.stem}.{os.getpid()}.{threading.get_ident()}")
    cc = find_cc()
    if lang == "llvm":
        src, obj = tmp.with_suffix(".ll"), tmp.with_suffix(".o")
        src.write_text(text)
        llc = shutil.which("llc")
        if llc is None:
            raise ExternError("the imported code is LLVM IR, which needs llc to compile; "
                              "install LLVM, or import C source instead")
        _run([llc, "-O3", "-relocation-model=pic", "-filetype=obj", str(src), "-o", str(obj)],
             text)
        _run([cc, "-shared", str(obj), "-o", str(tmp)], text)
    else:
        src = tmp.with_suffix(".cc" if lang == "c++" else ".c")
        src.write_text(text)
        _run([cc, "-x", lang, "-O3", "-shared", "-fPIC", *options, str(src), "-o", str(tmp)],
             text)
    os.replace(tmp, so)
    for leftover in (src, tmp.with_suffix(".o")):
        leftover.unlink(missing_ok=True)


def _run(cmd: list, text: str) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        numbered = "\n".join(f"{k:4d}  {line}" for k, line in enumerate(text.splitlines(), 1))
        raise ExternError(f"the C code of an extern function does not compile ({' '.join(cmd[:2])} "
                          f"...):\n{proc.stdout}{proc.stderr}\nThe code:\n{numbered}")


def libraries_of(func) -> list[str]:
    """The code imported by ``pragma_import_llvm`` annotations in ``func``, in order."""
    found: list[str] = []

    def visit(s):
        anns = getattr(s, "annotations", None) or {}
        for key in IMPORT_KEYS:
            value = anns.get(key)
            if isinstance(value, str) and value not in found:
                found.append(value)
        for name in s.field_names():
            v = getattr(s, name)
            for x in v if isinstance(v, list) else [v]:
                if hasattr(x, "field_names") and type(x).__module__.endswith("stmt"):
                    visit(x)

    visit(func.body)
    return found


def _ctypes_type(dtype: str, name: str):
    cname = ctype_name(dtype)
    if not cname:
        raise ExternError(f"the extern {name!r} takes or returns a {dtype}, which mlckit "
                          "cannot pass to C")
    return getattr(ctypes, cname)


def _prototype(name: str, sig) -> ctypes._CFuncPtr:
    ret, args = sig
    return ctypes.CFUNCTYPE(_ctypes_type(ret, name), *(_ctypes_type(a, name) for a in args))


def _python_caller(cfunc, name: str, arg_dtypes):
    """``cfunc`` callable with NumPy scalars (ctypes takes Python numbers only)."""
    from mlckit.tir import dtype as dt

    convert = [float if dt.is_float(a) else int for a in arg_dtypes]

    def call(*args):
        return cfunc(*(c(a) for c, a in zip(convert, args)))

    call.__name__ = name
    return call


def _is_cuda_device_function(f) -> bool:
    return "cuda" in type(f).__module__ and hasattr(f, "py_func")


def _is_ctypes_function(f) -> bool:
    return isinstance(f, ctypes._CFuncPtr)


class ExternTable(dict):
    """name -> implementation; ``notes``: a comment line per extern saying where it is from."""

    def __init__(self):
        super().__init__()
        self.notes: list[str] = []

    def namespace(self, py_names: dict) -> dict:
        """The implementations under the Python names the generated code calls them by."""
        return {py_names.get(name, name): impl for name, impl in self.items()}


def resolve_externs(func, externs: dict, backend: str, strict: bool = True) -> dict:
    """``{name: implementation}`` for the extern calls ``externs`` (name -> (return dtype,
    argument dtypes)) of ``func``, callable by the ``backend`` ("lnumpy", "numba", or for
    numba_cuda "sim" / "gpu");
    ``strict=False`` (showing source): a missing one is noted, not an error."""
    if not externs:
        return ExternTable()
    libs = [compile_library(code) for code in libraries_of(func)]
    out = ExternTable()
    for name, sig in externs.items():
        impl = None
        for lib in libs:
            try:
                impl = getattr(lib, name)
                out.notes.append(f"# {name}: a C function imported with pragma_import_llvm "
                                 f"({os.path.basename(lib._name)}, called through ctypes)")
                break
            except AttributeError:
                continue
        if impl is None:
            impl = get_extern(name)
            if impl is not None:
                kind = ("a C function (ctypes)" if _is_ctypes_function(impl) else
                        f"{getattr(impl, '__module__', '?')}.{getattr(impl, '__name__', name)}")
                out.notes.append(f"# {name}: {kind}, registered with tir.register_extern")
        if impl is None and not strict:
            out.notes.append(f"# {name}: no implementation yet (an error when built)")
            continue
        if impl is None:
            where = (f" (the {len(libs)} library(ies) imported with pragma_import_llvm do not "
                     "define it)" if libs else "")
            raise ExternError(
                f"T.call_extern calls {name!r}, which has no implementation{where}: import C "
                f"code defining it with sch.annotate(loop, \"pragma_import_llvm\", "
                f"mlckit.contrib.clang.create_llvm(c_source)), or register one with "
                f"mlckit.tir.register_extern({name!r}, function)")
        if backend == "gpu" and not _is_cuda_device_function(impl):
            raise ExternError(
                f"the extern {name!r} cannot run in a kernel on the GPU: its implementation "
                "is host code (C, Numba or Python); register a numba.cuda.jit(device=True) "
                "function with tir.register_extern, or run with mode='cpu' or 'sim'")
        if _is_ctypes_function(impl):
            impl = _prototype(name, sig)(ctypes.cast(impl, ctypes.c_void_p).value)
            if backend in ("lnumpy", "sim"):
                impl = _python_caller(impl, name, sig[1])
        elif backend == "numba" and not hasattr(impl, "py_func"):
            raise ExternError(
                f"the extern {name!r} is registered as the Python function "
                f"{getattr(impl, '__name__', impl)!r}, which Numba-compiled code cannot call: "
                "register a numba.njit function or a C function (ctypes), or build with the "
                "lnumpy backend")
        out[name] = impl
    return out


def call_packed(name: str, *args):
    """``T.call_packed(name, *args)``: call the function registered as ``name``
    (``mlckit.register_func``); a buffer arrives as its NumPy array."""
    from mlckit.ffi.registry import get_global_func

    func = get_global_func(name, allow_missing=True)
    if func is None:
        raise ExternError(f"T.call_packed calls {name!r}, which is not registered: register it "
                          f"with @mlckit.register_func({name!r})")
    import numpy as np

    func(*(np.asarray(a) if hasattr(a, "__array__") else a for a in args))
    return 0


def collect_externs(func, pointers: list | None = None) -> dict:
    """The extern calls of ``func``: name -> (return dtype, argument dtypes); the pointer
    intrinsics (``tvm_access_ptr``, ``address_of``) it uses are appended to ``pointers``."""
    from mlckit.tir.expr import Call

    found: dict = {}

    def visit(x):
        op = getattr(x.op, "name", "") if isinstance(x, Call) else ""
        if op in ("tir.call_extern", "tir.call_pure_extern"):
            found.setdefault(x.args[0].value, (x.dtype, tuple(a.dtype for a in x.args[1:])))
        if op in ("tir.tvm_access_ptr", "tir.address_of") and pointers is not None:
            pointers.append(op)
        if isinstance(x, list):
            for y in x:
                visit(y)
        elif hasattr(x, "field_names"):
            for name in x.field_names():
                if name not in ("buffer", "op"):
                    visit(getattr(x, name))

    visit(func.body)
    return found
