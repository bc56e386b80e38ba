"""The checks an exercise is made of: numbers against NumPy, the structure of the answer
against the reference's, and its speed.

A structure check is a function ``(answer, reference) -> list[str]``: the messages naming
what differs (empty when nothing does).  ``answer`` and ``reference`` are what the
exercise's kind builds (a PrimFunc, an IRModule; a ``Schedule`` for ``trace_uses``).

Example::

    Exercise(..., structure=[same_block("C"), loop_kind("vectorized")])
"""

from __future__ import annotations

import re

import numpy as np

from mlckit.ir.node import Node
from mlckit.ir.structural import first_difference

__all__ = ["passes_change", "block_difference", "buffer_scope", "calls_op", "compare_outputs", "loop_kind",
           "nodes", "same_block", "same_function", "thread_bound", "trace_uses"]


def nodes(obj):
    """Every IR node under ``obj`` (itself included), parents before children."""
    if isinstance(obj, Node):
        yield obj
        for name in type(obj).field_names():
            yield from nodes(getattr(obj, name))
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            yield from nodes(item)
    elif isinstance(obj, dict):
        for item in obj.values():
            yield from nodes(item)


def _prim_func(obj):
    from mlckit.ir import IRModule
    from mlckit.tir.function import PrimFunc

    if isinstance(obj, IRModule):
        funcs = [f for f in obj.functions.values() if isinstance(f, PrimFunc)]
        return funcs[0] if len(funcs) == 1 else obj["main"]
    if isinstance(obj, PrimFunc):
        return obj
    return obj.mod["main"]  # a Schedule


def _blocks(func) -> dict:
    return {n.name_hint: n for n in nodes(func.body)
            if type(n).__name__ in ("Block", "SBlock") and n.name_hint != "root"}


# --- numbers ---------------------------------------------------------------------------

def compare_outputs(names: list[str], got: list, expected: list,
                    rtol: float = 1e-4, atol: float = 1e-4) -> list[str] | None:
    """None when every output matches; else the lines naming the first difference: the
    output, the element's index, the expected and the computed value."""
    for name, g, e in zip(names, got, expected):
        g, e = np.asarray(g), np.asarray(e)
        if g.shape != e.shape:
            return [f"output `{name}` has the shape {g.shape}, expected {e.shape}"]
        if np.issubdtype(e.dtype, np.floating):
            bad = ~np.isclose(g, e, rtol=rtol, atol=atol, equal_nan=True)
        else:
            bad = g != e
        if bad.any():
            index = tuple(int(i) for i in np.argwhere(bad)[0])
            count = int(bad.sum())
            return [f"output `{name}` differs at index {index}: expected {_num(e[index])}, "
                    f"got {_num(g[index])} ({count} of {e.size} elements differ)"]
    return None


def _num(x) -> str:
    return f"{float(x):.6g}" if isinstance(x, np.floating) else str(x)


# --- structure ------------------------------------------------------------------------

_VERBS = {"reads": "reads", "writes": "writes", "body": "computes", "init": "initializes",
          "iter_vars": "has the axis", "alloc_buffers": "allocates", "annotations": "is annotated"}
_SHOWN = ("BufferLoad", "BufferRegion", "BufferStore", "IterVar", "Buffer", "For")


def _walk_path(root, path: str) -> list:
    """The objects along a structural-equality ``path`` from ``root``, with the field
    name that led to each."""
    steps = [("<root>", root)]
    obj = root
    for part in re.findall(r"\.(\w+)|\[(\d+)\]|\['([^']*)'\]", path.removeprefix("<root>")):
        attr, index, key = part
        try:
            if attr:
                obj = getattr(obj, attr)
            elif index:
                obj = obj[int(index)]
            else:
                obj = {getattr(k, "name_hint", k): v for k, v in obj.items()}[key]
        except (AttributeError, IndexError, KeyError, TypeError):
            break
        steps.append((attr or index or key, obj))
    return steps


_DECLARATION = re.compile(r"^\w+ = T\.(Buffer|int\d+|float\d+|handle|var|bool)\(")


def _text(obj) -> str:
    text = obj.script() if isinstance(obj, Node) else repr(obj)
    # the printer declares the free variables of a fragment first: not what a learner wrote
    lines = [line.strip() for line in text.strip().splitlines()
             if not _DECLARATION.match(line.strip())]
    text = " ".join(lines) or text.strip()
    return text if len(text) <= 120 else text[:117] + "..."


def block_difference(answer_block, reference_block) -> str | None:
    """"block `C` reads `B[vk, vj]`, expected `B[vj, vk]`", or None when the blocks are
    structurally equal."""
    name = answer_block.name_hint
    if (answer_block.init is None) != (reference_block.init is None):
        if answer_block.init is None:
            return (f"block `{name}` has no `T.init()`: the expected one starts with "
                    f"`{_text(reference_block.init)}`")
        return f"block `{name}` has a `T.init()` the expected one does not have"
    # the fields a learner writes, before those derived from them (reads, writes)
    for field_name in ("iter_vars", "body", "init", "alloc_buffers", "reads", "writes"):
        d = first_difference(getattr(answer_block, field_name),
                             getattr(reference_block, field_name), map_free_vars=True)
        if d is not None:
            return _describe(name, field_name, d, getattr(answer_block, field_name),
                             getattr(reference_block, field_name))
    d = first_difference(answer_block, reference_block, map_free_vars=True)
    if d is None:
        return None
    return _describe(name, "body", d, answer_block, reference_block)


