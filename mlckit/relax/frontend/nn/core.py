"""The pieces of a model: ``Tensor``, ``Parameter``, ``Module`` and its containers
(TVM's ``relax.frontend.nn`` core).

A model is a tree of ``Module``s holding ``Parameter``s.  Nothing here computes: calling a
module while ``export_tvm`` traces it emits Relax bindings into the function being built,
and an ``nn.Tensor`` is only a handle on the Relax variable bound there (its shape and dtype
are known at once, from struct-info inference).

Example::

    class MLP(nn.Module):
        def __init__(self):
            self.fc1 = nn.Linear(784, 256)
            self.fc2 = nn.Linear(256, 10)

        def forward(self, x):
            return self.fc2(nn.op.relu(self.fc1(x)))

    mod, params = MLP().export_tvm({"forward": {"x": nn.spec.Tensor(("n", 784), "float32")}})
    [name for name, _ in params]    # ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias']
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from mlckit import tir
from mlckit.error import TVMError, TVMTypeError, TVMValueError

from ... import expr as rx
from ...block_builder import BlockBuilder
from ...struct_info import ObjectStructInfo, TensorStructInfo, TupleStructInfo
from ._tensor_op import _TensorOperators

_DEFAULT_DTYPE = "float32"


class NotTracingError(TVMError):
    """An ``nn`` layer or operator used outside ``export_tvm``: nn.Modules only trace.

    >>> from mlckit.relax.frontend import nn
    >>> x = nn.Tensor.placeholder([2], "float32", name="x")
    >>> try:
    ...     nn.op.relu(x)
    ... except nn.NotTracingError as err:
    ...     print(str(err)[:56])
    nn operator 'relu' is used outside export_tvm: nn.Module
    """


def get_default_dtype() -> str:
    """The dtype of parameters created without one (``"float32"`` unless changed).

    >>> from mlckit.relax.frontend import nn
    >>> nn.get_default_dtype()
    'float32'
    """
    return _DEFAULT_DTYPE


def set_default_dtype(dtype: str) -> None:
    """Change the dtype of parameters created without one: ``set_default_dtype("float16")``.

    >>> from mlckit.relax.frontend import nn
    >>> nn.set_default_dtype("float16")
    >>> nn.Linear(2, 2).weight.dtype
    'float16'
    >>> nn.set_default_dtype("float32")
    """
    global _DEFAULT_DTYPE  # noqa: PLW0603 - TVM's process-wide setting
    _DEFAULT_DTYPE = str(dtype)


def _shape_text(shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


# -- tracing: which layer is running -----------------------------------------------------------
class _Trace(threading.local):
    """The names of the modules of the model being exported (by ``id``), for errors."""

    def __init__(self):
        self.names: dict[int, str] = {}


_TRACE = _Trace()


@contextlib.contextmanager
def tracing(root: Module):
    """Name every submodule of ``root`` by its attribute path while a method is exported."""
    saved = _TRACE.names
    _TRACE.names = {id(m): name for name, m in _named_modules(root, "")}
    try:
        yield
    finally:
        _TRACE.names = saved


def _layer_description(module: Module, args: tuple, kwargs: dict) -> str:
    name = _TRACE.names.get(id(module), "") or "the model"
    shown = [_describe_value(a) for a in args]
    shown += [f"{k}={_describe_value(v)}" for k, v in kwargs.items()]
    return f"layer {name} ({type(module).__name__}) called with ({', '.join(shown)})"


def _describe_value(value: Any) -> str:
    if isinstance(value, Tensor):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_describe_value(v) for v in value) + "]"
    return type(value).__name__ if not isinstance(value, (int, float, str)) else repr(value)


def _require_builder(what: str) -> BlockBuilder:
    bb = BlockBuilder.current()
    if bb is None:
        raise NotTracingError(
            f"{what} is used outside export_tvm: nn.Module layers and nn.op operators only "
            "record Relax IR while a model is exported; export it with "
            "model.export_tvm({'forward': {'x': nn.spec.Tensor(shape, dtype)}}), then compile "
            "the IRModule (tvm.compile / relax.build) and run it with relax.VirtualMachine")
    return bb


# -- tensors ------------------------------------------------------------------------------------
class Tensor(_TensorOperators):
    """A symbolic tensor while a model is traced: a handle on a Relax expression whose
    struct info gives the shape and dtype.  Users get them from ``export_tvm`` (the inputs)
    and from operators; ``Tensor.placeholder`` describes an external function's output.

    Example::

        x.shape     # [n, 784]  (ints, or tir.Var for symbolic dims)
        x.dtype     # 'float32'
        y = x * 2.0 + x
    """

    def __init__(self, *, _expr: rx.Expr) -> None:
        sinfo = _struct_info(_expr)
        if not isinstance(sinfo, TensorStructInfo) or sinfo.dims is None:
            raise TVMTypeError(
                f"nn.Tensor needs a Relax expression whose struct info is a tensor of known "
                f"shape, got {type(_expr).__name__} with struct info {sinfo!r}")
        self._expr = _expr

    @staticmethod
    def from_const(data) -> Tensor:
        """A constant tensor from NumPy data: ``Tensor.from_const(np.ones((2, 2), "float32"))``."""
        return Tensor(_expr=rx.const(data))

    @staticmethod
    def from_scalar(data: int | float, dtype: str) -> Tensor:
        """A scalar constant of ``dtype``: ``Tensor.from_scalar(0.5, "float32")``."""
        return Tensor(_expr=rx.const(data, dtype=dtype))

    @staticmethod
    def from_struct_info(struct_info: TensorStructInfo, name: str = "tensor") -> Tensor:
        """A tensor variable of the given struct info."""
        return Tensor(_expr=rx.Var(name, struct_info))

    @staticmethod
    def placeholder(shape: Sequence, dtype: str, name: str = "tensor") -> Tensor:
        """A tensor variable of ``shape`` (ints, names of symbolic dims, or int64 PrimExprs)
        and ``dtype``; used to give the output of ``nn.extern``/``nn.tensor_ir_op``::

            out = nn.Tensor.placeholder((n, 128), "float32")
        """
        return Tensor(_expr=rx.Var(name, TensorStructInfo(_as_shape(shape), dtype)))

    @property
    def shape(self) -> list:
        """The dims: Python ints where known, PrimExprs (e.g. ``tir.Var("n")``) otherwise."""
        return [d.value if isinstance(d, tir.IntImm) else d
                for d in _struct_info(self._expr).dims]

    @property
    def ndim(self) -> int:
        """The number of dims."""
        return _struct_info(self._expr).ndim

    @property
    def dtype(self) -> str:
        """The element type, e.g. ``"float32"``."""
        return _struct_info(self._expr).dtype

    def __repr__(self) -> str:
        return f'Tensor({_shape_text(self.shape)}, "{self.dtype}")'


def _struct_info(expr):
    """The struct info of ``expr`` (inferred for a constant), or None."""
    try:
        return expr.struct_info
    except (AttributeError, TVMError):
        return None


def _as_shape(shape: Sequence) -> list:
    if isinstance(shape, (int, str)):
        shape = [shape]
    dims = []
    for d in shape:
        if isinstance(d, tir.IntImm):
            d = int(d.value)
        if isinstance(d, bool) or not isinstance(d, (int, str, tir.PrimExpr)):
            raise TVMTypeError(f"shape {list(shape)!r}: each dim must be an int, the name of a "
                               f"symbolic dim (a str) or an int64 PrimExpr, got "
                               f"{type(d).__name__} {d!r}")
        if isinstance(d, int) and d < 0:
            raise TVMValueError(f"shape {list(shape)!r}: dim {d} is negative")
        if isinstance(d, str):
            d = tir.Var(d, "int64")
        elif isinstance(d, tir.PrimExpr) and d.dtype != "int64":
            raise TVMTypeError(f"shape {list(shape)!r}: the dim {d} is {d.dtype}; shape dims "
                               "are int64")
        dims.append(d)
    return dims


class Parameter(Tensor):
    """A weight of a layer: a tensor of known shape and dtype, bound to concrete data
    (``param.data = np_array``) or not.  ``export_tvm`` makes each one a parameter of the
    exported functions, named by its attribute path (``fc1.weight``).

    Example::

        self.weight = nn.Parameter((out_features, in_features))   # default dtype float32
    """

    def __init__(self, shape: Sequence, dtype: str | None = None) -> None:
        dtype = get_default_dtype() if dtype is None else dtype
        super().__init__(_expr=Tensor.placeholder(shape, dtype, "param")._expr)
        self._data = None
        self.attrs: dict[str, Any] = OrderedDict()

    @property
    def data(self):
        """The bound data (an NDArray) or None."""
        return self._data

    @data.setter
    def data(self, data) -> None:
        from mlckit.runtime import ndarray

        if data is None:
            self._data = None
            return
        if isinstance(data, np.ndarray):
            data = ndarray.array(data)
        elif not isinstance(data, ndarray.NDArray):
            if not hasattr(data, "__dlpack__"):
                raise TVMTypeError(f"Parameter.data takes a NumPy array, an NDArray or a DLPack "
                                   f"tensor, got {type(data).__name__}")
            data = ndarray.from_dlpack(data)
        if tuple(data.shape) != tuple(self.shape):
            raise TVMValueError(f"Parameter {self!r}: the data has shape {tuple(data.shape)}, "
                                f"expected {tuple(self.shape)}")
        if str(data.dtype) != self.dtype:
            raise TVMValueError(f"Parameter {self!r}: the data has dtype {data.dtype}, "
                                f"expected {self.dtype}")
        self._data = data

    def to(self, dtype: str | None = None) -> None:
        """Change the dtype of a parameter not bound to data."""
        if dtype is None:
            return
        if self._data is not None:
            raise TVMValueError(f"Parameter {self!r} is bound to data; changing its dtype to "
                                f"{dtype} would convert the data: unbind it first "
                                "(param.data = None)")
        self._expr = Tensor.placeholder(self.shape, dtype, "param")._expr


class Object:
    """A non-tensor value of a traced model (e.g. a KV cache handle): a Relax expression
    whose struct info is ``R.Object``.

    Made while tracing, as the value of a packed call that returns an object::

        cache = nn.op.extern("vm.builtin.attention_kv_cache_create", [...], out=...)
    """

    def __init__(self, *, _expr: rx.Expr, _name: str) -> None:
        if not isinstance(_expr, rx.Var):
            _expr = _require_builder("nn.Object").emit(_expr, _name)
        if not isinstance(_struct_info(_expr), ObjectStructInfo):
            raise TVMTypeError(f"nn.Object {_name!r} needs struct info R.Object, got "
                               f"{_struct_info(_expr)!r}")
        self._expr = _expr


class Effect:
    """A side effect threaded through the exported functions as extra inputs and outputs
    (``IOEffect`` for printing in ``debug`` mode).  Subclasses implement:
    ``emit_init(name, bb)`` (its initial values, in ``_initialize_effect``),
    ``create(name)`` (the function inputs), ``set_state(vars)`` and ``finalize()`` (the
    outputs).

    >>> from mlckit.relax.frontend import nn
    >>> issubclass(nn.IOEffect, nn.Effect)
    True
    """

    def emit_init(self, name_hint: str, builder: BlockBuilder) -> list:
        raise NotImplementedError

    def create(self, name_hint: str) -> list:
        raise NotImplementedError

    def set_state(self, state_vars: list) -> None:
        raise NotImplementedError

    def finalize(self) -> list:
        raise NotImplementedError

    def to(self, dtype: str | None = None) -> None:
        """Most effects have no dtype: nothing to do."""


# -- modules ------------------------------------------------------------------------------------
class Module:
    """The base of layers and models: subclass it, assign ``Parameter``s and sub-modules as
    attributes in ``__init__`` and write ``forward``.  See the module doc for an example.

    >>> from mlckit.relax.frontend import nn
    >>> class MLP(nn.Module):
    ...     def __init__(self):
    ...         self.fc1 = nn.Linear(4, 8)
    ...         self.fc2 = nn.Linear(8, 2)
    ...     def forward(self, x):
    ...         return self.fc2(nn.op.relu(self.fc1(x)))
    >>> mod, params = MLP().export_tvm({"forward": {"x": nn.spec.Tensor([1, 4], "float32")}})
    >>> [name for name, _ in params]
    ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias']
    >>> mod["forward"].ret_struct_info
    R.Tensor((1, 2), dtype="float32")
    """

    def named_parameters(self, prefix: str = "") -> Iterator[tuple[str, Parameter]]:
        """``(name, parameter)`` pairs in attribute order, names as paths (``fc1.weight``)."""
        yield from _find_attributes(self, prefix, lambda x: isinstance(x, Parameter))

    def parameters(self) -> Iterator[Parameter]:
        """The parameters, in the order of ``named_parameters``."""
        for _, param in self.named_parameters():
            yield param

    def state_dict(self, *, prefix: str = "", destination: dict | None = None) -> dict:
        """An ordered ``{name: parameter}`` of every parameter."""
        destination = OrderedDict() if destination is None else destination
        destination.update(self.named_parameters(prefix))
        return destination

    def load_state_dict(self, state_dict: dict, strict: bool = True) -> tuple[list, list]:
        """Bind this model's parameters to the data of ``state_dict``'s parameters (matched
        by name); returns ``(missing_keys, unexpected_keys)``, an error if ``strict`` and
        either is not empty."""
        own = self.state_dict()
        unexpected = []
        for key, value in state_dict.items():
            if key not in own:
                unexpected.append(key)
                continue
            data = getattr(value, "data", None)
            if data is None:
                raise TVMValueError(f"load_state_dict: parameter {key!r} has no data")
            own.pop(key).data = data
        missing = list(own)
        if strict and (missing or unexpected):
            raise TVMValueError(f"load_state_dict: missing keys {missing}, unexpected keys "
                                f"{unexpected}")
        return missing, unexpected

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run ``forward`` inside the trace (only while ``export_tvm`` builds the IR)."""
        forward = getattr(self, "forward", None)
        if forward is None:
            raise TVMTypeError(f"{type(self).__name__} has no forward method to call")
        _require_builder(f"{type(self).__name__} (an nn.Module)")
        with _layer_scope(self, args, kwargs):
            return forward(*args, **kwargs)

    def to(self, dtype: str | None = None) -> None:
        """Change the dtype of every parameter (and sub-module) of this module."""
        for item in self.__dict__.values():
            if callable(getattr(item, "to", None)):
                item.to(dtype=dtype)
        if dtype is not None and isinstance(getattr(self, "dtype", None), str):
            self.dtype = dtype

    def export_tvm(self, spec, debug: bool = False, allow_extern: bool = False):
        """Trace the methods named in ``spec`` into a Relax IRModule.

        ``spec`` maps each method name to ``{argument: nn.spec.Tensor(shape, dtype) |
        nn.spec.Int() | ...}``; returns ``(mod, params)``, ``params`` the ``(name,
        Parameter)`` pairs in the order the functions take them after the inputs.  With
        ``debug=True`` the functions also take and return the IO effect (``_io``) and an
        ``_initialize_effect`` function creates it.

        Example::

            mod, params = model.export_tvm(
                {"forward": {"x": nn.spec.Tensor(("n", 784), "float32")}})
        """
        from . import spec as _spec
        from .exporter import Exporter

        module_spec = _spec.ModuleSpec.from_raw(spec, self)
        mod, params, ext_mods = Exporter(debug=debug).build(module_spec)
        if allow_extern:
            return mod, params, ext_mods
        return mod, params


