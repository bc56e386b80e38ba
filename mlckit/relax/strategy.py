"""Operator strategy: the implementations of each Relax operator, and the choice among them.

Relay's design, made visible: an operator has *implementations*, each with a name, a priority
``level``, an optional ``condition`` on the call (its shapes and dtypes) and the target kinds
it serves.  ``relax.transform.LegalizeOps`` asks ``select(call, target)`` for the
highest-level implementation that applies and lowers the call with it, logging the choice on
the logger ``mlckit.strategy``::

    import logging; logging.basicConfig(level=logging.INFO)
    # INFO mlckit.strategy: relax.add -> add.generic (level 10) for target llvm: ...

An implementation is

- a **te compute**: a function ``(bb, call) -> Expr`` calling ``bb.call_te`` (TVM's
  ``FLegalize`` signature; ``te_compute(topi.exp)`` writes the common case), optionally with
  ``schedule=``, a function applied to the created PrimFunc through ``tir.Schedule``;
- a **library call**: ``register_library`` registers a Python function in destination-passing
  style as the global function ``mlckit.lib.<name>`` and lowers the call to
  ``R.call_dps_packed("mlckit.lib.<name>", args, out_sinfo=...)``.

A *form* names a variant of the call that a pass before ``LegalizeOps`` recognises:
``relax.transform.FuseTransposeMatmul`` asks for the ``"transposed_b"`` implementations of
``relax.matmul`` — lowerings of ``matmul(x, permute_dims(w))`` that read ``w`` in place — with
``select(call, form="transposed_b")``.  ``LegalizeOps`` uses the plain form ``""`` only.

Registering your own (a higher level wins; ties go to the first registered)::

    from mlckit.relax import strategy

    @strategy.register("relax.add", "add.tiled", level=20,
                       condition=lambda call: call.struct_info.ndim == 2, targets=["llvm"],
                       schedule=lambda sch: sch.parallel(sch.get_loops("T_add")[0]))
    def add_tiled(bb, call):
        return bb.call_te(topi.add, *call.args, primfunc_name_hint="add")

    strategy.register_library("relax.exp", "numpy_exp",
                              lambda x, out: out.copyfrom(np.exp(x.numpy())), level=15)
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from mlckit.error import OpNotImplemented, TVMKeyError, TVMTypeError, TVMValueError

logger = logging.getLogger("mlckit.strategy")

LIBRARY_PREFIX = "mlckit.lib."


class NoApplicableImplementation(OpNotImplemented):
    """No implementation of an operator applies to the call on the current target."""


@dataclass(frozen=True)
class Implementation:
    """One way to lower an operator (see the module doc).

    ``lower(bb, call) -> Expr`` produces the lowered expression; ``targets`` are target kind
    names or keys (``"llvm"``, ``"lnumpy"``, ``"cpu"``, ``"gpu"`` …), None for every target;
    ``kind`` is ``"te"`` or ``"library"``; ``form`` the variant of the call it lowers
    (``""``: the call as written; see the module doc).
    """

    op_name: str
    name: str
    lower: Callable
    level: int = 10
    condition: Callable | None = None
    targets: tuple[str, ...] | None = None
    schedule: Callable | None = None
    kind: str = "te"
    form: str = ""

    def serves(self, target) -> bool:
        """True when this implementation is registered for ``target``'s kind."""
        if self.targets is None:
            return True
        names = {target.kind.name, *target.keys}
        return any(t in names for t in self.targets)

    def rejection(self, call, target) -> str | None:
        """Why this implementation does not apply to ``call`` on ``target`` (None: it does)."""
        if not self.serves(target):
            return f"targets {', '.join(self.targets)}"
        if self.condition is not None and not self.condition(call):
            return "condition is false for this call"
        return None

    def __str__(self) -> str:
        return f"{self.name} (level {self.level})"


_TABLE: dict[str, list[Implementation]] = {}


