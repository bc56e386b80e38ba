"""A kernel's entry from Python: one small Numba function per number of arguments.

Numba compiles, beside every function, a CPython wrapper: the code that takes the arrays out
of their Python objects, checks them and boxes the result.  For a kernel of three arrays it
is about a tenth of the compile (the course's ``mm_relu`` schedules, the 64 candidates of
its tuning), and every kernel of the same argument types needs the very same one.  So once
kernels of the same argument types repeat, mlckit compiles them without it (Numba's
``no_cpython_wrapper`` flag) and calls them through an *entry*: ``enter(kernel, A, B, C)``,
a Numba function that unboxes its arguments and calls the kernel's machine code at the
address ``kernel``, in Numba's own calling convention (status and exception as a call
between two Numba functions).  An entry is compiled once per argument types (~0.1 s, the
cost of about four wrappers) and cached on disk like the kernels: ``ready`` says when a
kernel is compiled without its wrapper.

The caller guarantees that the arguments have the kernel's parameter types (``NumbaFunction``
passes what its argument check returned: arrays of the kernel's dtype and rank, C-contiguous,
and scalars of the parameter's dtype); a read-only or unaligned array is the same machine
value as a writable one.

Example::

    from mlckit.backend.numba_cpu.entry import bind
    run = bind(address, arity=3)      # address: the kernel's compiled code
    run(A, B, C)                      # enter(address, A, B, C)
"""

from __future__ import annotations

import collections
import functools
import hashlib
import threading
from pathlib import Path

from numba import types
from numba.extending import intrinsic

from .cache_load import load_without_registries

__all__ = ["bind", "call_compiled", "enter_through_entry", "entry", "has_wrapper",
           "native_address", "ready"]


@intrinsic
def call_compiled(typingctx, address, args):
    """Call the Numba-compiled function at ``address`` (an integer) with the tuple ``args``,
    in Numba's calling convention; an exception it raises is raised by the caller.

    Example::

        call_compiled(kernel, (A, B, C))    # in an @njit function
    """
    if not isinstance(address, types.Integer) or not isinstance(args, types.BaseTuple):
        return None
    params = list(args.types)

    def codegen(context, builder, signature, llargs):
        where, values = llargs
        fnty = context.call_conv.get_function_type(types.none, params)
        callee = builder.inttoptr(where, fnty.as_pointer())
        status, _ = context.call_conv.call_function(
            builder, callee, types.none, params,
            [builder.extract_value(values, k) for k in range(len(params))])
        with builder.if_then(status.is_error, likely=False):
            context.call_conv.return_status_propagate(builder, status)
        return context.get_dummy_value()

    return types.none(address, args), codegen


def native_address(cres) -> int:
    """The address of a compiled version's machine code (Numba's ``CompileResult``)."""
    return cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)


def bind(address: int, arity: int):
    """``run(*args)`` = ``entry(arity)(address, *args)``: the kernel at ``address``,
    callable from Python."""
    return functools.partial(entry(arity), address)


def has_wrapper(cres) -> bool:
    """Whether a compiled version has its own CPython wrapper (a version loaded from Numba's
    disk cache is as it was compiled, whatever the flags now)."""
    return bool(cres.library.get_pointer_to_function(cres.fndesc.llvm_cpython_wrapper_name))


def enter_through_entry(dispatcher, arity: int) -> None:
    """Make every version of ``dispatcher`` that has no CPython wrapper callable through the
    entry of ``arity`` arguments: its entry point, which ``dispatcher.compile`` returns, is
    ``bind(address, arity)``.  Numba's own would be a null function, so such a version is kept
    out of the dispatcher's table of machine-code entry points; calling ``dispatcher(A, B,
    C)`` still works (Numba finds the version compiled and calls the entry point it returns),
    through Numba's slower path.  A version with its wrapper is added as Numba adds it."""
    from numba.core import sigutils

    compile_signature, add_overload = dispatcher.compile, dispatcher.add_overload

    def add_through_entry(cres):
        if has_wrapper(cres):
            add_overload(cres)
        else:
            dispatcher.overloads[tuple(cres.signature.args)] = cres._replace(
                entry_point=bind(native_address(cres), arity))

    def compile_returning_entry(sig):
        compile_signature(sig)
        args, _ = sigutils.normalize_signature(sig)
        return dispatcher.overloads[tuple(args)].entry_point

    dispatcher.add_overload = add_through_entry
    dispatcher.compile = compile_returning_entry