def _describe(name, field_name, d, answer_root, reference_root) -> str:
    left = _walk_path(answer_root, d.path)
    right = _walk_path(reference_root, d.path)
    verb = _VERBS.get(field_name, f"differs in its {field_name}")
    # the innermost node a learner recognises: a load, a store, a region, an axis
    shown_l, shown_r = d.lhs, d.rhs
    for (_, a), (_, b) in zip(reversed(left), reversed(right)):
        if type(a).__name__ in _SHOWN and type(a) is type(b):
            shown_l, shown_r = a, b
            break
    if type(shown_l).__name__ == "BufferLoad":
        verb = "reads"
    if type(shown_l).__name__ == "IterVar":
        return f"block `{name}` has the axis `{_text(shown_l)}`, expected `{_text(shown_r)}`"
    return f"block `{name}` {verb} `{_text(shown_l)}`, expected `{_text(shown_r)}`"


def same_block(*names: str):
    """The blocks ``names`` read, write and compute what the reference's do."""

    def check(answer, reference) -> list[str]:
        mine, theirs = _blocks(_prim_func(answer)), _blocks(_prim_func(reference))
        out = []
        for name in names:
            if name not in mine:
                out.append(f"there is no block `{name}` (blocks: "
                           f"{', '.join(mine) or 'none'})")
                continue
            message = block_difference(mine[name], theirs[name])
            if message:
                out.append(message)
        return out

    return check


def _loop_names(func, block_name: str) -> list:
    """The loops around block ``block_name``: (name, extent, kind) from outermost in."""
    out = []

    def visit(stmt, loops):
        kind = type(stmt).__name__
        if kind == "For":
            visit(stmt.body, loops + [stmt])
            return
        if kind in ("Block", "SBlock") and stmt.name_hint == block_name:
            out.extend(loops)
            return
        for name in type(stmt).field_names():
            value = getattr(stmt, name)
            for child in value if isinstance(value, (list, tuple)) else [value]:
                if isinstance(child, Node) and not _is_expr(child):
                    visit(child, loops)

    visit(func.body, [])
    return out


def _is_expr(node) -> bool:
    from mlckit.tir.expr import PrimExpr

    return isinstance(node, PrimExpr)


def _loop_text(loops) -> str:
    return ", ".join(f"{lp.loop_var.name_hint}: {getattr(lp.extent, 'value', lp.extent)}"
                     + ("" if _kind(lp) == "serial" else f" {_kind(lp)}") for lp in loops)


def _kind(loop) -> str:
    kind = str(getattr(loop.kind, "name", loop.kind)).lower()
    if kind.startswith("forkind."):
        kind = kind[len("forkind."):]
    if loop.thread_binding is not None:
        return f"bound to {loop.thread_binding.thread_tag}"
    return {"thread_binding": "bound"}.get(kind, kind)


def same_loops(block_name: str):
    """The loops around ``block_name`` have the reference's extents and kinds (names may
    differ)."""

    def check(answer, reference) -> list[str]:
        if block_name not in _blocks(_prim_func(answer)):
            return [f"there is no block `{block_name}`"]
        mine = _loop_names(_prim_func(answer), block_name)
        theirs = _loop_names(_prim_func(reference), block_name)
        # schedule primitives name their loops predictably: i_0, j_1 … name the order
        shape = [(lp.loop_var.name_hint, getattr(lp.extent, "value", None), _kind(lp))
                 for lp in mine]
        want = [(lp.loop_var.name_hint, getattr(lp.extent, "value", None), _kind(lp))
                for lp in theirs]
        if shape == want:
            return []
        return [f"block `{block_name}` sits in the loops ({_loop_text(mine)}), expected "
                f"({_loop_text(theirs)})"]

    return check


def same_function():
    """The whole function equals the reference's, up to names; the message names the
    first block (or loop) that differs."""

    def check(answer, reference) -> list[str]:
        mine, theirs = _prim_func(answer), _prim_func(reference)
        d = first_difference(mine.body, theirs.body, map_free_vars=True)
        if d is None:
            return []
        nesting = _nesting_difference(mine, theirs)
        if nesting:
            return [nesting]
        left, right = _walk_path(mine.body, d.path), _walk_path(theirs.body, d.path)
        for (_, a), (_, b) in zip(reversed(left), reversed(right)):
            if type(a).__name__ in ("Block", "SBlock") and type(a) is type(b):
                if a.name_hint != b.name_hint:
                    return [f"there is a block `{a.name_hint}` where the expected function "
                            f"has `{b.name_hint}`"]
                inner = first_difference(a, b, map_free_vars=True)
                if inner is not None and not inner.path.startswith("<root>.body"):
                    return [block_difference(a, b)]
            if type(a).__name__ == "For" and type(a) is type(b):
                la, lb = _loop_text([a]), _loop_text([b])
                if la != lb:
                    return [f"the loop `{la}` is `{lb}` in the expected function"]
        return [f"the function differs from the expected one: `{_text(d.lhs)}` where it "
                f"has `{_text(d.rhs)}`"]

    return check


