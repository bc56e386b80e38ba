"""A library "codegen": each ``Codegen`` function becomes a Python function calling an array
library (NumPy, or CuPy for cuBLAS), in destination-passing style, whose source is shown.

For ``fused_relax_matmul_relax_add_relax_nn_relu_numpy`` (a matmul + bias + relu)::

    def fused_relax_matmul_relax_add_relax_nn_relu_numpy(x, w, b, out):
        # numpy.matmul_bias_relu
        lv = np.matmul(x, w)
        lv1 = np.add(lv, b)
        out[...] = np.maximum(lv1, 0)

``RunCodegen`` calls the codegen registered as ``relax.ext.<name>`` with the functions; the
result, an :class:`ExternalModule`, holds the compiled functions by symbol and their source.
"""

from __future__ import annotations

import keyword
import re

from mlckit.error import TVMError

from ...expr import Call, Constant, Function, Var, VarBinding

# op name -> how its call is written (``{0}``, ``{1}``: the operands; ``{axes}``: attrs)
_OPS = {
    "relax.matmul": "{m}.matmul({0}, {1})",
    "relax.add": "{m}.add({0}, {1})",
    "relax.multiply": "{m}.multiply({0}, {1})",
    "relax.nn.relu": "{m}.maximum({0}, 0)",
}


class ExternalModule:
    """What a library codegen produced: ``functions`` (symbol → callable taking the inputs
    and the output array) and ``source`` (the Python source of them all).

    Example::

        print(mod.attrs["external_mods"][0].get_source())
    """

    def __init__(self, kind: str, source: str, functions: dict):
        self.type_key, self.source, self.functions = kind, source, dict(functions)

    def get_source(self, fmt: str = "") -> str:
        return self.source

    inspect_source = get_source

    def __repr__(self):
        return f"<ExternalModule {self.type_key}: {', '.join(self.functions)}>"


def composite_of(func: Function) -> Function:
    """The ``Composite`` function inside a ``Codegen`` function (``local_func``)."""
    for block in func.body.blocks:
        for b in block.bindings:
            if isinstance(b.value, Function) and "Composite" in b.value.attrs:
                return b.value
    if "Composite" in func.attrs:
        return func
    raise TVMError(f"{func.attrs.get('global_symbol')}: a Codegen function must call a "
                   "Composite function (made by FuseOpsByPattern(annotate_codegen=True))")


def generate(func: Function, module: str, namespace: dict) -> str:
    """The source of the DPS function for one ``Codegen`` function; constants it reads are
    put into ``namespace``."""
    symbol = func.attrs["global_symbol"]
    comp = composite_of(func)
    names: dict[int, str] = {}
    for p in comp.params:
        names[id(p)] = _identifier(p.name_hint, names.values())
    lines = [f"def {symbol}({', '.join(names.values())}, out):",
             f"    # {comp.attrs['Composite']}"]
    bindings = [b for block in comp.body.blocks for b in block.bindings]
    for i, binding in enumerate(bindings):
        if not isinstance(binding, VarBinding) or not isinstance(binding.value, Call):
            raise TVMError(f"{symbol}: the {module} codegen takes calls of operators only")
        rhs = _call(binding.value, names, namespace, module, symbol)
        last = i == len(bindings) - 1
        names[id(binding.var)] = _identifier(binding.var.name_hint, names.values())
        target = "out[...]" if last else names[id(binding.var)]
        lines.append(f"    {target} = {rhs}")
    return "\n".join(lines) + "\n"


def _identifier(name: str, taken) -> str:
    """``name`` as a Python identifier (``fc1.weight`` -> ``fc1_weight``), unique."""
    base = re.sub(r"\W", "_", name) or "v"
    if base[0].isdigit() or keyword.iskeyword(base) or base in ("out", "np", "cp"):
        base = "v_" + base
    taken = set(taken)
    out, i = base, 1
    while out in taken:
        out, i = f"{base}_{i}", i + 1
    return out


def _call(call: Call, names: dict, namespace: dict, module: str, symbol: str) -> str:
    op = getattr(call.op, "name", None)
    args = []
    for a in call.args:
        if isinstance(a, Var):
            args.append(names[id(a)])
        elif isinstance(a, Constant):
            name = f"{symbol}_const_{len([k for k in namespace if k.startswith(symbol)])}"
            namespace[name] = a.data.numpy() if hasattr(a.data, "numpy") else a.data
            args.append(name)
        else:
            raise TVMError(f"{symbol}: the {module} codegen cannot pass {type(a).__name__}")
    if op == "relax.permute_dims":
        axes = call.attrs.axes
        return (f"{module}.transpose({args[0]})" if axes is None
                else f"{module}.transpose({args[0]}, {tuple(int(x) for x in axes)})")
    if op not in _OPS:
        raise TVMError(f"{symbol}: the {module} codegen has no implementation of {op} (it "
                       f"knows {', '.join(sorted([*_OPS, 'relax.permute_dims']))})")
    return _OPS[op].format(*args, m=module)


def build_module(kind: str, funcs: list, module: str, namespace: dict) -> ExternalModule:
    """Generate and compile the functions of one codegen (``namespace`` holds the array
    library under the name ``module``)."""
    ns = dict(namespace)
    sources = [generate(f, module, ns) for f in funcs]
    source = "\n\n".join(sources)
    exec(compile(source, f"<{kind} codegen>", "exec"), ns)  # noqa: S102 - our own source
    return ExternalModule(kind, source, {f.attrs["global_symbol"]: ns[f.attrs["global_symbol"]]
                                         for f in funcs})


__all__ = ["ExternalModule", "build_module", "composite_of", "generate"]
