"""What the exported functions take: one spec per argument of each exported method
(TVM's ``relax.frontend.nn.spec``).

Example::

    spec = {"forward": {"x": nn.spec.Tensor(("n", 784), "float32")}}   # "n": symbolic dim
    spec = {"decode": {"ids": nn.spec.Tensor([1, 1], "int32"), "total_len": nn.spec.Int()}}

``"$": {"param_mode": ..., "effect_mode": ...}`` inside a method's dict chooses how
parameters and effects are passed: ``"plain"`` (one function parameter each, the default),
``"packed"`` (one tuple) or ``"none"``.
"""

from __future__ import annotations

import inspect
from typing import Any

from mlckit.error import TVMTypeError, TVMValueError


class Int:
    """A scalar integer argument: the function takes it as a shape ``R.Shape([name])``."""

    def __repr__(self) -> str:
        return "int"


class Tensor:
    """A tensor argument of fixed rank and dtype; a dim is an int or the name of a
    symbolic dim (the same name means the same dim across the method's arguments)."""

    def __init__(self, shape, dtype: str) -> None:
        if isinstance(shape, (int, str)):
            shape = [shape]
        self.shape = list(shape)
        for d in self.shape:
            if isinstance(d, bool) or not isinstance(d, (int, str)):
                raise TVMTypeError(f"nn.spec.Tensor({shape!r}, {dtype!r}): each dim is an int "
                                   f"or the name of a symbolic dim, got {type(d).__name__} {d!r}")
        self.dtype = str(dtype)

    def __repr__(self) -> str:
        return f"Tensor([{', '.join(str(d) for d in self.shape)}], '{self.dtype}')"


class Object:
    """An opaque non-tensor argument, given to the method as ``object_type``."""

    def __init__(self, object_type: type) -> None:
        self.object_type = object_type

    def __repr__(self) -> str:
        return "object"


class Tuple:
    """A tuple (or list) argument: one spec per element."""

    def __init__(self, name: str, elements) -> None:
        if not isinstance(elements, (tuple, list)):
            raise TVMTypeError(f"nn.spec.Tuple {name!r}: elements must be a tuple or list, got "
                               f"{type(elements).__name__}")
        self.name = name
        self.elements = elements

    def __repr__(self) -> str:
        return repr(self.elements)


_MODES = ("plain", "packed", "none")


class MethodSpec:
    """The spec of one exported method: its argument names and specs and how parameters
    and effects are passed."""

    def __init__(self, method, arg_names: list, arg_specs: list, param_mode: str = "plain",
                 effect_mode: str = "plain"):
        for what, mode in (("param_mode", param_mode), ("effect_mode", effect_mode)):
            if mode not in _MODES:
                raise TVMValueError(f"{what}={mode!r}: expected one of {list(_MODES)}")
        self.method = method
        self.arg_names = list(arg_names)
        self.arg_specs = list(arg_specs)
        self.param_mode = param_mode
        self.effect_mode = effect_mode

    def _repr(self, name: str) -> str:
        args = ", ".join(f"{n}: {s}" for n, s in zip(self.arg_names, self.arg_specs))
        return f"{name}({args})"

    def __repr__(self) -> str:
        return self._repr("MethodSpec")

    @staticmethod
    def from_raw(spec, method, method_name: str = "") -> MethodSpec:
        """A MethodSpec from ``{argument name: spec}``; every argument of ``method`` without
        a default needs one, and every name in ``spec`` must be an argument."""
        if isinstance(spec, MethodSpec):
            return spec
        method_name = method_name or getattr(method, "__name__", "method")
        owner = type(getattr(method, "__self__", None)).__name__
        where = f"{owner}.{method_name}"
        if not isinstance(spec, dict):
            raise TVMTypeError(f"export_tvm: the spec of {where} must be a dict "
                               f"{{argument: nn.spec...}}, got {type(spec).__name__}")
        spec = dict(spec)
        config: dict[str, Any] = spec.pop("$", {})
        params = inspect.signature(method).parameters
        variadic = [n for n, p in params.items()
                    if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if variadic:
            raise TVMTypeError(f"export_tvm: {where} takes *{variadic[0]}; an exported method "
                               "needs named arguments, one spec each")
        unknown = [n for n in spec if n not in params]
        if unknown:
            raise TVMValueError(f"export_tvm: the spec of {where} names {unknown}, which "
                                f"{'is not an argument' if len(unknown) == 1 else 'are not arguments'}"
                                f" of {where}({', '.join(params)})")
        missing = [n for n, p in params.items() if n not in spec and p.default is p.empty]
        if missing:
            raise TVMValueError(
                f"export_tvm: no spec for argument {', '.join(repr(m) for m in missing)} of "
                f"{where}({', '.join(params)}): give each argument one, e.g. "
                f"{{{missing[0]!r}: nn.spec.Tensor(shape, dtype)}}")
        arg_names = [n for n in params if n in spec]
        arg_specs = [_convert(spec[n], n, where) for n in arg_names]
        return MethodSpec(method, arg_names, arg_specs,
                          param_mode=config.get("param_mode", "plain"),
                          effect_mode=config.get("effect_mode", "plain"))


def _convert(arg_spec, name: str, where: str):
    if arg_spec is Int or arg_spec is int or arg_spec == "int":
        return Int()
    if isinstance(arg_spec, (Int, Tensor, Object)):
        return arg_spec
    if isinstance(arg_spec, Tuple):
        return arg_spec
    if isinstance(arg_spec, (tuple, list)) and arg_spec and all(
            isinstance(d, (int, str)) and not isinstance(d, bool) for d in arg_spec):
        raise TVMTypeError(f"export_tvm: the spec of argument {name!r} of {where} is the "
                           f"{type(arg_spec).__name__} {arg_spec!r}; a tensor is specified with "
                           f"its dtype: nn.spec.Tensor({arg_spec!r}, \"float32\")")
    if isinstance(arg_spec, (tuple, list)):
        return Tuple(name, type(arg_spec)(_convert(s, f"{name}_{i}", where)
                                          for i, s in enumerate(arg_spec)))
    raise TVMTypeError(f"export_tvm: the spec of argument {name!r} of {where} is "
                       f"{type(arg_spec).__name__} {arg_spec!r}; expected nn.spec.Tensor(shape, "
                       "dtype), nn.spec.Int(), nn.spec.Object(type) or a tuple of them")


class ModuleSpec:
    """The spec of an exported module: ``{method name: method spec}``."""

    def __init__(self, module, method_names: list, method_specs: list) -> None:
        self.module = module
        self.method_names = list(method_names)
        self.method_specs = list(method_specs)

    @staticmethod
    def from_raw(spec, module) -> ModuleSpec:
        """A ModuleSpec from ``{method name: {argument: spec}}``."""
        if isinstance(spec, ModuleSpec):
            return spec
        if not isinstance(spec, dict):
            raise TVMTypeError(f"export_tvm(spec): spec must be a dict {{method name: "
                               f"{{argument: nn.spec...}}}}, got {type(spec).__name__}")
        specs = []
        for name, method_spec in spec.items():
            method = getattr(module, name, None)
            if not callable(method):
                raise TVMValueError(f"export_tvm: {type(module).__name__} has no method "
                                    f"{name!r} to export")
            specs.append(MethodSpec.from_raw(method_spec, method, name))
        return ModuleSpec(module, list(spec), specs)

    def __repr__(self) -> str:
        return "ModuleSpec:\n" + "\n".join(
            "  " + s._repr(n) for n, s in zip(self.method_names, self.method_specs))


__all__ = ["Int", "MethodSpec", "ModuleSpec", "Object", "Tensor", "Tuple"]