def _nesting_difference(mine, theirs) -> str | None:
    """The first block whose loops differ, or pair of blocks that share other loops than
    in the reference: "blocks `C_init` and `C_update` share the loops (i: 16), expected
    (i: 16, j_0: 4)"."""
    names = [n for n in _blocks(theirs) if n in _blocks(mine)]
    loops = {n: (_loop_names(mine, n), _loop_names(theirs, n)) for n in names}
    for n, (a, b) in loops.items():
        if [(_kind(x), getattr(x.extent, "value", None)) for x in a] != \
                [(_kind(x), getattr(x.extent, "value", None)) for x in b]:
            return f"block `{n}` sits in the loops ({_loop_text(a)}), expected ({_loop_text(b)})"
    for i, n in enumerate(names):
        for m in names[i + 1:]:
            shared_a = [x for x in loops[n][0] if any(x is y for y in loops[m][0])]
            shared_b = [x for x in loops[n][1] if any(x is y for y in loops[m][1])]
            if len(shared_a) != len(shared_b):
                return (f"blocks `{n}` and `{m}` share the loops ({_loop_text(shared_a)}), "
                        f"expected ({_loop_text(shared_b)})")
    return None


def loop_kind(kind: str):
    """Some loop is ``kind`` ("vectorized", "parallel", "unrolled")."""

    def check(answer, reference) -> list[str]:
        loops = [n for n in nodes(_prim_func(answer).body) if type(n).__name__ == "For"]
        if any(_kind(lp) == kind for lp in loops):
            return []
        return [f"no loop is {kind}"]

    return check


def innermost_loop(block_name: str, kind: str):
    """The innermost loop around ``block_name`` is ``kind`` ("vectorized")."""

    def check(answer, reference) -> list[str]:
        loops = _loop_names(_prim_func(answer), block_name)
        if not loops:
            return [f"there is no loop around block `{block_name}`"]
        if _kind(loops[-1]) == kind:
            return []
        return [f"the innermost loop of block `{block_name}` is `{_loop_text(loops[-1:])}`, "
                f"not {kind}"]

    return check


def thread_bound(*tags: str):
    """Some loop is bound to each of ``tags`` ("blockIdx.x", "threadIdx.x")."""

    def check(answer, reference) -> list[str]:
        loops = [n for n in nodes(_prim_func(answer).body) if type(n).__name__ == "For"]
        have = {lp.thread_binding.thread_tag for lp in loops if lp.thread_binding is not None}
        return [f"no loop is bound to {tag}" for tag in tags if tag not in have]

    return check


def buffer_scope(scope: str):
    """Some buffer lives in ``scope`` ("shared", "local")."""

    def check(answer, reference) -> list[str]:
        for n in nodes(_prim_func(answer).body):
            if type(n).__name__ == "Buffer" and str(n.scope) == scope:
                return []
        return [f"no buffer lives in {scope} memory (cache_read(..., \"{scope}\") makes one)"]

    return check


def calls_op(op_name: str, present: bool = True, func: str = "main", count: int | None = None):
    """Relax function ``func`` does (or does not) call the operator ``op_name``; exactly
    ``count`` times when given."""

    def check(answer, reference) -> list[str]:
        calls = [getattr(n.op, "name", None) for n in nodes(answer[func])
                 if type(n).__name__ == "Call"]
        n = calls.count(op_name)
        if count is not None and present and n != count:
            return [f"`{func}` calls {op_name} {n} time{'s' if n != 1 else ''}, "
                    f"expected {count}"]
        if (n > 0) == present:
            return []
        return [f"`{func}` {'never calls' if present else 'still calls'} {op_name}"]

    return check


def passes_change(*names: str):
    """Each pass of ``names`` that ran (a pipeline answer) changed the module."""

    def check(answer, reference) -> list[str]:
        out = []
        for step in answer.stepper.steps:
            if step.name in names and not step.changed:
                out.append(f"`{step.name}` (step {step.index}) changed nothing")
        return out

    return check


def trace_uses(*kinds: str):
    """The schedule's trace holds an instruction of each kind ("SamplePerfectTile")."""

    def check(answer, reference) -> list[str]:
        used = {inst.kind.name for inst in answer.trace.insts}
        return [f"the schedule never calls {_py_name(kind)}" for kind in kinds
                if kind not in used]

    return check


def _py_name(kind: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", kind).lower()