class ModuleList(Module):
    """Sub-modules in a list, named ``0``, ``1``, … in parameter names
    (``layers.0.weight``); calling it feeds each module's output to the next.

    >>> from mlckit.relax.frontend import nn
    >>> layers = nn.ModuleList([nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2)])
    >>> len(layers), [n for n, _ in layers.named_parameters()]
    (3, ['0.weight', '0.bias', '2.weight', '2.bias'])
    """

    def __init__(self, modules: list):
        self.modules = list(modules)

    def __iter__(self):
        return iter(self.modules)

    def __getitem__(self, idx: int) -> Module:
        return self.modules[idx]

    def __setitem__(self, idx: int, module: Module) -> None:
        self.modules[idx] = module

    def __len__(self) -> int:
        return len(self.modules)

    def append(self, module: Module) -> None:
        """Add ``module`` at the end."""
        self.modules.append(module)

    def to(self, dtype: str | None = None) -> None:
        for module in self.modules:
            module.to(dtype=dtype)

    def forward(self, x):
        """Each module in turn: ``x = module(x)``."""
        for module in self.modules:
            x = module(x)
        return x


class ModuleDict(Module):
    """Sub-modules by name, named ``<key>`` in parameter names (``blocks.attn.weight``).

    >>> from mlckit.relax.frontend import nn
    >>> blocks = nn.ModuleDict({"up": nn.Linear(4, 8), "down": nn.Linear(8, 4)})
    >>> [n for n, _ in blocks.named_parameters()]
    ['up.weight', 'up.bias', 'down.weight', 'down.bias']
    """

    def __init__(self, modules: dict | None = None):
        self.modules = OrderedDict(modules or {})

    def __iter__(self):
        return iter(self.modules.values())

    def __getitem__(self, key: str) -> Module:
        return self.modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.modules[key] = module

    def __len__(self) -> int:
        return len(self.modules)

    def __contains__(self, key: str) -> bool:
        return key in self.modules

    def keys(self):
        return self.modules.keys()

    def values(self):
        return self.modules.values()

    def items(self):
        return self.modules.items()

    def get(self, key: str, default: Module | None = None) -> Module | None:
        return self.modules.get(key, default)

    def update(self, modules: dict) -> None:
        self.modules.update(modules)

    def pop(self, key: str) -> Module:
        return self.modules.pop(key)

    def clear(self) -> None:
        self.modules.clear()

    def to(self, dtype: str | None = None) -> None:
        for module in self.modules.values():
            module.to(dtype=dtype)


