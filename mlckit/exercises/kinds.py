"""What an answer is, for each kind of exercise, and how it runs.

A kind turns the learner's answer into something runnable for one size of the exercise
(``make``) and runs it on NumPy arrays (``run``).  The kinds, by what the learner writes:

- ``tvmscript``: a TIR function (decorated or not; a string of TVMScript works too);
- ``schedule`` / ``gpu``: a function ``schedule(sch)`` applied to the exercise's program
  (``gpu`` builds for ``"cuda"``: the no-GPU path on a machine without one);
- ``trace``: a schedule trace as the ScheduleExplorer prints it, replayed on the program;
- ``stochastic``: a function ``schedule(sch)`` that samples, run with several seeds;
- ``tune``: a function ``tune(mod)`` that tunes and returns a ``tir.Schedule``;
- ``te``: a function of ``te`` placeholders returning the output tensor;
- ``relax``: an IRModule (or its undecorated class, or a function building one);
- ``rewrite``: a function ``rewrite(mod)`` (a pass works) applied to the program module;
- ``pipeline``: a list of passes, run on the program module through the PassStepper.

Example::

    KINDS["schedule"].make(ex, my_schedule, {"n": 16}, seed=0)   # a tir.Schedule
"""

from __future__ import annotations

import inspect

import numpy as np

from mlckit.error import TVMTypeError, TVMValueError

from .source import decorate, run_source

__all__ = ["KINDS", "Kind"]


def _fill(template: str, size: dict) -> str:
    for key, value in size.items():
        template = template.replace("{" + key + "}", str(value))
    return template


def program(ex, size: dict):
    """The exercise's program (what the learner schedules or rewrites) at ``size``."""
    ns = run_source(ex.setup + "\n" + _fill(ex.program, size), f"exercise {ex.name} program")
    return ns[ex.program_name]


class Kind:
    """Turns answers of one kind into runnable IR; ``target`` builds TIR."""

    target = "lnumpy"  # bounds-checked: an out-of-range index is named, not a crash

    def make(self, ex, answer, size: dict, seed: int):
        raise NotImplementedError

    def run(self, ex, made, arrays: list) -> list:
        """Run ``made`` (a PrimFunc or a Schedule) in destination-passing style on the
        inputs and zero-filled outputs; returns the outputs."""
        from mlckit.driver import build

        func = _prim_func(made)
        _check_signature(ex, func, arrays)
        outputs = [np.zeros(shape, dtype) for shape, dtype in ex.output_shapes(arrays)]
        build(func, target=self.target, **self.build_options)(*arrays, *outputs)
        return outputs

    build_options: dict = {}


def _prim_func(made):
    from mlckit.ir import IRModule
    from mlckit.tir.function import PrimFunc

    if isinstance(made, PrimFunc):
        return made
    if isinstance(made, IRModule):
        funcs = [f for f in made.functions.values() if isinstance(f, PrimFunc)]
        if len(funcs) != 1:
            raise TVMValueError(f"the answer's module holds {len(funcs)} TIR functions; "
                                "give the one function the exercise asks for")
        return funcs[0]
    return made.mod["main"]


def _check_signature(ex, func, arrays) -> None:
    names = ex.input_names + ex.output_names
    if len(func.params) != len(names):
        raise TVMValueError(
            f"the function takes {len(func.params)} buffers, the exercise passes "
            f"{len(names)} ({', '.join(names)})")
    shapes = [a.shape for a in arrays] + [s for s, _ in ex.output_shapes(arrays)]
    for p, name, shape in zip(func.params, names, shapes):
        buf = func.buffer_map.get(p)
        if buf is None:
            raise TVMValueError(f"parameter `{p.name_hint}` is not a buffer")
        have = tuple(getattr(d, "value", d) for d in buf.shape)
        if have != tuple(shape):
            raise TVMValueError(f"buffer `{buf.name}` has the shape {have}, the exercise "
                                f"passes `{name}` of shape {tuple(shape)}")


class TVMScriptKind(Kind):
    def make(self, ex, answer, size, seed):
        from mlckit.ir import IRModule
        from mlckit.tir.function import PrimFunc

        if isinstance(answer, str):
            ns = run_source(ex.setup + "\n" + answer, f"answer to {ex.name}")
            answer = ns[ex.answer_name]
        if inspect.isfunction(answer):
            answer = decorate(answer, "T.prim_func", f"answer to {ex.name}")
        if not isinstance(answer, (PrimFunc, IRModule)):
            raise TVMTypeError(f"expected a TIR function, got {type(answer).__name__}")
        return _prim_func(answer)


class ScheduleKind(Kind):
    def make(self, ex, answer, size, seed):
        from mlckit.tir.schedule import Schedule

        if not callable(answer):
            raise TVMTypeError(f"expected a function schedule(sch), got {type(answer).__name__}")
        sch = Schedule(program(ex, size))
        answer(sch)
        return sch


class GPUKind(ScheduleKind):
    """Built for "cuda" at the exercise's first size (the GPU's checks apply; the no-GPU
    path runs it), on lnumpy at the others: one Numba compilation per check."""

    def run(self, ex, made, arrays):
        from mlckit.driver import build

        func = _prim_func(made)
        _check_signature(ex, func, arrays)
        outputs = [np.zeros(shape, dtype) for shape, dtype in ex.output_shapes(arrays)]
        if ex._size_of(arrays) == ex.sizes[0]:
            build(func, target="cuda", mode="cpu")(*arrays, *outputs)
        else:
            build(func, target="lnumpy")(*arrays, *outputs)
        return outputs