REPEATS = 3  # the kernel of the same argument types that compiles their entry (ready)
_SEEN: collections.Counter = collections.Counter()  # entry signature -> kernels built with it


def ready(argtypes: tuple) -> bool:
    """Whether a kernel of the Numba types ``argtypes`` is to be compiled without its CPython
    wrapper, called through the entry: when the entry's version for these types is compiled
    in this process or in Numba's disk cache (loaded then), or when this is the third kernel
    of these types this process builds (the entry is compiled then: ~0.1 s, which the next
    kernels' shorter compiles repay; the first two keep their wrappers, so that a process
    building kernels of ever new types, as a test suite does, compiles no entry).

    Example::

        ready((array_f32_2d,) * 3)    # True from the third mm kernel on (or once cached)
    """
    enter = entry(len(argtypes))
    sig = (types.int64, *argtypes)  # the address: a Python int
    with _LOCK:
        if sig in enter.overloads:
            return True
        # Numba's disk cache, read once per argument types (an index read: ~3 ms)
        cres = None if sig in _SEEN else enter._cache.load_overload(sig, enter.targetctx)
        if cres is not None:  # as Numba's Dispatcher.compile adds a version from its cache
            enter._cache_hits[sig] += 1
            enter.targetctx.insert_user_function(cres.entry_point, cres.fndesc, [cres.library])
            enter.add_overload(cres)
            return True
        _SEEN[sig] += 1
        if _SEEN[sig] < REPEATS:
            return False
    enter.compile(sig)
    return True


_ENTRIES: dict = {}
_LOCK = threading.Lock()


def entry(arity: int):
    """The entry of ``arity`` arguments: ``enter(kernel, a0, ..., a{arity-1})``, a Numba
    dispatcher loaded from its module in the cache (``$MLCKIT_CACHE_DIR/numba/entry_<n>_*``),
    compiled in memory where the cache cannot be written."""
    with _LOCK:
        found = _ENTRIES.get(arity)
        if found is None:
            found = _ENTRIES[arity] = _load(arity)
        return found


def _source(arity: int, cache: bool) -> str:
    params = ", ".join(f"a{k}" for k in range(arity))
    # the digest of this module: a changed call_compiled gets new files (Numba's cache of
    # an entry does not know what its intrinsics compile to)
    digest = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]
    return (f'"""mlckit.backend.numba_cpu.entry: calls a compiled kernel of {arity} '
            f'argument{"s" if arity != 1 else ""} (generated; entry.py {digest})."""\n\n'
            "from numba import njit\n"
            "from mlckit.backend.numba_cpu.entry import call_compiled\n\n\n"
            f"@njit(cache={cache}, _nrt=False)\n"
            f"def enter(kernel, {params}):\n"
            f"    call_compiled(kernel, ({params}{',' if arity == 1 else ''}))\n")


def _load(arity: int):
    from .. import disk_cache
    from . import cache_dir  # the package's cache folder (this module is imported by it)

    source = _source(arity, cache=True)
    name = f"entry_{arity}_{hashlib.sha256(source.encode()).hexdigest()[:12]}"
    try:
        module, _path = disk_cache.load_module(cache_dir(), name, "entry.py", source,
                                               f"mlckit_numba_{name}")
    except OSError:  # no writable cache: compiled in memory, uncached
        namespace: dict = {}
        exec(compile(_source(arity, cache=False), f"<entry {arity}>", "exec"), namespace)  # noqa: S102
        return namespace["enter"]
    load_without_registries(module.enter)
    return module.enter
