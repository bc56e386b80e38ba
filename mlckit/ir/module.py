"""IRModule and GlobalVar: the unit that passes transform and ``build`` compiles."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mlckit.error import TVMKeyError
from mlckit.ffi.registry import get_global_func
from mlckit.ffi.views import view

from .node import Node, node


@node
class GlobalVar(Node):
    """The name of a function in an IRModule (``mod.get_global_var("main")``).

    >>> from mlckit.script import ir as I, tir as T
    >>> @I.ir_module
    ... class Mod:
    ...     @T.prim_func
    ...     def copy(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
    ...         for i in range(4):
    ...             b[i] = a[i]
    >>> gv = Mod.get_global_var("copy")
    >>> gv, gv.name_hint
    (I.GlobalVar("copy"), 'copy')
    """

    name_hint: str

    def __hash__(self):
        return id(self)

    def _structural_key(self) -> str:
        return self.name_hint

    def __call__(self, *args, **kwargs):
        # Inside a TIR/Relax script, calling a GlobalVar builds a call to that function: a
        # relax.Call, which mlckit.relax (above the IR core) registers as "ir.GlobalVar.call".
        return get_global_func("ir.GlobalVar.call")(self, list(args))


@node
class IRModule(Node):
    """A dict-like collection of functions keyed by GlobalVar, with module attributes.

    Example::

        mod = IRModule({"main": func})
        mod["main"]            # the function
        mod.get_global_var("main")
    """

    functions: dict = None  # type: ignore[assignment]  # GlobalVar -> BaseFunc
    attrs: dict = None  # type: ignore[assignment]
    global_infos: dict = None  # type: ignore[assignment]

    def __post_init__(self):
        funcs = {}
        for key, func in (self.functions or {}).items():
            gv = GlobalVar(key) if isinstance(key, str) else key
            funcs[gv] = func
        self.functions = funcs
        self.attrs = dict(self.attrs or {})
        self.global_infos = dict(self.global_infos or {})

    # -- dict-like access ---------------------------------------------------------------
    def _lookup(self, key) -> GlobalVar:
        if isinstance(key, GlobalVar):
            if key in self.functions:
                return key
            key = key.name_hint
        for gv in self.functions:
            if gv.name_hint == key:
                return gv
        names = ", ".join(sorted(gv.name_hint for gv in self.functions)) or "none"
        raise TVMKeyError(f"function {key!r} is not in the IRModule (it has: {names})")

    def __getitem__(self, key):
        return self.functions[self._lookup(key)]

    def __setitem__(self, key, func):
        self.update_func(key, func)

    def __contains__(self, key) -> bool:
        try:
            self._lookup(key)
            return True
        except KeyError:
            return False

    def __iter__(self) -> Iterator:
        return iter(self.functions.items())

    def __len__(self) -> int:
        return len(self.functions)

    def items(self):
        return self.functions.items()

    def functions_items(self) -> list:
        """``(GlobalVar, function)`` pairs in alphabetical order of their names (TVM's
        ``IRModule.functions_items``).

        Example::

            [gv.name_hint for gv, _ in mod.functions_items()]   # ['add', 'main', 'matmul']
        """
        return sorted(self.functions.items(), key=lambda item: item[0].name_hint)

    def get_global_var(self, name: str) -> GlobalVar:
        return self._lookup(name)

    def get_global_vars(self) -> list[GlobalVar]:
        return list(self.functions)

    def update_func(self, key, func) -> None:
        """Add or replace a function; a string key reuses the GlobalVar of that name."""
        if isinstance(key, str):
            gv = self._lookup(key) if key in self else GlobalVar(key)
        else:
            gv = key
        self.functions[gv] = func

    def remove(self, key) -> None:
        del self.functions[self._lookup(key)]

    def with_attr(self, key: str, value: Any) -> IRModule:
        return IRModule(dict(self.functions), {**self.attrs, key: value}, self.global_infos)

    def copy(self) -> IRModule:
        return IRModule(dict(self.functions), dict(self.attrs), dict(self.global_infos))

    def graph(self, name: str | None = None):
        """The graph of function ``name`` (default ``main``, or the only function): a
        ``graphviz.Digraph`` (see :func:`mlckit.notebook.graph`).

        Example::

            MyModule.graph()            # main's dataflow
            MyModule.graph("linear0")   # a PrimFunc's loop nest
        """
        return view("graph", self, name)  # installed by the notebook layer

    @staticmethod
    def from_expr(expr, name: str = "main") -> IRModule:
        return IRModule({name: expr})

    def __hash__(self):
        return id(self)
