"""Pass infrastructure (as ``tvm.transform``): ``Pass``, ``Sequential``, ``PassContext``.

A pass maps an ``IRModule`` to a new ``IRModule`` (IR is immutable: the input is never
changed).  Passes carry a ``PassInfo`` (name, opt_level, required passes), run under the
current ``PassContext``, and report to the context's instruments before and after they run.

Example::

    @mlckit.transform.module_pass(opt_level=0, name="Identity")
    def identity(mod, ctx):
        return mod

    seq = mlckit.transform.Sequential([relax.transform.ToNonDataflow(), identity])
    with mlckit.transform.PassContext(instruments=[PrintAfterAll()]):
        mod = seq(mod)
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mlckit.error import TVMTypeError
from mlckit.ffi.registry import get_global_func

from .module import IRModule

__all__ = ["FunctionPass", "ModulePass", "Pass", "PassContext", "PassInfo", "PrintIR",
           "Sequential", "function_pass", "module_pass"]


@dataclass(frozen=True)
class PassInfo:
    """The metadata of a pass: its ``name``, ``opt_level`` and ``required`` pass names.

    Example::

        PassInfo(0, "ToNonDataflow")
    """

    opt_level: int
    name: str
    required: tuple = field(default=())
    traceable: bool = False

    def __post_init__(self):
        object.__setattr__(self, "required", tuple(self.required or ()))

    def __str__(self) -> str:
        return f"The meta data of the pass - pass name: {self.name}, opt_level: {self.opt_level}, required passes: {list(self.required)}"


class _ContextStack(threading.local):
    def __init__(self):
        self.stack: list[PassContext] = []


_CONTEXTS = _ContextStack()


class PassContext:
    """Settings for running passes: ``opt_level``, required / disabled passes,
    instruments and a free ``config`` dict.  Used as a context manager.

    Example::

        with PassContext(opt_level=3, instruments=[PrintBeforeAll()]):
            mod = seq(mod)
        PassContext.current().opt_level      # 2 outside any ``with``
    """

    def __init__(self, opt_level: int = 2, required_pass=None, disabled_pass=None,
                 instruments=None, config: dict | None = None, trace=None):
        self.opt_level = int(opt_level)
        self.required_pass = list(required_pass or [])
        self.disabled_pass = list(disabled_pass or [])
        self.instruments = list(instruments or [])
        self.config = dict(config or {})
        self.trace = trace
        self._entered = False

    # -- scoping --------------------------------------------------------------------------
    def __enter__(self) -> PassContext:
        for inst in self.instruments:
            _call(inst, "enter_pass_ctx")
        _CONTEXTS.stack.append(self)
        self._entered = True
        return self

    def __exit__(self, *exc) -> None:
        _CONTEXTS.stack.pop()
        self._entered = False
        for inst in self.instruments:
            _call(inst, "exit_pass_ctx")

    @staticmethod
    def current() -> PassContext:
        """The innermost ``with PassContext(...)``, or a default context outside any."""
        if _CONTEXTS.stack:
            return _CONTEXTS.stack[-1]
        return _default_context()

    def override_instruments(self, instruments) -> None:
        """Replace the instruments (exiting the old ones and entering the new ones when the
        context is active), as TVM's ``PassContext.override_instruments``."""
        if self._entered:
            for inst in self.instruments:
                _call(inst, "exit_pass_ctx")
        self.instruments = list(instruments or [])
        if self._entered:
            for inst in self.instruments:
                _call(inst, "enter_pass_ctx")

    def pass_enabled(self, info: PassInfo) -> bool:
        """TVM's rule: disabled passes never run; required ones always; others by level."""
        if info.name in self.disabled_pass:
            return False
        if info.name in self.required_pass:
            return True
        return self.opt_level >= info.opt_level

    # -- instrument hooks ---------------------------------------------------------------
    def _before(self, mod: IRModule, info: PassInfo) -> bool:
        run = True
        for inst in self.instruments:
            should = getattr(inst, "should_run", None)
            if should is not None and should(mod, info) is False:
                run = False
        if run:
            for inst in self.instruments:
                _call(inst, "run_before_pass", mod, info)
        return run

    def _after(self, mod: IRModule, info: PassInfo) -> None:
        for inst in self.instruments:
            _call(inst, "run_after_pass", mod, info)

    def __repr__(self) -> str:
        return (f"PassContext(opt_level={self.opt_level}, instruments={self.instruments!r}, "
                f"config={self.config!r})")