class StochasticKind(ScheduleKind):
    def make(self, ex, answer, size, seed):
        from mlckit.tir.schedule import Schedule

        if not callable(answer):
            raise TVMTypeError(f"expected a function schedule(sch), got {type(answer).__name__}")
        sch = Schedule(program(ex, size), seed=seed)
        answer(sch)
        return sch


class TraceKind(Kind):
    def make(self, ex, answer, size, seed):
        from mlckit import tir
        from mlckit.tir.schedule import Schedule

        if not isinstance(answer, str):
            answer = str(answer)  # a Trace, or an explorer step's trace
        sch = Schedule(program(ex, size))
        ns = run_source(answer, f"trace for {ex.name}", {"tir": tir, "T": None, "sch": sch})
        if callable(ns.get("apply_trace")):
            ns["apply_trace"](sch)
        return sch


class TuneKind(Kind):
    def make(self, ex, answer, size, seed):
        from mlckit.ir import IRModule

        if not callable(answer):
            raise TVMTypeError(f"expected a function tune(mod), got {type(answer).__name__}")
        sch = answer(IRModule({"main": program(ex, size)}))
        if sch is None or not hasattr(sch, "mod"):
            raise TVMValueError("tune(mod) returned "
                                f"{'nothing' if sch is None else type(sch).__name__}: "
                                "return the tir.Schedule tuning found")
        return sch


class TEKind(Kind):
    def make(self, ex, answer, size, seed):
        from mlckit import te

        if not callable(answer):
            raise TVMTypeError(f"expected a function of te placeholders, got "
                               f"{type(answer).__name__}")
        placeholders = [te.placeholder(ex.shape(shape, size), dtype=dtype, name=name)
                        for name, shape, dtype in ex.inputs]
        out = answer(*placeholders)
        if not isinstance(out, te.Tensor):
            raise TVMTypeError(f"the function returned {type(out).__name__}, not a te.Tensor")
        return te.create_prim_func([*placeholders, out])


class RelaxKind(Kind):
    def make(self, ex, answer, size, seed):
        from mlckit.ir import IRModule

        if isinstance(answer, str):
            answer = run_source(ex.setup + "\n" + answer, f"answer to {ex.name}")[ex.answer_name]
        if inspect.isclass(answer):
            answer = decorate(answer, "I.ir_module", f"answer to {ex.name}")
        elif inspect.isfunction(answer):
            name = answer.__name__
            answer = answer()
            if answer is None:
                raise TVMValueError(f"{name}() returned nothing: return the IRModule "
                                    "(bb.get())")
        if not isinstance(answer, IRModule):
            raise TVMTypeError(f"expected an IRModule, got {type(answer).__name__}")
        return answer

    def run(self, ex, made, arrays):
        from mlckit import cpu, relax

        if "main" not in [gv.name_hint for gv in made.functions]:
            raise TVMValueError("the module has no function `main`")
        # lnumpy: no compilation, so feedback comes fast (and out-of-range reads are named)
        vm = relax.VirtualMachine(relax.build(made, target="lnumpy"), cpu())
        out = vm["main"](*arrays)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        return [o.numpy() if hasattr(o, "numpy") else np.asarray(o) for o in outs]


class RewriteKind(RelaxKind):
    def make(self, ex, answer, size, seed):
        from mlckit.ir import IRModule

        if not callable(answer):
            raise TVMTypeError(f"expected a function rewrite(mod), got {type(answer).__name__}")
        mod = answer(program(ex, size))
        if not isinstance(mod, IRModule):
            raise TVMTypeError(f"rewrite(mod) returned {type(mod).__name__}, not an IRModule")
        return mod


class Pipeline:
    """What a pipeline answer made: the final module ``mod`` (indexable like it) and the
    PassStepper that recorded every pass on the way."""

    def __init__(self, stepper):
        self.stepper = stepper
        self.mod = stepper.result

    def __getitem__(self, name):
        return self.mod[name]


class PipelineKind(RelaxKind):
    """A list of passes (or one pass), stepped through with the PassStepper."""

    def make(self, ex, answer, size, seed):
        from mlckit.ir.transform import Pass
        from mlckit.notebook.pass_stepper import PassStepper

        passes = list(answer) if isinstance(answer, (list, tuple)) else [answer]
        for i, p in enumerate(passes):
            if not isinstance(p, Pass):
                raise TVMTypeError(f"item {i} of the pipeline is {type(p).__name__}, not a "
                                   "pass: write relax.transform.LegalizeOps() (with the ())")
        return Pipeline(PassStepper(program(ex, size), passes))

    def run(self, ex, made, arrays):
        return super().run(ex, made.mod, arrays)


KINDS: dict[str, Kind] = {
    "tvmscript": TVMScriptKind(),
    "schedule": ScheduleKind(),
    "gpu": GPUKind(),
    "trace": TraceKind(),
    "stochastic": StochasticKind(),
    "tune": TuneKind(),
    "te": TEKind(),
    "relax": RelaxKind(),
    "rewrite": RewriteKind(),
    "pipeline": PipelineKind(),
}