# -- registration -------------------------------------------------------------------------------
def _check_op(op_name: str) -> None:
    from mlckit.ir.op import Op

    if not isinstance(op_name, str):
        raise TVMTypeError(f"strategy: the operator is named by a string such as \"relax.add\", "
                           f"got {type(op_name).__name__}")
    Op.get(op_name)  # a TVMKeyError naming the op when it does not exist


def _targets(targets) -> tuple[str, ...] | None:
    if targets is None:
        return None
    if isinstance(targets, str):
        return (targets,)
    return tuple(t.kind.name if hasattr(t, "kind") else str(t) for t in targets)


def add_implementation(impl: Implementation, override: bool = False) -> Implementation:
    """Add ``impl`` to its operator's implementations (``override`` replaces one of the same
    name; without it, a second registration of a name is an error)."""
    _check_op(impl.op_name)
    impls = _TABLE.setdefault(impl.op_name, [])
    for i, old in enumerate(impls):
        if old.name == impl.name:
            if not override:
                raise TVMValueError(f"strategy: {impl.op_name} already has an implementation "
                                    f"named {impl.name!r}; pass override=True to replace it")
            impls[i] = impl
            return impl
    impls.append(impl)
    return impl


def register(op_name: str, name: str, *, level: int = 10, condition: Callable | None = None,
             targets: Sequence[str] | str | None = None, schedule: Callable | None = None,
             form: str = "", override: bool = False) -> Callable:
    """Decorator registering ``fn(bb, call) -> Expr`` as implementation ``name`` of
    ``op_name``.

    ``level``: the priority (higher wins; the generic ones are 10); ``condition(call)``: when
    it applies (None: always); ``targets``: target kinds or keys it serves (None: all);
    ``schedule(sch)``: applied with ``tir.Schedule`` to the PrimFunc the lowered
    ``R.call_tir`` calls; ``form``: the variant of the call it lowers (module doc).

    Example::

        @strategy.register("relax.exp", "exp.parallel", level=15, targets="llvm",
                           schedule=lambda sch: sch.parallel(sch.get_loops("compute")[0]))
        def exp_parallel(bb, call):
            return bb.call_te(topi.exp, call.args[0], primfunc_name_hint="tir_exp")
    """

    def decorate(fn: Callable) -> Callable:
        if not callable(fn):
            raise TVMTypeError(f"strategy.register({op_name!r}, {name!r}) decorates a function "
                               f"(bb, call) -> Expr, got {type(fn).__name__}")
        add_implementation(Implementation(op_name, name, fn, int(level), condition,
                                          _targets(targets), schedule, "te", str(form)),
                           override)
        return fn

    return decorate


def register_library(op_name: str, name: str, func: Callable, *, level: int = 10,
                     condition: Callable | None = None,
                     targets: Sequence[str] | str | None = None, form: str = "",
                     vm_arrays: bool = False, override: bool = False) -> Implementation:
    """Register the Python function ``func(*inputs, out)`` (destination-passing style: it
    writes the result into ``out``) as the global function ``mlckit.lib.<name>`` and as an
    implementation lowering the call to ``R.call_dps_packed("mlckit.lib.<name>", args,
    out_sinfo=<the call's struct info>)``.  ``func`` receives ``mlckit.nd.NDArray``s, or, with
    ``vm_arrays=True``, the VM's NumPy arrays as they are (no wrapping: for library functions
    that only read and write arrays, such as mlckit's own; a VM keeping its tensors on a GPU
    passes host copies and copies ``out`` back).

    Example::

        strategy.register_library("relax.exp", "numpy_exp",
                                  lambda x, out: out.copyfrom(np.exp(x.numpy())), level=15)
    """
    from mlckit.ffi import register_func

    if not callable(func):
        raise TVMTypeError(f"strategy.register_library({op_name!r}, {name!r}): func must be a "
                           f"callable (*inputs, out), got {type(func).__name__}")
    packed = LIBRARY_PREFIX + name
    _check_op(op_name)
    if vm_arrays:
        func._mlckit_vm_builtin = True  # the VM passes its arrays unwrapped
        func._mlckit_host_arrays = True  # ... as NumPy arrays, copied from a GPU's memory
    register_func(packed, func, override=True)

    def lower(bb, call):
        from .op.base import call_dps_packed

        return call_dps_packed(packed, list(call.args), call.struct_info)

    lower.__name__ = f"call_{name}"
    return add_implementation(Implementation(op_name, name, lower, int(level), condition,
                                             _targets(targets), None, "library", str(form)),
                              override)


