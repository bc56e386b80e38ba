"""Pass instruments (as ``tvm.instrument``): observers called around every pass.

An instrument is any object with some of these methods (all optional):

- ``enter_pass_ctx()`` / ``exit_pass_ctx()``: the ``PassContext`` is entered / left;
- ``should_run(mod, info) -> bool``: False skips the pass;
- ``run_before_pass(mod, info)`` / ``run_after_pass(mod, info)``: see the module before and
  after each pass (``info.name`` says which).

Example::

    class Record(PassInstrument):
        def __init__(self):
            self.names = []
        def run_after_pass(self, mod, info):
            self.names.append(info.name)

    with PassContext(instruments=[Record()]):
        seq(mod)
"""

from __future__ import annotations

import time

__all__ = ["PassInstrument", "PassPrintingInstrument", "PassTimingInstrument", "PrintAfterAll",
           "PrintBeforeAll", "pass_instrument"]


class PassInstrument:
    """Base class of instruments; override the hooks you need.

    >>> from mlckit.script import ir as I, tir as T
    >>> @I.ir_module
    ... class Mod:
    ...     @T.prim_func
    ...     def copy(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
    ...         for i in range(4):
    ...             b[i] = a[i]
    >>> import mlckit as tvm
    >>> class Names(tvm.instrument.PassInstrument):
    ...     def run_before_pass(self, mod, info):
    ...         print("before", info.name)
    >>> @tvm.transform.module_pass(opt_level=0, name="Nothing")
    ... def nothing(mod, ctx):
    ...     return mod
    >>> with tvm.transform.PassContext(instruments=[Names()]):
    ...     _ = nothing(Mod)
    before Nothing
    """

    def enter_pass_ctx(self) -> None:
        """Called when the PassContext holding this instrument is entered."""

    def exit_pass_ctx(self) -> None:
        """Called when the PassContext holding this instrument is left."""

    def should_run(self, mod, info) -> bool:
        """Return False to skip the pass described by ``info``."""
        return True

    def run_before_pass(self, mod, info) -> None:
        """Called with the module a pass is about to transform."""

    def run_after_pass(self, mod, info) -> None:
        """Called with the module a pass has produced."""


def pass_instrument(pi_cls=None):
    """Decorate a plain class into a ``PassInstrument`` subclass (as TVM).

    Example::

        @pass_instrument
        class SkipPass:
            def __init__(self, name):
                self.name = name
            def should_run(self, mod, info):
                return info.name != self.name
    """

    def create(cls):
        if issubclass(cls, PassInstrument):
            return cls
        return type(cls.__name__, (cls, PassInstrument), {"__doc__": cls.__doc__,
                                                           "__module__": cls.__module__})

    return create(pi_cls) if pi_cls is not None else create


class PassTimingInstrument(PassInstrument):
    """Time every pass; ``render()`` returns a table (name, milliseconds).

    >>> from mlckit.script import ir as I, tir as T
    >>> @I.ir_module
    ... class Mod:
    ...     @T.prim_func
    ...     def copy(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
    ...         for i in range(4):
    ...             b[i] = a[i]
    >>> import mlckit as tvm
    >>> timing = tvm.instrument.PassTimingInstrument()
    >>> @tvm.transform.module_pass(opt_level=0, name="Nothing")
    ... def nothing(mod, ctx):
    ...     return mod
    >>> with tvm.transform.PassContext(instruments=[timing]):
    ...     _ = nothing(Mod)
    >>> "Nothing" in timing.render()
    True
    """

    def __init__(self):
        self.timings: list[tuple[str, float]] = []
        self._starts: list[float] = []

    def enter_pass_ctx(self) -> None:
        self.timings = []

    def run_before_pass(self, mod, info) -> None:
        self._starts.append(time.perf_counter())

    def run_after_pass(self, mod, info) -> None:
        self.timings.append((info.name, (time.perf_counter() - self._starts.pop()) * 1e3))

    def render(self) -> str:
        lines = ["Pass timings (ms):"]
        lines += [f"  {name}: {ms:.3f}" for name, ms in self.timings]
        return "\n".join(lines)


class PassPrintingInstrument(PassInstrument):
    """Print the module before / after the named passes.

    Print around two passes only::

        with tvm.transform.PassContext(instruments=[tvm.instrument.PassPrintingInstrument(
                print_before_pass_names=["FuseOps"], print_after_pass_names=["FuseTIR"])]):
            mod = relax.get_pipeline("zero")(mod)
    """

    def __init__(self, print_before_pass_names=(), print_after_pass_names=()):
        self.print_before_pass_names = list(print_before_pass_names)
        self.print_after_pass_names = list(print_after_pass_names)

    def run_before_pass(self, mod, info) -> None:
        if info.name in self.print_before_pass_names:
            print(f"Before Running Pass: {info.name}")
            print(mod.script())

    def run_after_pass(self, mod, info) -> None:
        if info.name in self.print_after_pass_names:
            print(f"After Running Pass: {info.name}")
            print(mod.script())


class PrintAfterAll(PassInstrument):
    """Print the module after every pass.

    Print the module after each pass of a pipeline::

        with tvm.transform.PassContext(instruments=[tvm.instrument.PrintAfterAll()]):
            mod = relax.get_pipeline("zero")(mod)
    """

    def run_after_pass(self, mod, info) -> None:
        print(f"After Running Pass: {info.name}")
        print(mod.script())


class PrintBeforeAll(PassInstrument):
    """Print the module before every pass.

    Print the module before each pass of a pipeline::

        with tvm.transform.PassContext(instruments=[tvm.instrument.PrintBeforeAll()]):
            mod = relax.get_pipeline("zero")(mod)
    """

    def run_before_pass(self, mod, info) -> None:
        print(f"Before Running Pass: {info.name}")
        print(mod.script())
