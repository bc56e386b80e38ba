"""Errors: every error a user can catch derives from ``TVMError``, as in ``tvm.error``.

    import mlckit as tvm
    try:
        sch.get_loops("no_such_block")
    except tvm.TVMError as err:          # ScheduleError, DiagnosticError, VMError, ...
        print(err)

The classes a learner meets most are also the Python built-in they resemble, so code that
catches ``ValueError`` or ``KeyError`` keeps working::

    TVMError (RuntimeError)
    ├── InternalError                   a bug in mlckit, not in the program
    ├── DiagnosticError                 located parse / well-formedness error (mlckit.ir)
    ├── ScheduleError (ValueError)      a schedule primitive refused (mlckit.tir.schedule)
    ├── VMError                         the Relax VM could not run a call (mlckit.runtime.vm)
    ├── OpError                         frontend operator errors (TVM's names)
    │   ├── OpNotImplemented (NotImplementedError)
    │   ├── OpAttributeRequired / OpAttributeInvalid (AttributeError)
    │   └── OpAttributeUnImplemented (NotImplementedError)
    └── TVMValueError, TVMTypeError, TVMKeyError, TVMIndexError, TVMAttributeError,
        TVMNotImplementedError          a bad argument, of the built-in's kind

This module imports nothing from mlckit: every layer can raise these.
"""

from __future__ import annotations

import importlib


class TVMError(RuntimeError):
    """The base of every error mlckit raises for a user's mistake (``tvm.TVMError``).

    >>> import mlckit as tvm
    >>> try:
    ...     tvm.ir.Op.get("relax.no_such_op")
    ... except tvm.TVMError as err:
    ...     print(type(err).__name__, err)
    TVMKeyError operator 'relax.no_such_op' is not registered
    """


class InternalError(TVMError):
    """An error inside mlckit itself (a bug to report), not in the user's program.

    >>> from mlckit.error import InternalError, TVMError
    >>> issubclass(InternalError, TVMError)
    True
    """


class TVMValueError(TVMError, ValueError):
    """An argument has the right type but a value that cannot be used.

    It is also a ``ValueError``:

    >>> from mlckit import tir
    >>> try:
    ...     tir.min_value("float7")
    ... except ValueError as err:
    ...     print(type(err).__name__)
    TVMValueError
    """


class TVMTypeError(TVMError, TypeError):
    """An argument has a type that cannot be used here.

    It is also a ``TypeError``:

    >>> from mlckit import topi
    >>> try:
    ...     topi.exp([1.0, 2.0])
    ... except TypeError as err:
    ...     print(err)
    topi.exp: x must be a te.Tensor, got list
    """


class TVMIndexError(TVMError, IndexError):
    """An index is out of range (also an ``IndexError``).

    >>> from mlckit.error import TVMIndexError
    >>> issubclass(TVMIndexError, IndexError)
    True
    """


class TVMAttributeError(TVMError, AttributeError):
    """An attribute does not exist (also an ``AttributeError``).

    >>> from mlckit.error import TVMAttributeError
    >>> issubclass(TVMAttributeError, AttributeError)
    True
    """


class TVMNotImplementedError(TVMError, NotImplementedError):
    """Something valid in TVM that mlckit does not implement (yet); also a
    ``NotImplementedError``.

    >>> from mlckit.error import TVMNotImplementedError
    >>> issubclass(TVMNotImplementedError, NotImplementedError)
    True
    """


class TVMKeyError(TVMError, KeyError):
    """A name looked up in a table (functions, registry entries) is not there; also a
    ``KeyError``, whose message is shown as written.

    >>> from mlckit import ir
    >>> try:
    ...     ir.Op.get("relax.no_such_op")
    ... except KeyError as err:
    ...     print(err)
    operator 'relax.no_such_op' is not registered
    """

    def __str__(self) -> str:  # KeyError quotes its message; show it as written
        return str(self.args[0]) if self.args else ""


class OpError(TVMError):
    """Base class of operator errors in frontends.

    >>> from mlckit.error import OpError, OpNotImplemented
    >>> issubclass(OpNotImplemented, OpError)
    True
    """


class OpNotImplemented(OpError, NotImplementedError):
    """An operator is not implemented.

    >>> from mlckit.error import OpNotImplemented
    >>> str(OpNotImplemented("relax.nn.lrn is not implemented"))
    'relax.nn.lrn is not implemented'
    """


class OpAttributeRequired(OpError, AttributeError):
    """A required operator attribute is missing (also an ``AttributeError``).

    >>> from mlckit.error import OpAttributeRequired
    >>> issubclass(OpAttributeRequired, AttributeError)
    True
    """


class OpAttributeInvalid(OpError, AttributeError):
    """An operator attribute has an invalid value (also an ``AttributeError``).

    >>> from mlckit.error import OpAttributeInvalid
    >>> issubclass(OpAttributeInvalid, AttributeError)
    True
    """


class OpAttributeUnImplemented(OpError, NotImplementedError):
    """An operator attribute is not supported (also a ``NotImplementedError``).

    >>> from mlckit.error import OpAttributeUnImplemented
    >>> issubclass(OpAttributeUnImplemented, NotImplementedError)
    True
    """


# Errors defined next to the code that raises them, re-exported here under TVM's names.
_ELSEWHERE = {
    "DiagnosticError": "mlckit.ir.diagnostics",
    "ScheduleError": "mlckit.tir.schedule.error",
    "VMError": "mlckit.runtime.vm.virtual_machine",
}


def __getattr__(name: str):
    if name in _ELSEWHERE:
        return getattr(importlib.import_module(_ELSEWHERE[name]), name)
    raise AttributeError(f"module 'mlckit.error' has no attribute {name!r}")


def did_you_mean(name: str, names) -> str:
    """``"; did you mean 'add'?"``: the public name of ``names`` closest to a misspelt
    ``name``, or "" when none is close (for "has no attribute" messages).

    Example::

        >>> did_you_mean("ad", ["add", "multiply"])
        "; did you mean 'add'?"
    """
    import difflib

    public = [n for n in names if not n.startswith("_")]
    close = difflib.get_close_matches(name, public, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""
