"""Expressions of the recorded run (:mod:`.record`): TIR expressions evaluated for every
thread at once.

A mixin of the recorder's runner: a value is a Python number when every thread has the same
one, else a NumPy array with one entry per thread (lane); ``self.env`` holds the variables,
``self.mask`` the threads a condition left running, ``self.load`` reads (and records) a
buffer.  ``if_then_else`` and ``Select`` evaluate each side only for the threads that take it,
so a guarded load out of bounds in the other threads is no error, as on the GPU.

Example::

    # inside the runner
    self.expr(BufferLoad(A, [tx + 1]) * FloatImm("float32", 2.0))   # one value per thread
"""

from __future__ import annotations

import math

import numpy as np

from mlckit.error import TVMValueError
from mlckit.tir import dtype as dt
from mlckit.tir import expr as E

from ..codegen_common import _NP_BINARY, _NP_UNARY

__all__ = ["ExprRunner", "RecordError"]


class RecordError(TVMValueError):
    """The recorded run cannot go on: an access out of bounds, a construct the recorder does
    not run, or more accesses than ``max_accesses``."""


def _truncdiv(a, b):
    q = np.abs(a) // np.abs(b)
    return np.where((np.asarray(a) >= 0) == (np.asarray(b) >= 0), q, -q)


_BIN = {
    E.Add: lambda a, b: a + b, E.Sub: lambda a, b: a - b, E.Mul: lambda a, b: a * b,
    E.FloorDiv: lambda a, b: a // b, E.FloorMod: lambda a, b: a % b,
    E.Min: np.minimum, E.Max: np.maximum,
    E.EQ: lambda a, b: a == b, E.NE: lambda a, b: a != b, E.LT: lambda a, b: a < b,
    E.LE: lambda a, b: a <= b, E.GT: lambda a, b: a > b, E.GE: lambda a, b: a >= b,
    E.And: np.logical_and, E.Or: np.logical_or,
}


class ExprRunner:
    """Mixin: TIR expressions evaluated lane-wise (see the module's docstring)."""

    def expr(self, e):  # noqa: C901 - one dispatch
        cls = type(e)
        if cls is E.IntImm:
            return bool(e.value) if e.dtype == "bool" else int(e.value)
        if cls is E.FloatImm:
            return dt.to_numpy(e.dtype).type(e.value)
        if cls is E.Var or cls is E.SizeVar:
            try:
                return self.env[id(e)]
            except KeyError:
                raise RecordError(f"record_accesses: the variable {e.name_hint} has no value "
                                  "here") from None
        if cls is E.BufferLoad:
            return self.load(e)
        op = _BIN.get(cls)
        if op is not None:
            return op(self.expr(e.a), self.expr(e.b))
        if cls is E.Div or cls is E.Mod:
            a, b = self.expr(e.a), self.expr(e.b)
            if dt.is_float(e.dtype):
                return a / b if cls is E.Div else np.fmod(a, b)
            q = _truncdiv(a, b)
            out = q if cls is E.Div else a - q * b
            return out if np.ndim(out) else int(out)
        if cls is E.Not:
            return np.logical_not(self.expr(e.a))
        if cls is E.Select:
            return self.choose(e.condition, e.true_value, e.false_value)
        if cls is E.Cast:
            value = self.expr(e.value)
            if e.dtype == "bool":
                return np.asarray(value).astype(bool) if np.ndim(value) else bool(value)
            if not dt.is_float(e.dtype) and not np.ndim(value):
                return int(value)
            return np.asarray(value).astype(dt.to_numpy(e.dtype)) if np.ndim(value) \
                else dt.to_numpy(e.dtype).type(value)
        if cls is E.Let:
            self.env[id(e.var)] = self.expr(e.value)
            return self.expr(e.body)
        if cls is E.Call:
            return self.call(e)
        raise RecordError(f"record_accesses does not evaluate {cls.__name__} expressions "
                          f"(in block {self.block_name!r})")

    def choose(self, cond_e, t_e, f_e):
        cond = self.expr(cond_e)
        if np.ndim(cond) == 0:
            return self.expr(t_e) if cond else self.expr(f_e)
        cond = np.asarray(cond, bool)
        saved = self.mask
        self.mask = self._and(saved, cond)
        t = self.expr(t_e) if self._any() else 0
        self.mask = self._and(saved, ~cond)
        f = self.expr(f_e) if self._any() else 0
        self.mask = saved
        return np.where(cond, t, f)

    def call(self, e):
        op = getattr(e.op, "name", str(e.op))
        short = op[4:] if op.startswith("tir.") else op
        if short == "if_then_else":
            return self.choose(*e.args)
        args = [self.expr(a) for a in e.args]
        if short in _NP_UNARY:
            return getattr(np, _NP_UNARY[short][3:])(args[0])
        if short in _NP_BINARY:
            return getattr(np, _NP_BINARY[short][3:])(args[0], args[1])
        if short == "rsqrt":
            return 1 / np.sqrt(args[0])
        if short == "sigmoid":
            return 1 / (1 + np.exp(-args[0]))
        if short == "erf":
            return np.vectorize(math.erf, otypes=[dt.to_numpy(e.dtype)])(args[0])
        raise RecordError(f"record_accesses does not run the intrinsic {op!r} (in block "
                          f"{self.block_name!r})")
