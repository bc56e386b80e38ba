"""``relax.BlockBuilder``: build Relax functions and IRModules from Python, as in TVM.

A builder holds the IRModule being built and the function, block and scope being filled.
Every ``emit`` normalizes its expression (nested calls get bindings of their own, struct info
is deduced — see ``normalizer.py``) and binds it to a fresh variable named as TVM names it:
``lv``, ``lv1``, … inside a dataflow block and ``gv``, ``gv1``, … outside (one name supply per
builder, shared by its functions)::

    A = relax.Var("A", relax.TensorStructInfo((128, 128), "float32"))
    B = relax.Var("B", relax.TensorStructInfo((128, 128), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main"):
        with bb.dataflow():
            C = bb.emit_te(te_matmul, A, B)     # lv = R.call_tir(cls.te_matmul, (A, B), ...)
            D = bb.emit_te(te_relu, C)          # lv1 = R.call_tir(cls.te_relu, (lv,), ...)
            R = bb.emit_output(D)               # gv = lv1
        bb.emit_func_output(R, params=[A, B])
    MyModule = bb.get()
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from mlckit.error import TVMKeyError, TVMTypeError
from mlckit.ir.module import GlobalVar, IRModule
from mlckit.ir.node import Node
from mlckit.ir.structural import structural_equal, structural_hash
from mlckit.tir.function import PrimFunc

from .analysis.struct_info import describe_struct_info, erase_to_well_defined, statically_compatible
from .analysis.well_formed import definable_tir_vars
from .expr import (
    DataflowVar,
    Expr,
    Function,
    MatchCast,
    SeqExpr,
    Var,
)
from .normalizer import BlockBuilderError, Normalizer
from .struct_info import FuncStructInfo, ObjectStructInfo, StructInfo


class FunctionScope:
    """What ``bb.function(...)`` returns: a ``with`` scope building one Relax function."""

    def __init__(self, block_builder: BlockBuilder, name: str, params: list | None,
                 attrs: dict, is_pure: bool):
        self._bb = block_builder
        self._name = name
        self._params = params
        self._attrs = attrs
        self._is_pure = is_pure
        self._blocks: list = []  # the binding blocks finished so far
        self._is_emit_func_output_called = False
        self._depths = (0, 0)

    def __enter__(self):
        self._bb._enter_function_scope(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self._bb._exit_function_scope(self, exc_type)
        return False


class DataflowScope:
    """What ``bb.dataflow()`` returns: a ``with`` scope building one dataflow block."""

    def __init__(self, block_builder: BlockBuilder):
        self._bb = block_builder

    def __enter__(self):
        self._bb._enter_dataflow_scope()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self._bb._exit_dataflow_scope(exc_type)
        return False


class BlockBuilder(Normalizer):
    """Build Relax IR step by step (TVM's ``relax.BlockBuilder``); see the module doc.

    ``BlockBuilder(mod)`` starts from a copy of ``mod`` (the module passed in is never
    changed); ``get()`` returns the module built so far.

    >>> from mlckit import relax
    >>> from mlckit.relax import analysis
    >>> from mlckit.script import relax as R
    >>> x = relax.Var("x", relax.TensorStructInfo([2, 4], "float32"))
    >>> bb = relax.BlockBuilder()
    >>> with bb.function("main", [x]):
    ...     with bb.dataflow():
    ...         y = bb.emit(R.add(x, x))
    ...         out = bb.emit_output(R.nn.relu(y))
    ...     _ = bb.emit_func_output(out)
    >>> bb.get()["main"].ret_struct_info
    R.Tensor((2, 4), dtype="float32")
    """

    _stack: ClassVar[list[BlockBuilder]] = []

    def __init__(self, mod: IRModule | None = None):
        super().__init__()
        if mod is not None and not isinstance(mod, IRModule):
            raise TVMTypeError(f"BlockBuilder(mod) expects an IRModule, got {type(mod).__name__}")
        self._mod = IRModule() if mod is None else mod.copy()
        self._func_stack: list[FunctionScope] = []
        self._names: dict[str, int] = {}
        self._dedup: dict[int, list] | None = None  # structural hash -> [[func, [gvs]]]

    @staticmethod
    def current() -> BlockBuilder | None:
        """The builder whose ``function`` scope is innermost, or None."""
        return BlockBuilder._stack[-1] if BlockBuilder._stack else None

    # -- functions ------------------------------------------------------------------------
    def function(self, name: str, params: Var | list | tuple | None = None,
                 attrs: dict | None = None, pure: bool = True,
                 private: bool = False) -> FunctionScope:
        """A ``with`` scope building the Relax function ``name``.

        ``params`` may be given here or to ``emit_func_output``; a public function (not
        ``private``) gets the ``global_symbol`` attribute ``name``::

            with bb.function("main", [x]):
                ...
                bb.emit_func_output(out)
        """
        if not isinstance(name, str):
            raise TVMTypeError(f"bb.function expects the function name (a str) first, got "
                               f"{type(name).__name__}; write bb.function(\"main\", params)")
        params = self._check_params(params, "bb.function")
        attrs = dict(attrs or {})
        if not private:
            attrs["global_symbol"] = name
        return FunctionScope(self, name, params, attrs, pure)

    @staticmethod
    def _check_params(params, what: str) -> list | None:
        if params is None:
            return None
        if isinstance(params, Var):
            return [params]
        if not isinstance(params, (list, tuple)):
            raise TVMTypeError(f"{what}: the parameters must be a relax.Var or a list of them, "
                               f"got {type(params).__name__}")
        for p in params:
            if not isinstance(p, Var):
                raise TVMTypeError(f"{what}: each function parameter must be a relax.Var, but "
                                   f"got {type(p).__name__} {p!r}")
            if isinstance(p, DataflowVar):
                raise TVMTypeError(f"{what}: parameter {p.name_hint!r} is a DataflowVar; "
                                   "function parameters are relax.Var")
        return list(params)

    def _enter_function_scope(self, scope: FunctionScope) -> None:
        if self._func_stack:
            raise BlockBuilderError(
                f"bb.function({scope._name!r}) inside bb.function({self._func_stack[-1]._name!r}):"
                " a BlockBuilder builds one function at a time; build the inner function with "
                "another BlockBuilder and add it with bb.add_func")
        scope._depths = (len(self._block_stack), len(self._scope_stack))
        BlockBuilder._stack.append(self)
        self._func_stack.append(scope)
        self.begin_scope(scope._params)
        self._begin_binding_block()

    def _exit_function_scope(self, scope: FunctionScope, exc_type) -> None:
        self._func_stack.pop()
        if BlockBuilder._stack and BlockBuilder._stack[-1] is self:
            BlockBuilder._stack.pop()
        blocks, scopes = scope._depths  # recover the state, also after an error
        del self._block_stack[blocks:]
        del self._scope_stack[scopes:]
        del self._scope_keep[scopes:]
        if exc_type is None and not scope._is_emit_func_output_called:
            raise BlockBuilderError(
                f"function {scope._name!r} has no output: call bb.emit_func_output(value) "
                "(once) before the end of `with bb.function(...)`")

    def _current_function(self, what: str) -> FunctionScope:
        if not self._func_stack:
            raise BlockBuilderError(f"{what} must be called inside `with bb.function(name, "
                                    "params):`")
        return self._func_stack[-1]

    def emit_func_output(self, output: Any, params: Var | list | tuple | None = None) -> GlobalVar:
        """End the function being built with ``output`` (an expression or a list of them)
        and add it to the module; returns its GlobalVar.

        ``params`` are given here when ``bb.function`` did not receive them::

            bb.emit_func_output(R, params=[A, B])
        """
        scope = self._current_function("emit_func_output")
        if scope._is_emit_func_output_called:
            raise BlockBuilderError(f"emit_func_output is called twice in function "
                                    f"{scope._name!r}: a function has exactly one output")
        if self._block_stack and self._block_stack[-1].is_dataflow:
            raise BlockBuilderError(
                "emit_func_output inside `with bb.dataflow():`: mark the block's results with "
                "bb.emit_output(...) and call emit_func_output after the dataflow block")
        scope._is_emit_func_output_called = True
        params = self._check_params(params, "emit_func_output")
        if scope._params is not None and params is not None:
            raise BlockBuilderError(
                f"the parameters of function {scope._name!r} are given twice: to bb.function "
                "and to emit_func_output; give them once")
        if scope._params is None and params is None:
            raise BlockBuilderError(
                f"function {scope._name!r} has no parameters: give them to "
                f"bb.function({scope._name!r}, params) or to emit_func_output(output, params) "
                "(use [] for a function without parameters)")
        if scope._params is None:
            scope._params = params
        if BlockBuilder.current() is not self:
            raise BlockBuilderError("emit_func_output of a builder that is not "
                                    "BlockBuilder.current()")
        output = self._as_expr(output)
        block = self._end_block()
        if block.bindings:
            scope._blocks.append(block)
        self.begin_scope(scope._params)
        try:
            seq = self.normalize(SeqExpr(scope._blocks, output))
        finally:
            self.end_scope()
        defined = {id(v) for p in scope._params for v in definable_tir_vars(p.struct_info)}
        ret = erase_to_well_defined(seq.body.struct_info, defined)
        func = Function(scope._params, seq, ret, scope._is_pure, scope._attrs)
        return self.add_func(func, scope._name)

    # -- blocks ---------------------------------------------------------------------------
    def dataflow(self) -> DataflowScope:
        """A ``with`` scope building a dataflow block: ``emit`` binds DataflowVars there,
        ``emit_output`` the variables visible after the block::

            with bb.dataflow():
                lv = bb.emit(call)
                gv = bb.emit_output(lv)
        """
        return DataflowScope(self)

    def _enter_dataflow_scope(self) -> None:
        scope = self._current_function("bb.dataflow()")
        if scope._is_emit_func_output_called:
            raise BlockBuilderError("bb.dataflow() after emit_func_output: the function is "
                                    "complete")
        block = self._current_block("open a dataflow block")
        if block.is_dataflow:
            raise BlockBuilderError("bb.dataflow() inside bb.dataflow(): dataflow blocks do not "
                                    "nest")
        block = self._end_block()
        if block.bindings:
            scope._blocks.append(block)
        self._begin_dataflow_block()

    def _exit_dataflow_scope(self, exc_type) -> None:
        if not self._func_stack or not self._block_stack:
            return  # the function scope failed and recovered already
        block = self._end_block()
        if block.bindings:
            self._func_stack[-1]._blocks.append(block)
        self._begin_binding_block()

    # -- emitting ---------------------------------------------------------------------------
    def emit(self, expr: Any, name_hint: str = "") -> Var:
        """Normalize ``expr``, bind it to a new variable and return the variable (a
        DataflowVar inside a dataflow block, a Var outside).

        Example::

            lv = bb.emit(relax.op.call_tir(gv, [x], relax.TensorStructInfo((1, 128), "float32")))
        """
        self._current_block("emit")
        value = self.normalize(expr)
        return self._bind(value, self._block_stack[-1].is_dataflow, name_hint)

    def emit_output(self, output: Any, name_hint: str = "") -> Var:
        """Bind ``output`` to a Var visible after the current dataflow block.

        Example::

            gv = bb.emit_output(lv1)
        """
        block = self._current_block("emit_output")
        if not block.is_dataflow:
            raise BlockBuilderError("emit_output must be called inside `with bb.dataflow():`; "
                                    "outside a dataflow block every bb.emit is already visible")
        value = self.normalize(output)
        return self._bind(value, False, name_hint)

    def match_cast(self, value: Expr, struct_info: StructInfo, name_hint: str = "") -> Var:
        """Bind ``value`` checked at run time against ``struct_info`` (``R.match_cast``).

        Example::

            n = tir.Var("n", "int64")
            lv = bb.match_cast(x, relax.TensorStructInfo((n, 784), "float32"))
        """
        block = self._current_block("match_cast")
        value = self.normalize(value)
        sinfo = _as_struct_info(struct_info, "match_cast")
        if not statically_compatible(sinfo, value.struct_info):
            raise BlockBuilderError(
                f"match_cast can never succeed: the value is "
                f"{describe_struct_info(value.struct_info)}, the target "
                f"{describe_struct_info(sinfo)}")
        var = self._new_var(block.is_dataflow, name_hint, sinfo)
        self._block_stack[-1].bindings.append(MatchCast(var, value, sinfo))
        return var

    def _new_var(self, is_dataflow: bool, name_hint: str, struct_info: StructInfo) -> Var:
        if not name_hint:
            name_hint = "lv" if is_dataflow else "gv"
        cls = DataflowVar if is_dataflow else Var
        return cls(self.get_unique_name(name_hint), struct_info)

    # -- tensor expressions -------------------------------------------------------------------
    def call_te(self, func: Callable, *args: Any, **kwargs: Any) -> Expr:
        """A ``R.call_tir`` of the PrimFunc made from the te function ``func``.

        Relax arguments (tensors, also inside lists, tuples and dicts) become
        ``te.placeholder``s of the same shape and dtype; ``func`` returns a te tensor or a
        list of them; ``te.create_prim_func(inputs + outputs)`` is added to the module
        under a unique name from ``primfunc_name_hint`` or ``func.__name__``::

            call = bb.call_te(te_matmul, A, B)
            lv = bb.emit(call)
        """
        from .op.base import call_tir
        from .utils import gen_call_tir_inputs

        primfunc_name = kwargs.pop("primfunc_name_hint", None)
        tir_func, call_args, out_sinfo, tir_vars = gen_call_tir_inputs(func, *args, **kwargs)
        if not primfunc_name:
            primfunc_name = getattr(func, "__name__", None) or "te_func"
        gvar = self.add_func(tir_func, primfunc_name)
        return call_tir(gvar, call_args, out_sinfo, tir_vars)

    def emit_te(self, func: Callable, *args: Any, **kwargs: Any) -> Var:
        """``bb.emit(bb.call_te(func, *args, **kwargs))``; ``name_hint=`` names the variable.

        Example::

            C = bb.emit_te(te_matmul, A, B)   # lv = R.call_tir(cls.te_matmul, (A, B), ...)
        """
        name_hint = kwargs.pop("name_hint", "")
        return self.emit(self.call_te(func, *args, **kwargs), name_hint=name_hint)

    # -- the module -------------------------------------------------------------------------
    def get(self) -> IRModule:
        """The IRModule built so far (a snapshot: later additions do not change it).

        Example::

            mod = bb.get(); mod["main"].show()
        """
        return self._mod.copy()

    def finalize(self) -> IRModule:
        """The IRModule, with GlobalVars renamed so that every public function is named
        after its ``global_symbol`` and names stay unique (TVM's NormalizeGlobalVar).

        Call it once, at the end: GlobalVars returned earlier may be replaced.
        """
        return _normalize_global_vars(self._mod)

    def get_unique_name(self, name_prefix: str) -> str:
        """A name not given before by this builder: ``lv``, ``lv1``, ``lv2`` … (dots become
        underscores), as TVM's name supply."""
        name = str(name_prefix).replace(".", "_")
        if name not in self._names:
            self._names[name] = 0
            return name
        candidate = name
        while candidate in self._names:
            self._names[name] += 1
            candidate = f"{name}{self._names[name]}"
        self._names[candidate] = 0
        return candidate

    def add_func(self, func: Any, func_name: str) -> GlobalVar:
        """Add a Relax function or a PrimFunc under a unique name derived from
        ``func_name`` and return its GlobalVar; a function structurally equal to one already
        in the module is not added twice (its GlobalVar is returned).

        Example::

            gv = bb.add_func(fused_fn, "fused_matmul_add0")
        """
        if not isinstance(func, (Function, PrimFunc)):
            raise TVMTypeError(f"add_func expects a relax.Function or a tir.PrimFunc, got "
                               f"{type(func).__name__}")
        if not isinstance(func_name, str):
            raise TVMTypeError(f"add_func: the name must be a str, got {type(func_name).__name__}")
        self._init_dedup()
        known = self._dedup_find(func)
        if known:
            return min(known, key=lambda gv: gv.name_hint)
        name = self.get_unique_name(func_name)
        while name in self._mod:
            name = self.get_unique_name(func_name)
        gvar = GlobalVar(name)
        gvar.struct_info_ = _func_struct_info(func)
        self._mod.functions[gvar] = func
        self._dedup_add(func, gvar)
        return gvar

    def update_func(self, gv: GlobalVar | str, updated_func: Any) -> None:
        """Replace the function of ``gv`` (or add it under ``gv`` when the module does not
        have it yet, as TVM does).

        Example::

            self.builder_.update_func(global_var, updated_func)
        """
        if isinstance(gv, str):
            if gv not in self._mod:
                names = ", ".join(sorted(g.name_hint for g in self._mod.functions)) or "none"
                raise TVMKeyError(f"update_func: the module has no function {gv!r} (it has: "
                                  f"{names}); pass the GlobalVar to add a new function")
            gv = self._mod.get_global_var(gv)
        if not isinstance(gv, GlobalVar):
            raise TVMTypeError(f"update_func expects a GlobalVar, got {type(gv).__name__}")
        if not isinstance(updated_func, (Function, PrimFunc)):
            raise TVMTypeError(f"update_func expects a relax.Function or a tir.PrimFunc, got "
                               f"{type(updated_func).__name__}")
        if self._dedup is not None and gv in self._mod.functions:
            self._dedup_remove(self._mod.functions[gv], gv)
        self._mod.functions[gv] = updated_func
        if getattr(gv, "struct_info_", None) is None:
            gv.struct_info_ = _func_struct_info(updated_func)
        if self._dedup is not None:
            self._dedup_add(updated_func, gv)

    # -- de-duplication ------------------------------------------------------------------------
    def _init_dedup(self) -> None:
        if self._dedup is None:
            self._dedup = {}
            for gv, func in self._mod.functions.items():
                self._dedup_add(func, gv)

    def _dedup_find(self, func) -> list:
        for entry in self._dedup.get(_hash(func), []):
            if entry[0] is func or structural_equal(entry[0], func):
                return entry[1]
        return []

    def _dedup_add(self, func, gv: GlobalVar) -> None:
        bucket = self._dedup.setdefault(_hash(func), [])
        for entry in bucket:
            if entry[0] is func or structural_equal(entry[0], func):
                entry[1].append(gv)
                return
        bucket.append([func, [gv]])

    def _dedup_remove(self, func, gv: GlobalVar) -> None:
        bucket = self._dedup.get(_hash(func), [])
        for entry in bucket:
            if any(g is gv for g in entry[1]):
                entry[1][:] = [g for g in entry[1] if g is not gv]
                if not entry[1]:
                    bucket.remove(entry)
                return


def _hash(func) -> int:
    try:
        return structural_hash(func)
    except Exception:  # noqa: BLE001 - an unhashable attribute: fall back to one bucket
        return hash(type(func).__name__)


def _as_struct_info(value: Any, what: str) -> StructInfo:
    if isinstance(value, StructInfo):
        return value
    as_sinfo = getattr(value, "as_struct_info", None)
    if as_sinfo is not None:
        return as_sinfo()
    raise TVMTypeError(f"{what} expects a StructInfo such as relax.TensorStructInfo((n, 784), "
                       f"\"float32\"), got {type(value).__name__}")


def _func_struct_info(func) -> StructInfo:
    """The struct info a GlobalVar of ``func`` carries: a Relax function's signature; an
    opaque callable for a PrimFunc (called through ``R.call_tir``)."""
    if isinstance(func, Function):
        return func.struct_info
    return FuncStructInfo.opaque_func(ObjectStructInfo(), purity=True)


def _normalize_global_vars(mod: IRModule) -> IRModule:
    """Rename GlobalVars so each public function carries its ``global_symbol`` as its name;
    private functions in the way move to fresh names."""
    funcs = list(mod.functions.items())
    symbols = {f.attrs.get("global_symbol") for _, f in funcs if f.attrs.get("global_symbol")}
    kept = set(symbols) | {gv.name_hint for gv, f in funcs
                           if not f.attrs.get("global_symbol") and gv.name_hint not in symbols}
    mapping: dict[int, GlobalVar] = {}
    for gv, func in funcs:
        symbol = func.attrs.get("global_symbol")
        if symbol and symbol != gv.name_hint:
            new = GlobalVar(symbol)
        elif not symbol and gv.name_hint in symbols:
            i = 1
            while f"{gv.name_hint}{i}" in kept:
                i += 1
            new = GlobalVar(f"{gv.name_hint}{i}")
            kept.add(new.name_hint)
        else:
            continue
        if getattr(gv, "struct_info_", None) is not None:
            new.struct_info_ = gv.struct_info_
        mapping[id(gv)] = new
    if not mapping:
        return mod.copy()
    out = IRModule({}, dict(mod.attrs), dict(mod.global_infos))
    for gv, func in funcs:
        if isinstance(func, Function):
            func = _replace_global_vars(func, mapping)
        out.functions[mapping.get(id(gv), gv)] = func
    return out


def _replace_global_vars(obj: Any, mapping: dict) -> Any:
    """``obj`` with GlobalVars replaced by ``mapping[id(gv)]`` (relax Vars are kept as they
    are: they are defined once and used by identity)."""
    if isinstance(obj, GlobalVar):
        return mapping.get(id(obj), obj)
    if isinstance(obj, (Var, StructInfo)):
        return obj
    if isinstance(obj, Node):
        changes = {}
        for name in type(obj).field_names():
            old = getattr(obj, name)
            new = _replace_global_vars(old, mapping)
            if new is not old:
                changes[name] = new
        if not changes:
            return obj
        new_obj = obj.replace(**changes)
        if "struct_info_" in obj.__dict__:
            new_obj.__dict__["struct_info_"] = obj.__dict__["struct_info_"]
        return new_obj
    if isinstance(obj, list):
        new = [_replace_global_vars(x, mapping) for x in obj]
        return new if any(a is not b for a, b in zip(new, obj)) else obj
    if isinstance(obj, tuple):
        new = tuple(_replace_global_vars(x, mapping) for x in obj)
        return new if any(a is not b for a, b in zip(new, obj)) else obj
    return obj


__all__ = ["BlockBuilder", "BlockBuilderError", "DataflowScope", "FunctionScope"]
