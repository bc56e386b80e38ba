"""``Module.export_tvm``: trace the spec'd methods of a model into a Relax IRModule.

Each method becomes one Relax function of the same name, in one dataflow block::

    def forward(x, fc1.weight, fc1.bias, ...):          # inputs, then effects, then params
        R.func_attr({"num_input": 1})                   # how many leading ones are inputs
        with R.dataflow():
            permute_dims = R.permute_dims(fc1.weight, axes=None)
            ...
            gv = add1
            R.output(gv)
        return gv

With ``debug=True`` an ``IOEffect`` is threaded through: the functions take ``_io`` after
the inputs and return ``(outputs, (_io,))``, and ``_initialize_effect()`` creates it.
"""

from __future__ import annotations

from mlckit import tir
from mlckit.error import TVMError, TVMTypeError

from ... import expr as rx
from ...block_builder import BlockBuilder
from ...struct_info import ObjectStructInfo, ShapeStructInfo, TensorStructInfo, TupleStructInfo
from . import core
from . import spec as _spec


class ExportError(TVMError):
    """A model could not be traced with the given spec (the message names the method, its
    argument specs and the layer where tracing failed).

    >>> from mlckit.relax.frontend import nn
    >>> class Net(nn.Module):
    ...     def forward(self, x):
    ...         return nn.op.matmul(x, x)
    >>> try:
    ...     Net().export_tvm({"forward": {"x": nn.spec.Tensor([2, 3], "float32")}})
    ... except nn.ExportError as err:
    ...     print(type(err).__name__)
    ExportError
    """


class Exporter:
    """Builds the IRModule of a ``ModuleSpec`` (see the module doc)."""

    def __init__(self, debug: bool) -> None:
        from .modules import IOEffect

        self.builder = BlockBuilder()
        self.io_effect = IOEffect() if debug else None
        self.extern_mods: list = []

    def build(self, spec: _spec.ModuleSpec):
        """Returns ``(IRModule, [(name, Parameter)], extern modules)``."""
        effects = self._effects(spec.module)
        params = None
        if effects:
            with self.builder.function("_initialize_effect"):
                with self.builder.dataflow():
                    inits = []
                    for name, effect in effects:
                        inits.extend(effect.emit_init(name, self.builder))
                    out = self.builder.emit_output(self.builder.emit(rx.Tuple(inits)))
                self.builder.emit_func_output(out, params=[])
        for name, method_spec in zip(spec.method_names, spec.method_specs):
            # fresh parameter variables per method: no symbolic dim is shared between two
            params = list(core._find_attributes(spec.module, "",
                                                lambda x: isinstance(x, core.Parameter)))
            n_effects = {"plain": len(effects), "packed": 1, "none": 0}[method_spec.effect_mode]
            num_input = len(method_spec.arg_specs) + n_effects
            with self.builder.function(name, attrs={"num_input": num_input}):
                with self.builder.dataflow():
                    outputs, inputs = self._emit_method(spec.module, name, method_spec, params,
                                                        effects)
                gvar = self.builder.emit_func_output(outputs, inputs)
            _check_no_stray_parameters(self.builder.get()[gvar], spec.module, name)
        return self.builder.finalize(), params, self.extern_mods

    def _effects(self, module: core.Module) -> list:
        found = [("", self.io_effect)] if self.io_effect is not None else []
        found += core._find_attributes(module, "", lambda x: isinstance(x, core.Effect))
        return found

    # -- one method ---------------------------------------------------------------------------
    def _emit_method(self, module, name: str, spec: _spec.MethodSpec, params: list,
                     effects: list):
        bb = self.builder
        args = _spec_to_arguments(spec)
        inputs = [_as_input(a) for a in args]
        inputs += self._effect_inputs(spec.effect_mode, effects)
        inputs += self._param_inputs(spec.param_mode, params)
        for i, (arg, var) in enumerate(zip(args, inputs)):
            if isinstance(arg, _spec.Tuple):
                args[i] = _detuple(bb, arg, var)
        with core.tracing(module):
            try:
                outputs = spec.method(*args)
            except TVMError as err:
                raise ExportError(_failure_message(module, name, spec, err)) from err
        effect_outputs = []
        for _, effect in effects:
            effect_outputs.extend(effect.finalize())
        result = _unwrap_output(outputs, module, name)
        if effect_outputs and spec.effect_mode != "none":
            result = rx.Tuple([result, rx.Tuple(effect_outputs)])
        return bb.emit_output(result), inputs

    def _param_inputs(self, mode: str, params: list) -> list:
        shared: dict[str, tir.Var] = {}  # one tir.Var per symbolic dim name

        def dim(d):
            if isinstance(d, tir.Var):
                return shared.setdefault(d.name, tir.Var(d.name, "int64"))
            return d

        variables = []
        for pname, param in params:
            var = core.Tensor.placeholder([dim(d) for d in param.shape], param.dtype, pname)._expr
            variables.append(var)
            param._expr = var
        if mode == "none":
            return []
        if mode == "plain":
            return variables
        packed = rx.Var("packed_params", TupleStructInfo([v.struct_info_ for v in variables]))
        for i, (pname, param) in enumerate(params):
            param._expr = self.builder.emit(rx.TupleGetItem(packed, i), pname)
        return [packed]

    def _effect_inputs(self, mode: str, effects: list) -> list:
        per_effect = []
        for ename, effect in effects:
            created = effect.create(ename)
            effect.set_state(created)
            per_effect.append(created)
        variables = [v for created in per_effect for v in created]
        if mode == "none":
            return []
        if mode == "plain":
            return variables
        packed = rx.Var("packed_effects", TupleStructInfo([v.struct_info_ for v in variables]))
        i = 0
        for created, (_, effect) in zip(per_effect, effects):
            state = []
            for var in created:
                state.append(self.builder.emit(rx.TupleGetItem(packed, i), var.name_hint))
                i += 1
            effect.set_state(state)
        return [packed]