@contextlib.contextmanager
def _layer_scope(module: Module, args: tuple, kwargs: dict):
    try:
        yield
    except TVMError as err:
        # the innermost layer names the failure; outer layers leave it as it is
        if not hasattr(err, "_nn_layer"):
            err._nn_layer = _layer_description(module, args, kwargs)
        raise


def wrap_nested(expr: rx.Expr, name: str):
    """Bind ``expr`` in the function being traced (named ``name``) and wrap the result: an
    ``nn.Tensor``, or a tuple of them (``name.0``, ``name.1``…) for a tuple value."""
    bb = _require_builder(f"nn operator {name!r}")
    value = expr
    if not isinstance(expr, rx.DataflowVar):
        expr = bb.emit(expr, name)
    sinfo = _struct_info(expr)
    if isinstance(sinfo, TensorStructInfo):
        if sinfo.dims is None:
            raise TVMValueError(_unknown_shape_message(name, value, sinfo))
        return Tensor(_expr=expr)
    if isinstance(sinfo, TupleStructInfo):
        return tuple(wrap_nested(rx.TupleGetItem(expr, i), f"{name}.{i}")
                     for i in range(len(sinfo.fields)))
    raise TVMTypeError(f"nn operator {name!r} produced a value of struct info {sinfo!r}; an "
                       "nn operator returns tensors or tuples of tensors")