_DEFAULT: list[PassContext] = []


def _default_context() -> PassContext:
    if not _DEFAULT:
        _DEFAULT.append(PassContext())
    return _DEFAULT[0]


def _call(obj, name: str, *args) -> Any:
    method = getattr(obj, name, None)
    return method(*args) if method is not None else None


class Pass:
    """Base of passes: ``pass_(mod)`` returns a new module; ``pass_.info`` is its PassInfo.

    Subclasses implement ``transform_module(mod, ctx)``.

    >>> from mlckit.script import ir as I, tir as T
    >>> @I.ir_module
    ... class Mod:
    ...     @T.prim_func
    ...     def copy(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
    ...         for i in range(4):
    ...             b[i] = a[i]
    >>> import mlckit as tvm
    >>> @tvm.transform.module_pass(opt_level=0, name="Nothing")
    ... def nothing(mod, ctx):
    ...     return mod
    >>> isinstance(nothing, tvm.transform.Pass), nothing.info.name
    (True, 'Nothing')
    >>> nothing(Mod) is Mod
    True
    """

    info: PassInfo

    @property
    def name(self) -> str:
        return self.info.name

    def __call__(self, mod: IRModule) -> IRModule:
        if not isinstance(mod, IRModule):
            raise TVMTypeError(f"pass {self.info.name!r} expects an IRModule, got "
                            f"{type(mod).__name__}; wrap a function with IRModule({{'main': f}})")
        return self._run(mod, PassContext.current())

    def _run(self, mod: IRModule, ctx: PassContext) -> IRModule:
        if not ctx._before(mod, self.info):
            return mod
        result = self.transform_module(mod, ctx)
        if not isinstance(result, IRModule):
            raise TVMTypeError(f"pass {self.info.name!r} returned {type(result).__name__}, not an "
                            "IRModule")
        ctx._after(result, self.info)
        return result

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.info.name!r}, opt_level={self.info.opt_level})"


class ModulePass(Pass):
    """A pass made of a function ``(mod, ctx) -> mod``.

    Example::

        p = ModulePass(lambda mod, ctx: mod, PassInfo(0, "Identity"))
    """

    def __init__(self, pass_func: Callable, info: PassInfo):
        self.pass_func = pass_func
        self.info = info

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        return self.pass_func(mod, ctx)


class Sequential(Pass):
    """Run ``passes`` in order; each runs when the context enables it (opt_level,
    required, disabled), and reports to the instruments on its own.

    Example::

        seq = Sequential([ToNonDataflow(), CallTIRRewrite()], name="lower")
        mod = seq(mod)
    """

    def __init__(self, passes=None, opt_level: int = 0, name: str = "sequential",
                 required=None, traceable: bool = False):
        self.passes = list(passes or [])
        for p in self.passes:
            if not isinstance(p, Pass):
                raise TVMTypeError(f"Sequential expects passes, got {type(p).__name__}: {p!r}")
        self.info = PassInfo(opt_level, name, tuple(required or ()), traceable)

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        for p in self.passes:
            if not ctx.pass_enabled(p.info):
                continue
            mod = p._run(mod, ctx)
        return mod

    def __iter__(self):
        return iter(self.passes)

    def __len__(self) -> int:
        return len(self.passes)


def _make_pass_info(obj, opt_level, name, required, traceable) -> PassInfo:
    return PassInfo(0 if opt_level is None else opt_level, name or obj.__name__,
                    tuple(required or ()), traceable)