def _spec_to_arguments(spec: _spec.MethodSpec) -> list:
    """The values the method is called with: ``nn.Tensor`` inputs, ``tir.Var`` for ints."""
    dims: dict[str, tir.Var] = {}

    def dim(name: str) -> tir.Var:
        return dims.setdefault(name, tir.Var(name, "int64"))

    def convert(name, arg_spec):
        if isinstance(arg_spec, _spec.Int):
            return dim(name)
        if isinstance(arg_spec, _spec.Tensor):
            shape = [dim(d) if isinstance(d, str) else d for d in arg_spec.shape]
            return core.Tensor.placeholder(shape, arg_spec.dtype, name)
        if isinstance(arg_spec, _spec.Object):
            return arg_spec.object_type(_expr=rx.Var(name, ObjectStructInfo()), _name=name)
        if isinstance(arg_spec, _spec.Tuple):
            return _spec.Tuple(name, type(arg_spec.elements)(
                convert(f"{name}_{i}", s) for i, s in enumerate(arg_spec.elements)))
        raise TVMTypeError(f"export_tvm: invalid spec for argument {name!r}: {arg_spec!r}")

    return [convert(n, s) for n, s in zip(spec.arg_names, spec.arg_specs)]


def _as_input(arg) -> rx.Var:
    if isinstance(arg, tir.Var):
        return rx.Var(arg.name, ShapeStructInfo([arg]))
    if isinstance(arg, (core.Tensor, core.Object)):
        return arg._expr
    if isinstance(arg, _spec.Tuple):
        return rx.Var(arg.name, TupleStructInfo([_as_input(e).struct_info_
                                                 for e in arg.elements]))
    raise TVMTypeError(f"export_tvm: unsupported input {type(arg).__name__}")


def _detuple(bb: BlockBuilder, arg, var):
    if isinstance(arg, _spec.Tuple):
        fields = [_detuple(bb, e, bb.emit(rx.TupleGetItem(var, i), f"{arg.name}_{i}"))
                  for i, e in enumerate(arg.elements)]
        return type(arg.elements)(fields)
    if isinstance(arg, core.Tensor):
        return core.Tensor(_expr=var)
    return arg


def _unwrap_output(value, module, name: str):
    if isinstance(value, (core.Tensor, core.Object)):
        return value._expr
    if isinstance(value, (tuple, list)):
        return rx.Tuple([_unwrap_output(v, module, name) for v in value])
    raise ExportError(f"export_tvm: {type(module).__name__}.{name} returned "
                      f"{type(value).__name__} {value!r}; an exported method returns "
                      "nn.Tensors (or tuples/lists of them)")


def _check_no_stray_parameters(func, module, name: str) -> None:
    """A tensor the method used that is neither an input nor a binding is a Parameter the
    exporter did not find: one kept outside the module tree (TVM fails its well-formedness
    check here with "Var param is not defined")."""
    from ...analysis.well_formed import free_relax_vars

    bound = {id(p) for p in func.params}
    for block in func.body.blocks:
        bound.update(id(b.var) for b in block.bindings)
    stray = [v for v in free_relax_vars(func.body) if id(v) not in bound]
    if stray:
        shown = ", ".join(repr(core.Tensor(_expr=v)) if isinstance(v.struct_info_, TensorStructInfo)
                          else v.name_hint for v in stray)
        raise ExportError(
            f"export_tvm: {type(module).__name__}.{name} uses {len(stray)} parameter(s) that are "
            f"not in the model ({shown}): the exporter finds nn.Parameters and nn.Modules "
            "that are attributes of the model or inside nn.ModuleList / nn.ModuleDict; a plain "
            "Python list or dict hides them (write self.layers = nn.ModuleList([...]))")


def _failure_message(module, name: str, spec: _spec.MethodSpec, err: TVMError) -> str:
    args = ", ".join(f"{n}: {s}" for n, s in zip(spec.arg_names, spec.arg_specs))
    where = getattr(err, "_nn_layer", None)
    inside = f"\n  in {where}" if where else ""
    return (f"export_tvm: tracing {type(module).__name__}.{name}({args}) failed{inside}\n"
            f"  {type(err).__name__}: {err}")


__all__ = ["ExportError", "Exporter"]
