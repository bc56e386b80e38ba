"""Trace: the primitives a schedule applied, printable as Python and replayable.

Example::

    print(sch.trace)                 # b0 = sch.get_block(name="C", func_name="main") ...
    text = sch.trace.as_json()       # JSON string
    sch2 = tir.Schedule(mod)
    Trace.from_json(text).apply_to_schedule(sch2)
    assert_structural_equal(sch.mod, sch2.mod)
"""

from __future__ import annotations

import json
from typing import Any

from mlckit.error import TVMValueError
from mlckit.ffi.views import html_view

from .instruction import INSTRUCTION_KINDS, Instruction
from .rv import BlockRV, ExprRV, LoopRV


def _prefix(rv) -> str:
    if isinstance(rv, BlockRV):
        return "b"
    if isinstance(rv, LoopRV):
        return "l"
    return "v"


class Trace:
    """An ordered list of Instructions, with the sampling decisions taken.

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
    >>> print(sch.trace)
    # from tvm import tir
    def apply_trace(sch: tir.Schedule) -> None:
      b0 = sch.get_block(name="B", func_name="main")
      l1, = sch.get_loops(block=b0)
      l2, l3 = sch.split(loop=l1, factors=[None, 4], preserve_unit_iters=True, disable_predication=False)
    """

    # How the trace names itself and its instructions when printed: TVM v0.23's names here;
    # ``mlckit.s_tir.Trace`` overrides them with TVM >= 0.24's (``sch.get_sblock``).
    module_name = "tir"
    renamed_kinds: dict[str, tuple[str, str]] = {}  # kind name -> (JSON name, Python name)

    def __init__(self, insts: list[Instruction] | None = None):
        self.insts: list[Instruction] = list(insts or [])

    def append(self, inst: Instruction) -> None:
        self.insts.append(inst)

    @property
    def decisions(self) -> dict:
        return {i: inst.decision for i, inst in enumerate(self.insts) if inst.decision is not None}

    def __len__(self) -> int:
        return len(self.insts)

    # -- naming ---------------------------------------------------------------------------
    def _names(self) -> dict[int, str]:
        names: dict[int, str] = {}
        counter = 0

        def name_of(rv):
            nonlocal counter
            if id(rv) not in names:
                names[id(rv)] = f"{_prefix(rv)}{counter}"
                counter += 1
            return names[id(rv)]

        for inst in self.insts:
            for v in _flatten(inst.inputs):
                if isinstance(v, (BlockRV, LoopRV, ExprRV)):
                    name_of(v)
            for o in inst.outputs:
                name_of(o)
        return names

    # -- Python ---------------------------------------------------------------------------
    def as_python(self, remove_postproc: bool = False) -> list[str]:
        """One line of Python per instruction (``sch.split(loop=l1, factors=[None, 4])``)."""
        names = self._names()

        def fmt(v) -> str:
            if isinstance(v, (BlockRV, LoopRV, ExprRV)):
                return names[id(v)]
            if isinstance(v, list):
                return "[" + ", ".join(fmt(x) for x in v) + "]"
            if isinstance(v, str):
                return json.dumps(v)
            if callable(getattr(v, "as_python", None)):  # e.g. an IndexMap: a lambda
                return v.as_python()
            return repr(v)

        lines = []
        for inst in self.insts:
            kind = inst.kind
            if kind.varargs:
                args = [fmt(v) for v in inst.inputs[0]]
                args += [f"{n}={fmt(v)}" for n, v in zip(kind.inputs[1:], inst.inputs[1:])]
                args += [f"{n}={fmt(v)}" for n, v in zip(kind.attrs, inst.attrs)]
            else:  # keyword arguments in the method's order, as TVM prints them
                given = {**dict(zip(kind.inputs, inst.inputs)), **dict(zip(kind.attrs, inst.attrs))}
                order = [n for n in kind.params if n in given]
                order += [n for n in given if n not in order]
                args = [f"{n}={fmt(given[n])}" for n in order]
            if inst.decision is not None:
                args.append(f"decision={fmt(inst.decision)}")
            py_name = self.renamed_kinds.get(kind.name, (kind.name, kind.py_name))[1]
            call = f"sch.{py_name}({', '.join(args)})"
            outs = [names[id(o)] for o in inst.outputs]
            if not outs:
                lines.append(call)
            elif len(outs) == 1 and not inst.extra.get("list_output"):
                lines.append(f"{outs[0]} = {call}")
            else:
                lines.append(f"{', '.join(outs)}{',' if len(outs) == 1 else ''} = {call}")
        return lines

    def __str__(self) -> str:
        body = self.as_python()
        mod = self.module_name
        lines = [f"# from tvm import {mod}", f"def apply_trace(sch: {mod}.Schedule) -> None:"]
        lines += ["  " + line for line in body] or ["  pass"]
        return "\n".join(lines)

    __repr__ = __str__

    def show(self) -> None:
        print(str(self))

    def _repr_html_(self) -> str | None:
        """The trace as highlighted Python as HTML in a notebook (installed by the notebook layer); None,
        so that the text form shows, when it is not there."""
        return html_view(self)

    # -- JSON -----------------------------------------------------------------------------
    def as_json(self) -> list:
        """``[instructions, decisions]``, each instruction ``[kind, inputs, attrs, outputs]``
        with random variables written by name (as TVM's ``Trace.as_json``)."""
        names = self._names()

        def enc(v):
            if isinstance(v, (BlockRV, LoopRV, ExprRV)):
                return names[id(v)]
            if isinstance(v, list):
                return [enc(x) for x in v]
            if callable(getattr(v, "as_json", None)):  # e.g. an IndexMap: the text of a lambda
                return v.as_json()
            return v

        insts = []
        decisions = []
        for i, inst in enumerate(self.insts):
            kind_name = self.renamed_kinds.get(inst.kind.name, (inst.kind.name,))[0]
            insts.append([kind_name, enc(inst.inputs), enc(inst.attrs),
                          [names[id(o)] for o in inst.outputs]])
            if inst.decision is not None:
                decisions.append([i, enc(inst.decision)])
        return [insts, decisions]

    def to_json(self) -> str:
        return json.dumps(self.as_json())

    @staticmethod
    def apply_json_to_schedule(json_obj, sch, remove_postproc: bool = False) -> None:
        """Replay a trace given as JSON (a string or the ``as_json`` list) on ``sch``;
        ``remove_postproc`` stops at ``enter_postproc``."""
        if isinstance(json_obj, str):
            json_obj = json.loads(json_obj)
        insts, decisions = json_obj
        decided = {int(i): d for i, d in decisions}
        rvs: dict[str, Any] = {}

        def dec(v):
            if isinstance(v, str) and v in rvs:
                return rvs[v]
            if isinstance(v, list):
                return [dec(x) for x in v]
            return v

        for i, (kind_name, inputs, attrs, outputs) in enumerate(insts):
            if remove_postproc and kind_name == "EnterPostproc":
                break
            kind = INSTRUCTION_KINDS.get(kind_name)
            if kind is None:
                raise TVMValueError(f"unknown instruction kind {kind_name!r} in the trace")
            kwargs = dict(zip(kind.inputs, dec(inputs)))
            kwargs.update(zip(kind.attrs, attrs))
            if i in decided:
                kwargs["decision"] = decided[i]
            result = getattr(sch, kind.method)(**kwargs)
            outs = result if isinstance(result, (list, tuple)) else (
                [] if result is None else [result])
            for name, rv in zip(outputs, outs):
                rvs[name] = rv

    def apply_to_schedule(self, sch, remove_postproc: bool = False) -> None:
        """Replay this trace on ``sch`` (a fresh schedule of the same module); with
        ``remove_postproc``, only the instructions before ``enter_postproc``."""
        Trace.apply_json_to_schedule(self.as_json(), sch, remove_postproc)

    @staticmethod
    def from_json(text) -> _JsonTrace:
        return _JsonTrace(json.loads(text) if isinstance(text, str) else text)

    def with_decision(self, index: int, decision) -> Trace:
        """A copy of this trace in which instruction ``index`` takes ``decision``."""
        insts = list(self.insts)
        old = insts[index]
        insts[index] = Instruction(old.kind, old.inputs, old.attrs, old.outputs, decision,
                                   old.extra)
        return type(self)(insts)


class _JsonTrace:
    """A trace read back from JSON: it can be replayed and printed via replay."""

    def __init__(self, obj):
        self.obj = obj

    def apply_to_schedule(self, sch, remove_postproc: bool = False) -> None:
        Trace.apply_json_to_schedule(self.obj, sch, remove_postproc)

    def as_json(self):
        return self.obj


def _flatten(v):
    if isinstance(v, list):
        for x in v:
            yield from _flatten(x)
    else:
        yield v
