"""``SearchStrategy``: which candidates to measure next.

The tuner drives a strategy in rounds: ``pre_tuning`` (the design spaces, the database,
the cost model), then ``generate_measure_candidates()`` until it returns None, telling it
the results with ``notify_runner_results``.  Candidates are ``MeasureCandidate``s: a
post-processed schedule, the argument shapes, and the candidate's trace without its
post-processing (what mutation changes).

Deterministic: every random choice comes from one ``random.Random(seed)``; sampling a
candidate replays a design space's trace on a schedule seeded from it.

Example::

    strategy = ms.search_strategy.ReplayTrace()
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from mlckit.error import TVMError, TVMValueError
from mlckit.ir import structural_hash
from mlckit.tir.schedule import Schedule, Trace


@dataclass(eq=False)
class MeasureCandidate:
    """A schedule to measure (TVM's ``MeasureCandidate``) and what the search keeps of it.

    >>> from mlckit.script import ir as I, tir as T
    >>> @I.ir_module
    ... class Mod:
    ...     @T.prim_func
    ...     def copy(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
    ...         for i in range(4):
    ...             with T.block("B"):
    ...                 vi = T.axis.spatial(4, i)
    ...                 b[vi] = a[vi]
    >>> import mlckit as tvm
    >>> from mlckit import meta_schedule as ms, tir
    >>> sch = tir.Schedule(Mod)
    >>> _ = sch.get_block("B", func_name="copy")
    >>> candidate = ms.MeasureCandidate(sch, args_info=[])
    >>> candidate.sch is sch
    True
    """

    sch: Schedule
    args_info: list
    trace_json: list = field(default=None)  # the trace before post-processing
    shash: int = 0
    features: object = None  # filled by a cost model that extracts features


def strip_postproc(trace_json) -> list:
    """The part of a JSON trace before ``enter_postproc`` (decisions included)."""
    insts, decisions = trace_json
    end = next((i for i, inst in enumerate(insts) if inst[0] == "EnterPostproc"), len(insts))
    return [insts[:end], [[i, d] for i, d in decisions if int(i) < end]]


def replay(mod, trace_json, seed: int, postprocs, keep_decisions: bool = True):
    """Replay ``trace_json`` on ``mod`` (re-sampling every decision unless kept), then
    post-process: a ``MeasureCandidate``'s schedule, or None when any step refuses."""
    insts, decisions = trace_json
    sch = Schedule(mod, seed=seed)
    try:
        Trace.apply_json_to_schedule([insts, decisions if keep_decisions else []], sch,
                                     remove_postproc=True)
        pre = strip_postproc(sch.trace.as_json())
        sch.enter_postproc()
        for postproc in postprocs:
            if not postproc.apply(sch):
                return None, None
    except TVMError:
        return None, None
    return sch, pre


class SearchStrategy:
    """The interface of a search strategy (TVM's ``meta_schedule.SearchStrategy``).

    >>> from mlckit import meta_schedule as ms
    >>> issubclass(ms.search_strategy.EvolutionarySearch, ms.search_strategy.SearchStrategy)
    True
    """

    def initialize_with_tune_context(self, context) -> None:
        self.context = context
        seed = context.rand_state
        self.rng = random.Random(None if seed in (None, -1) else seed)
        space = context.space_generator
        self.postprocs = list(space.postprocs or []) if space is not None else []
        self.mutator_probs = dict(space.mutator_probs or {}) if space is not None else {}

    def pre_tuning(self, max_trials: int, num_trials_per_iter: int, design_spaces,
                   database=None, cost_model=None) -> None:
        from ..arg_info import ArgInfo

        if not design_spaces:
            raise TVMValueError("the space generator gave no design space")
        self.max_trials = max_trials
        self.num_trials_per_iter = num_trials_per_iter
        self.spaces = [strip_postproc(s.trace.as_json()) for s in design_spaces]
        self.database = database
        self.cost_model = cost_model
        self.mod = self.context.mod
        self.args_info = ArgInfo.from_prim_func(self.mod["main"])
        self.workload = database.commit_workload(self.mod) if database is not None else None
        self.trials = 0
        self.seen: set[int] = set()  # structural hashes of candidates measured or picked
        # called with each candidate to be measured as soon as it is picked, before
        # generate_measure_candidates returns them all (tune_tir: its measurement starts
        # while the search samples the next); None: nobody is told early
        self.candidate_sink = None

    def post_tuning(self) -> None:
        pass

    def notify_runner_results(self, candidates, results) -> None:
        pass

    def generate_measure_candidates(self):
        raise NotImplementedError

    # -- shared helpers --------------------------------------------------------------------
    def _candidate(self, trace_json, keep_decisions: bool):
        sch, pre = replay(self.mod, trace_json, self.rng.randrange(1, 2**31), self.postprocs,
                          keep_decisions)
        if sch is None:
            return None
        return MeasureCandidate(sch, self.args_info, pre, structural_hash(sch.mod))

    def _sample_new(self, count: int, exclude: set[int], max_fails: int = 64,
                    sink=None) -> list:
        """Up to ``count`` random candidates from the design spaces, structurally new.
        ``sink``: called with each candidate as it is picked (``candidate_sink``)."""
        out: list[MeasureCandidate] = []
        fails = 0
        while len(out) < count and fails < max_fails:
            cand = self._candidate(self.rng.choice(self.spaces), keep_decisions=False)
            if cand is None or cand.shash in exclude:
                fails += 1
                continue
            fails = 0
            exclude.add(cand.shash)
            out.append(cand)
            if sink is not None:
                sink(cand)
        return out

    def _budget(self) -> int:
        return min(self.num_trials_per_iter, self.max_trials - self.trials)

    @staticmethod
    def create(kind="evolutionary", *args, **kwargs) -> SearchStrategy:
        """``"evolutionary"``, ``"replay-trace"``, or a SearchStrategy."""
        from .evolutionary_search import EvolutionarySearch
        from .replay_trace import ReplayTrace

        if isinstance(kind, SearchStrategy):
            return kind
        kinds = {"evolutionary": EvolutionarySearch, "replay-trace": ReplayTrace,
                 "replay_trace": ReplayTrace}
        if kind not in kinds:
            raise TVMValueError(f"unknown search strategy {kind!r} (one of "
                                "'evolutionary', 'replay-trace')")
        return kinds[kind](*args, **kwargs)