def module_pass(pass_func=None, opt_level: int | None = None, name: str | None = None,
                required=None, traceable: bool = False):
    """Decorate a function ``(mod, ctx) -> mod`` (or a class with ``transform_module``)
    into a module pass, as ``tvm.transform.module_pass``.

    Example::

        @module_pass(opt_level=0)
        def drop_attrs(mod, ctx):
            return IRModule(mod.functions)

        @module_pass(opt_level=1, name="MyPass")
        class MyPass:
            def transform_module(self, mod, ctx):
                return mod
    """

    def create(arg):
        info = _make_pass_info(arg, opt_level, name, required, traceable)
        if inspect.isclass(arg):
            return _wrap_class(arg, info, "transform_module", ModulePass)
        if not callable(arg):
            raise TVMTypeError("module_pass decorates a function (mod, ctx) -> mod or a class")
        return ModulePass(arg, info)

    if pass_func is not None:
        return create(pass_func)
    return create


def _wrap_class(cls, info: PassInfo, method: str, base):
    """A Pass class whose instances hold an instance of ``cls`` and call its ``method``."""
    if not hasattr(cls, method):
        raise TVMTypeError(f"a pass class needs a method {method!r}: {cls.__name__} has none")

    class _ClassPass(base):
        def __init__(self, *args, **kwargs):
            self._inst = cls(*args, **kwargs)
            base.__init__(self, getattr(self._inst, method), info)

        def __getattr__(self, attr):
            return getattr(self.__dict__["_inst"], attr)

    functools.update_wrapper(_ClassPass.__init__, cls.__init__)
    _ClassPass.__name__ = cls.__name__
    _ClassPass.__qualname__ = cls.__qualname__
    _ClassPass.__doc__ = cls.__doc__
    return _ClassPass


class FunctionPass(Pass):
    """A pass applying ``pass_func(func, mod, ctx) -> func`` to each function of a kind
    (``func_type``: Relax ``Function`` by default; ``tir.PrimFunc`` for TIR passes).

    Example::

        p = FunctionPass(lambda f, mod, ctx: f.with_attr("seen", 1), PassInfo(0, "Mark"))
    """

    def __init__(self, pass_func: Callable, info: PassInfo, func_type: type | None = None):
        self.pass_func = pass_func
        self.info = info
        self.func_type = func_type

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        func_type = self.func_type
        if func_type is None:  # relax (above the IR core) registers its Function class
            func_type = get_global_func("ir.FunctionPass.default_func_type")()
        out = mod.copy()
        for gv, func in list(mod.functions.items()):
            if isinstance(func, func_type):
                out.functions[gv] = self.pass_func(func, mod, ctx)
        return out


def function_pass(pass_func=None, opt_level: int | None = None, name: str | None = None,
                  required=None, traceable: bool = False, func_type: type | None = None):
    """Decorate ``(func, mod, ctx) -> func`` (or a class with ``transform_function``) into
    a pass over each Relax function (or each ``func_type`` function), as
    ``tvm.relax.transform.function_pass``.

    Example::

        @function_pass(opt_level=0)
        def mark(func, mod, ctx):
            return func.with_attr("marked", True)
    """

    def create(arg):
        info = _make_pass_info(arg, opt_level, name, required, traceable)
        if inspect.isclass(arg):
            cls = _wrap_class(arg, info, "transform_function", FunctionPass)
            return cls
        if not callable(arg):
            raise TVMTypeError("function_pass decorates a function (func, mod, ctx) -> func or a "
                            "class")
        return FunctionPass(arg, info, func_type)

    if pass_func is not None:
        return create(pass_func)
    return create


def PrintIR(header: str = "", show_meta_data: bool = False) -> Pass:  # noqa: N802 - TVM's name
    """A pass that prints the module (TVMScript) and returns it unchanged.

    >>> from mlckit.script import ir as I, tir as T
    >>> @I.ir_module
    ... class Mod:
    ...     @T.prim_func
    ...     def copy(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
    ...         for i in range(4):
    ...             b[i] = a[i]
    >>> import mlckit as tvm
    >>> out = tvm.transform.PrintIR()(Mod)
    PrintIR():
    # from tvm.script import ir as I
    ...
    >>> out is Mod
    True
    """

    def _print(mod, ctx):
        print(f"PrintIR({header}):\n{mod.script()}")
        return mod

    return ModulePass(_print, PassInfo(0, "PrintIR"))
