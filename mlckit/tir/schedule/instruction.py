"""Instructions: the record of one primitive call, and the registry of primitive kinds.

Every public primitive of ``Schedule`` is declared with ``@primitive``: its TVM kind name
(``"Split"``), which parameters are *inputs* (random variables, ints and lists of them) and
which are *attributes* (strings, flags).  The decorator records an ``Instruction`` in the
schedule's trace after the primitive succeeded, which is how traces print and replay.

Wherever an input takes a block, its name does too (``sch.compute_inline("B")``), as in
TVM: the name is looked up with ``get_block`` first, which the trace records.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, field
from typing import Any

from .error import ScheduleError

INSTRUCTION_KINDS: dict[str, InstructionKind] = {}
# inputs that take a block (or blocks): a block name is accepted there
BLOCK_INPUTS = frozenset({"block", "block_or_loop", "blocks", "consumer_blocks"})


@dataclass
class InstructionKind:
    """A kind of instruction: ``name`` as in TVM, the Schedule ``method`` it calls.

    >>> from mlckit import tir
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def double(a: T.Buffer((8,), "float32"), b: T.Buffer((8,), "float32")):
    ...     for i in range(8):
    ...         with T.block("B"):
    ...             vi = T.axis.spatial(8, i)
    ...             b[vi] = a[vi] * T.float32(2)
    >>> sch = tir.Schedule(double)
    >>> (i,) = sch.get_loops(sch.get_block("B"))
    >>> i0, i1 = sch.split(i, factors=[None, 4])
    >>> kind = sch.trace.insts[-1].kind
    >>> kind.name, kind.method, kind.inputs, kind.attrs
    ('Split', 'split', ('loop', 'factors'), ('preserve_unit_iters', 'disable_predication'))
    """

    name: str
    method: str
    inputs: tuple[str, ...]
    attrs: tuple[str, ...]
    is_pure: bool = False  # navigation and sampling: no effect on the IR
    py_name: str = ""  # the name printed in Python (default: method)
    varargs: bool = False  # the first input is printed spread as positional arguments
    # the parameters in the method's order: how TVM prints the call (``annotate(block_or_loop,
    # ann_key, ann_val)`` although ``ann_val`` is an input and ``ann_key`` an attribute)
    params: tuple[str, ...] = ()


@dataclass
class Instruction:
    """One recorded call: kind, inputs, attrs, outputs (and a sampling decision).

    >>> from mlckit import tir
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def double(a: T.Buffer((8,), "float32"), b: T.Buffer((8,), "float32")):
    ...     for i in range(8):
    ...         with T.block("B"):
    ...             vi = T.axis.spatial(8, i)
    ...             b[vi] = a[vi] * T.float32(2)
    >>> sch = tir.Schedule(double)
    >>> (i,) = sch.get_loops(sch.get_block("B"))
    >>> i0, i1 = sch.split(i, factors=[None, 4])
    >>> inst = sch.trace.insts[-1]
    >>> inst.kind.name, inst.inputs[1], inst.attrs, inst.outputs == [i0, i1]
    ('Split', [None, 4], [True, False], True)
    """

    kind: InstructionKind
    inputs: list
    attrs: list
    outputs: list
    decision: Any = None
    extra: dict = field(default_factory=dict)


def primitive(name: str, inputs=(), attrs=(), is_pure: bool = False, py_name: str = "",
              varargs: bool = False):
    """Declare a Schedule method as the primitive ``name`` (recorded in the trace)."""

    def wrap(fn):
        sig = inspect.signature(fn)
        kind = InstructionKind(name, fn.__name__, tuple(inputs), tuple(attrs), is_pure,
                               py_name or fn.__name__, varargs, tuple(sig.parameters)[1:])
        INSTRUCTION_KINDS[name] = kind

        @functools.wraps(fn)
        def method(self, *args, **kwargs):
            bound = sig.bind(self, *args, **kwargs)
            bound.apply_defaults()
            if self._depth == 0:
                _resolve_block_names(self, kind, bound.arguments)
                self.state.primitive = kind.py_name  # named in "removed by ..." messages
            self._depth += 1
            try:
                self._decision = None
                result = fn(*bound.args, **bound.kwargs)
            except ScheduleError as err:
                if self._depth == 1:  # the learner's call, not a primitive used inside one
                    _show_on_ir(self, err, kind, bound.arguments)
                raise
            finally:
                self._depth -= 1
            if self._depth == 0 and self._trace is not None:
                values = bound.arguments
                outs = result if isinstance(result, (list, tuple)) else (
                    [] if result is None else [result])
                self._trace.append(Instruction(
                    kind,
                    [_freeze(values[n]) for n in kind.inputs],
                    [_freeze(values[n]) for n in kind.attrs],
                    list(outs),
                    self._decision,
                    {"list_output": isinstance(result, (list, tuple))},
                ))
            return result

        method.instruction_kind = kind
        return method

    return wrap


def _show_on_ir(sch, err: ScheduleError, kind: InstructionKind, arguments: dict) -> None:
    """Let ``err`` show the function with the loops and blocks given to the primitive."""
    stmts, func_name = [], None
    for param in kind.inputs:
        values = arguments.get(param)
        for value in values if isinstance(values, (list, tuple)) else [values]:
            entry = sch._symbols.get(id(value))
            sref = entry[1] if entry is not None and entry[0] is value else None
            if getattr(sref, "valid", False):
                stmts.append(sref.stmt)
                func_name = sref.func_name
    if func_name is not None:
        err.attach_ir(sch.mod[func_name], stmts)


def _resolve_block_names(sch, kind: InstructionKind, arguments: dict) -> None:
    """Replace block names among the block inputs by BlockRVs (``sch.get_block(name)``)."""
    for param in BLOCK_INPUTS.intersection(kind.inputs):
        value = arguments.get(param)
        if isinstance(value, str):
            arguments[param] = sch._block_by_name(value, kind.method)
        elif isinstance(value, (list, tuple)) and any(isinstance(v, str) for v in value):
            arguments[param] = type(value)(
                sch._block_by_name(v, kind.method) if isinstance(v, str) else v for v in value)


def _freeze(v):
    if isinstance(v, tuple):
        return [_freeze(x) for x in v]
    if isinstance(v, list):
        return [_freeze(x) for x in v]
    return v
