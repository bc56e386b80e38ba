"""A kernel's entry from Python: one small Numba function per number of arguments.

Numba compiles, beside every function, a CPython wrapper: the code that takes the arrays out
of their Python objects, checks them and boxes the result.  For a kernel of three arrays it
is about a sixth of the compile (the course's ``mm_relu`` schedules, the 64 candidates of
its tuning), and every kernel of the same number of arguments needs the very same one.  So
mlckit compiles its kernels without it (Numba's ``no_cpython_wrapper`` flag) and calls them
through an *entry*: ``enter(kernel, A, B, C)``, a Numba function that unboxes its arguments
and calls the kernel's machine code at the address ``kernel``, in Numba's own calling
convention (status and exception as a call between two Numba functions).  The entries are
compiled once per argument types and cached on disk like the kernels.

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

import functools
import hashlib
import threading
from pathlib import Path

from numba import types
from numba.extending import intrinsic

__all__ = ["bind", "call_compiled", "enter_through_entry", "entry", "native_address"]


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


def enter_through_entry(dispatcher, arity: int) -> None:
    """Make every version of ``dispatcher`` (a kernel compiled without its CPython wrapper)
    callable through the entry of ``arity`` arguments: its entry point, which
    ``dispatcher.compile`` returns, is ``bind(address, arity)``.  Numba's own would be a null
    function, so the version is kept out of the dispatcher's table of machine-code entry
    points; calling ``dispatcher(A, B, C)`` still works (Numba finds the version compiled and
    calls the entry point it returns), through Numba's slower path."""
    from numba.core import sigutils

    compile_signature = dispatcher.compile

    def add_through_entry(cres):
        args = tuple(cres.signature.args)
        dispatcher.overloads[args] = cres._replace(
            entry_point=bind(native_address(cres), arity))

    def compile_returning_entry(sig):
        compile_signature(sig)
        args, _ = sigutils.normalize_signature(sig)
        return dispatcher.overloads[tuple(args)].entry_point

    dispatcher.add_overload = add_through_entry
    dispatcher.compile = compile_returning_entry


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
            f"@njit(cache={cache})\n"
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
    return module.enter