def _unknown_shape_message(name: str, value, sinfo) -> str:
    inputs = [_struct_info(a) for a in getattr(value, "args", [])]
    shown = ", ".join(repr(Tensor(_expr=a)) if isinstance(i, TensorStructInfo) and
                      i.dims is not None else repr(i)
                      for a, i in zip(getattr(value, "args", []), inputs))
    return (f"nn operator {name!r}: the shape of its result is not known when the model is "
            f"exported (only {sinfo!r}) from its inputs ({shown}); an nn.Tensor needs a known "
            "shape. Different symbolic dims (e.g. 'n' and 'm') cannot be broadcast together: "
            "give equal dims the same name in the spec")


# -- walking the module tree --------------------------------------------------------------------
def _children(root: Module, prefix: str) -> Iterator[tuple[str, Any]]:
    """``(path, attribute)`` of ``root``'s direct members, containers seen through."""
    if isinstance(root, ModuleList):
        for i, item in enumerate(root):
            yield f"{prefix}{i}", item
        return
    if isinstance(root, ModuleDict):
        for key, item in root.items():
            yield f"{prefix}{key}", item
        return
    for name, item in root.__dict__.items():
        yield prefix + name, item


def _find_attributes(root: Module, prefix: str, wanted: Callable[[Any], bool]):
    """Every attribute in the module tree that ``wanted`` accepts, depth first in attribute
    order, with its dotted path (TVM's order: the order the attributes were assigned)."""
    for path, item in _children(root, prefix):
        if wanted(item):
            yield path, item
        elif isinstance(item, Module):
            yield from _find_attributes(item, path + ".", wanted)


def _named_modules(root: Module, prefix: str) -> Iterator[tuple[str, Module]]:
    yield prefix.rstrip("."), root
    for path, item in _children(root, prefix):
        if isinstance(item, Module):
            yield from _named_modules(item, path + ".")


__all__ = ["Effect", "Module", "ModuleDict", "ModuleList", "NotTracingError", "Object",
           "Parameter", "Tensor", "get_default_dtype", "set_default_dtype", "wrap_nested"]