def unregister(op_name: str, name: str) -> None:
    """Remove the implementation ``name`` of ``op_name`` (a library function stays
    registered as a global function)."""
    impls = _TABLE.get(op_name, [])
    for impl in impls:
        if impl.name == name:
            impls.remove(impl)
            return
    known = ", ".join(i.name for i in impls) or "none"
    raise TVMKeyError(f"strategy: {op_name} has no implementation {name!r} (it has: {known})")


def implementations(op_name: str, form: str | None = "") -> list[Implementation]:
    """The implementations of ``op_name`` of ``form`` (default: the plain form ``LegalizeOps``
    uses; None: every form), highest level first (ties: first registered)."""
    impls = [i for i in _TABLE.get(op_name, []) if form is None or i.form == form]
    return sorted(impls, key=lambda i: -i.level)  # sorted() is stable: ties keep their order


def has_implementations(op_name: str, form: str = "") -> bool:
    """True when ``op_name`` has an implementation of ``form``."""
    return any(i.form == form for i in _TABLE.get(op_name, []))


def te_compute(te_func: Callable, primfunc_name: str | None = None) -> Callable:
    """The implementation ``(bb, call) -> bb.call_te(te_func, *call.args)`` (TVM's
    ``_call_topi_without_attr``), naming the PrimFunc ``primfunc_name``.

    Example::

        unary.exp.legalize(te_compute(topi.exp, "tir_exp"))
    """
    hint = primfunc_name or te_func.__name__

    def lower(bb, call):
        return bb.call_te(te_func, *call.args, primfunc_name_hint=hint)

    lower.__name__ = f"call_te_{hint}"
    return lower


# -- selection ------------------------------------------------------------------------------
def current_target():
    """The target of the innermost ``with target:``, else ``llvm`` (TVM's default host)."""
    from mlckit.target import Target

    return Target.current() or Target("llvm")


def select(call, target=None, form: str = "") -> Implementation | None:
    """The implementation ``LegalizeOps`` uses for ``call`` on ``target`` (default: the
    current one), logged on ``mlckit.strategy``; None when the operator has none at all
    (of ``form``: see the module doc).

    Raises ``NoApplicableImplementation`` (naming the operator and the target, and why each
    implementation was rejected) when it has some but none applies.
    """
    op_name = call.op.name
    target = target if target is not None else current_target()
    impls = implementations(op_name, form)
    if not impls:
        return None
    rejected = []
    chosen = None
    for impl in impls:
        why = impl.rejection(call, target)
        if why is None:
            chosen = impl
            break
        rejected.append(f"{impl} ({why})")
    if chosen is None:
        raise NoApplicableImplementation(
            f"{op_name}: no implementation applies to this call on target "
            f"{target.kind.name!r}; rejected: {'; '.join(rejected)}")
    later = [i for i in impls if i is not chosen and impls.index(i) > impls.index(chosen)]
    why = "the highest level that applies"
    if rejected:
        why += f"; skipped {'; '.join(rejected)}"
    if later:
        why += f"; lower: {', '.join(str(i) for i in later)}"
    logger.info("%s -> %s (level %d) for target %s: %s",
                f"{op_name} ({form})" if form else op_name, chosen.name, chosen.level,
                target.kind.name, why)
    return chosen


__all__ = ["Implementation", "LIBRARY_PREFIX", "NoApplicableImplementation",
           "add_implementation", "current_target", "has_implementations", "implementations",
           "logger", "register", "register_library", "select", "te_compute", "unregister"]
