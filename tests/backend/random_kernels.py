"""Hypothesis strategies for random PrimFuncs with a NumPy twin.

A drawn :class:`Case` has TVMScript text (parsed with ``mlckit.script.from_source``), the
input buffers' shapes (constants or symbolic names) and dtypes, and a NumPy function computing
the same result.  Three families: element-wise, broadcast, and reduction kernels, with random
loop kinds (serial / parallel / unroll / vectorized) on their loops.

The alphabet is kept small on purpose (few shapes, shallow expressions) so that structurally
equal kernels repeat and the Numba compile cache is hit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

DTYPES = ("float32", "float64", "int32")
KINDS = ("serial", "parallel", "unroll", "vectorized")
SPATIAL = ("vi", "vj", "vk")
LOOPS = ("i", "j", "k")
CONST_DIMS = (1, 3, 4)
SYM_DIMS = ("n", "m")


@dataclass
class Case:
    name: str
    text: str
    inputs: list  # (buffer name, shape spec, dtype)
    out_shape: tuple  # shape spec of the output
    out_dtype: str
    expected: callable  # dict of input arrays, dict of sym sizes -> output array
    sizes_needed: tuple = field(default=())

    def shapes(self, sizes: dict) -> list:
        return [tuple(sizes.get(d, d) for d in spec) for _, spec, _ in self.inputs]


def _const(dtype: str, value) -> tuple[str, object]:
    if dtype == "int32":
        return f"T.int32({int(value)})", np.int32(int(value))
    return f"T.{dtype}({float(value)!r})", np.dtype(dtype).type(value)


@st.composite
def expressions(draw, loads: list, dtype: str, depth: int = 2):
    """(TVMScript text, NumPy function of the env) for a random expression of ``dtype``.

    ``loads`` is a list of (text, numpy function) leaves.
    """
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        if draw(st.integers(0, 4)) == 0:
            value = draw(st.sampled_from([2, 3, -1] if dtype == "int32" else [0.5, 2.0, -1.5]))
            text, val = _const(dtype, value)
            return text, (lambda env, val=val: val)
        return draw(st.sampled_from(loads))
    ops = ["add", "sub", "mul", "max", "min", "select"]
    if dtype == "int32":
        ops += ["floordiv", "floormod", "truncdiv", "truncmod"]
    else:
        ops += ["exp", "tanh", "sqrtabs", "sigmoid"]
    op = draw(st.sampled_from(ops))
    a_text, a = draw(expressions(loads, dtype, depth - 1))
    if op in ("exp", "tanh", "sqrtabs", "sigmoid"):
        if op == "exp":  # keep it finite: exp of a bounded value
            return f"T.exp(T.min({a_text}, {_const(dtype, 4.0)[0]}))", (
                lambda env: np.exp(np.minimum(a(env), np.dtype(dtype).type(4.0))))
        if op == "tanh":
            return f"T.tanh({a_text})", (lambda env: np.tanh(a(env)))
        if op == "sigmoid":
            one = np.dtype(dtype).type(1)
            return f"T.sigmoid({a_text})", (lambda env: one / (one + np.exp(-a(env))))
        return f"T.sqrt(T.fabs({a_text}))", (lambda env: np.sqrt(np.abs(a(env))))
    if op in ("floordiv", "floormod", "truncdiv", "truncmod"):
        d = draw(st.sampled_from([2, 3, 5]))
        dn = np.int32(d)
        fn = {
            "floordiv": (f"T.floordiv({a_text}, {d})", lambda env: a(env) // dn),
            "floormod": (f"T.floormod({a_text}, {d})", lambda env: a(env) % dn),
            "truncdiv": (f"T.truncdiv({a_text}, {d})",
                         lambda env: (np.sign(a(env)) * (np.abs(a(env)) // dn)).astype("int32")),
            "truncmod": (f"T.truncmod({a_text}, {d})",
                         lambda env: np.fmod(a(env), dn).astype("int32")),
        }[op]
        return fn
    b_text, b = draw(expressions(loads, dtype, depth - 1))
    if op == "add":
        return f"({a_text} + {b_text})", (lambda env: a(env) + b(env))
    if op == "sub":
        return f"({a_text} - {b_text})", (lambda env: a(env) - b(env))
    if op == "mul":
        return f"({a_text} * {b_text})", (lambda env: a(env) * b(env))
    if op == "max":
        return f"T.max({a_text}, {b_text})", (lambda env: np.maximum(a(env), b(env)))
    if op == "min":
        return f"T.min({a_text}, {b_text})", (lambda env: np.minimum(a(env), b(env)))
    c_text, c = draw(expressions(loads, dtype, 0))
    return (f"T.Select({a_text} > {b_text}, {c_text}, {a_text})",
            lambda env: np.where(a(env) > b(env), c(env), a(env)))


def _dims(draw, rank: int) -> tuple:
    return tuple(draw(st.sampled_from(CONST_DIMS + SYM_DIMS)) for _ in range(rank))


def _signature(buffers, sym_used) -> tuple[str, str]:
    """(parameter list, body prologue with T.int32() vars and match_buffers)."""
    params = ", ".join(f"{name.lower()}: T.handle" for name, _, _ in buffers)
    lines = [f"    {s} = T.int32()" for s in sorted(sym_used)]
    for name, spec, dtype in buffers:
        shape = ", ".join(str(d) for d in spec) + ("," if len(spec) == 1 else "")
        lines.append(f'    {name} = T.match_buffer({name.lower()}, ({shape}), "{dtype}")')
    return params, "\n".join(lines)


def _kinds(extent, kinds=KINDS) -> tuple:
    """The loop kinds a loop of ``extent`` may take: a loop of symbolic extent is neither
    vectorized nor unrolled (TVM, and mlckit's VectorizeLoop and UnrollLoop, refuse it when
    the function is built)."""
    fixed = ("vectorized", "unroll")
    return tuple(k for k in kinds if k not in fixed or not isinstance(extent, str))


def _loops(draw, extents) -> tuple[list[str], str]:
    lines, indent = [], "    "
    for loop, ext in zip(LOOPS, extents):
        kind = draw(st.sampled_from(_kinds(ext)))
        lines.append(f"{indent}for {loop} in T.{kind}({ext}):")
        indent += "    "
    return lines, indent


@st.composite
def elementwise_cases(draw, broadcast: bool = False):
    dtype = draw(st.sampled_from(DTYPES))
    rank = draw(st.integers(1, 3)) if not broadcast else draw(st.integers(2, 3))
    spec = _dims(draw, rank)
    idx = SPATIAL[:rank]
    loads = [(f"A[{', '.join(idx)}]", lambda env: env["A"])]
    buffers = [("A", spec, dtype)]
    if broadcast:
        # B covers a non-empty proper subset of the axes (others broadcast), C the output
        axes = draw(st.lists(st.integers(0, rank - 1), min_size=1, max_size=rank - 1, unique=True))
        axes = sorted(axes)
        b_spec = tuple(spec[a] for a in axes)
        b_idx = ", ".join(idx[a] for a in axes)

        def b_view(env, axes=axes, rank=rank):
            shape = [1] * rank
            for a, n in zip(axes, env["B"].shape):
                shape[a] = n
            return env["B"].reshape(shape)

        loads.append((f"B[{b_idx}]", b_view))
        buffers.append(("B", b_spec, dtype))
    elif draw(st.booleans()):
        loads.append((f"B[{', '.join(idx)}]", lambda env: env["B"]))
        buffers.append(("B", spec, dtype))
    text_expr, fn = draw(expressions(loads, dtype))
    out = ("C", spec, dtype)
    all_bufs = buffers + [out]
    sym_used = {d for _, s, _ in all_bufs for d in s if isinstance(d, str)}
    params, prologue = _signature(all_bufs, sym_used)
    loops, indent = _loops(draw, spec)
    body = [
        f'{indent}with T.block("C"):',
        f'{indent}    {", ".join(idx)} = T.axis.remap("{"S" * rank}", [{", ".join(LOOPS[:rank])}])',
        f"{indent}    C[{', '.join(idx)}] = {text_expr}",
    ]
    name = "bcast" if broadcast else "ewise"
    text = "\n".join([f"@T.prim_func\ndef {name}({params}):", prologue, *loops, *body]) + "\n"

    def expected(env, spec=spec):
        shape = env["__shape__"]
        return np.broadcast_to(fn(env), shape).astype(dtype)

    return Case(name, text, buffers, spec, dtype, expected)


@st.composite
def reduction_cases(draw):
    dtype = draw(st.sampled_from(DTYPES))
    rank = draw(st.integers(2, 3))
    spec = _dims(draw, rank)
    raxis = draw(st.integers(0, rank - 1))
    reducer = draw(st.sampled_from(["sum", "max", "min"]))
    idx = SPATIAL[:rank]
    loads = [(f"A[{', '.join(idx)}]", lambda env: env["A"])]
    text_expr, fn = draw(expressions(loads, dtype, depth=1))
    out_spec = tuple(d for a, d in enumerate(spec) if a != raxis)
    out_idx = ", ".join(idx[a] for a in range(rank) if a != raxis)
    buffers = [("A", spec, dtype)]
    all_bufs = buffers + [("C", out_spec, dtype)]
    sym_used = {d for _, s, _ in all_bufs for d in s if isinstance(d, str)}
    params, prologue = _signature(all_bufs, sym_used)
    lines, indent = [], "    "
    for a, (loop, ext) in enumerate(zip(LOOPS, spec)):
        # a reduction loop may not be parallel (a data race): serial or unrolled only
        kinds = _kinds(ext, ("serial", "unroll")) if a == raxis else _kinds(ext)
        lines.append(f"{indent}for {loop} in T.{draw(st.sampled_from(kinds))}({ext}):")
        indent += "    "
    kinds = "".join("R" if a == raxis else "S" for a in range(rank))
    init_value = {"sum": _const(dtype, 0)[0], "max": f'T.min_value("{dtype}")',
                  "min": f'T.max_value("{dtype}")'}[reducer]
    update = {"sum": f"C[{out_idx}] + {text_expr}", "max": f"T.max(C[{out_idx}], {text_expr})",
              "min": f"T.min(C[{out_idx}], {text_expr})"}[reducer]
    body = [
        f'{indent}with T.block("C"):',
        f'{indent}    {", ".join(idx)} = T.axis.remap("{kinds}", [{", ".join(LOOPS[:rank])}])',
        f"{indent}    with T.init():",
        f"{indent}        C[{out_idx}] = {init_value}",
        f"{indent}    C[{out_idx}] = {update}",
    ]
    text = "\n".join([f"@T.prim_func\ndef reduce({params}):", prologue, *lines, *body]) + "\n"

    def expected(env):
        values = np.broadcast_to(fn(env), env["A"].shape).astype(dtype)
        if reducer == "sum":
            if dtype == "int32":
                return values.sum(axis=raxis, dtype="int32")
            return values.astype("float64").sum(axis=raxis).astype(dtype)
        if values.shape[raxis] == 0:
            fill = np.iinfo(dtype).min if reducer == "max" and dtype == "int32" else None
            return fill
        return getattr(values, reducer)(axis=raxis).astype(dtype)

    return Case("reduce", text, buffers, out_spec, dtype, expected)


def random_inputs(rng: np.random.Generator, case: Case, sizes: dict) -> dict:
    env = {}
    for (name, _spec, dtype), shape in zip(case.inputs, case.shapes(sizes)):
        if dtype == "int32":
            env[name] = rng.integers(-20, 21, size=shape).astype("int32")
        else:
            env[name] = rng.uniform(0.25, 2.0, size=shape).astype(dtype) * rng.choice(
                [-1, 1], size=shape
            ).astype(dtype)
    return env
