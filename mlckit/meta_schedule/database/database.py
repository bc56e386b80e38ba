"""The tuning database: workloads (the modules tuned) and tuning records (a trace, its
measured run times, the target).

``Database`` is the interface TVM's ``meta_schedule.database.Database`` has: commit
workloads and records, ask for the best records of a workload, and replay the best one
(``query_schedule``).  A database is also a context (``with database:``), which is how
``relax.transform.MetaScheduleApplyDatabase()`` finds it.

Example::

    db = ms.database.MemoryDatabase()
    wl = db.commit_workload(mod)
    db.commit_tuning_record(ms.database.TuningRecord(sch.trace, wl, [1.2e-3], target))
    db.query_schedule(mod, target, workload_name="main").mod.show()
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from mlckit.ffi import register_func
from mlckit.ir import structural_equal, structural_hash
from mlckit.ir.module import IRModule
from mlckit.target import Target
from mlckit.tir.schedule import Schedule, Trace

from ..arg_info import TensorInfo
from ..utils import normalize_mod

# run times at least this large mark a failed measurement (as TVM)
MAX_RUN_SECS = 1e10


@dataclass(eq=False)
class Workload:
    """A tuned module (TVM's ``Workload``): the IRModule and its structural hash.

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
    >>> from mlckit import meta_schedule as ms
    >>> ms.database.Workload(Mod).shash == tvm.ir.structural_hash(Mod)
    True
    """

    mod: IRModule
    shash: int = field(default=0)

    def __post_init__(self):
        if not self.shash:
            self.shash = structural_hash(self.mod)


@dataclass(eq=False)
class TuningRecord:
    """One measured candidate (TVM's ``TuningRecord``).

    ``trace`` replays the candidate on the workload's module; ``run_secs`` are the
    measured seconds per run (one per repeat), ``[1e10]`` when it failed.

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
    >>> workload = ms.database.Workload(Mod)
    >>> record = ms.database.TuningRecord(sch.trace, workload, run_secs=[2e-6, 1e-6])
    >>> record.run_secs
    [2e-06, 1e-06]
    """

    trace: object
    workload: Workload
    run_secs: list | None = None
    target: Target | None = None
    args_info: list | None = None

    @property
    def median_secs(self) -> float:
        """The median of ``run_secs`` (infinite when unmeasured or failed)."""
        if not is_valid(self.run_secs):
            return float("inf")
        return statistics.median(self.run_secs)

    def as_measure_candidate(self):
        sch = Schedule(self.workload.mod)
        self.trace.apply_to_schedule(sch, remove_postproc=False)
        return sch

    def as_json(self) -> list:
        """``[trace, run_secs, target, args_info]``, the shape of TVM's record JSON."""
        return [self.trace.as_json(), self.run_secs,
                None if self.target is None else str(self.target),
                None if self.args_info is None else [a.as_json() for a in self.args_info]]

    @staticmethod
    def from_json(obj, workload: Workload) -> TuningRecord:
        trace_json, run_secs, target, args_info = obj
        return TuningRecord(
            Trace.from_json(trace_json), workload,
            None if run_secs is None else [float(s) for s in run_secs],
            None if target is None else Target(target),
            None if args_info is None else [TensorInfo.from_json(a) for a in args_info])


def is_valid(run_secs) -> bool:
    return bool(run_secs) and all(s is not None and 0 <= s < MAX_RUN_SECS for s in run_secs)


class Database:
    """The interface of a tuning database (TVM's ``meta_schedule.database.Database``).

    >>> from mlckit import meta_schedule as ms
    >>> issubclass(ms.database.MemoryDatabase, ms.database.Database), issubclass(ms.database.JSONDatabase, ms.database.Database)
    (True, True)
    """

    _current: list[Database] = []

    def __init__(self):
        self._workloads: list[Workload] = []
        self._records: list[tuple[int, TuningRecord]] = []  # (workload index, record)

    # -- creation -------------------------------------------------------------------------
    @staticmethod
    def create(kind="json", *args, **kwargs) -> Database:
        """``"json"`` (``work_dir=...``) or ``"memory"``; a Database passes through."""
        if isinstance(kind, Database):
            return kind
        from .json_database import JSONDatabase
        from .memory_database import MemoryDatabase

        kinds = {"json": JSONDatabase, "memory": MemoryDatabase}
        if kind not in kinds:
            from ..error import DatabaseError

            raise DatabaseError(f"unknown database kind {kind!r} (one of {', '.join(kinds)})")
        return kinds[kind](*args, **kwargs)

    # -- workloads ------------------------------------------------------------------------
    def _find(self, mod: IRModule) -> int | None:
        shash = structural_hash(mod)
        for i, wl in enumerate(self._workloads):
            if wl.shash == shash and structural_equal(wl.mod, mod):
                return i
        return None

    def find_workload(self, mod: IRModule) -> Workload | None:
        """The workload of ``mod`` if this database has it (None otherwise); never adds."""
        i = self._find(normalize_mod(mod))
        return None if i is None else self._workloads[i]

    def has_workload(self, mod: IRModule) -> bool:
        """Whether ``mod`` (structurally) is a workload of this database."""
        return self._find(mod) is not None

    def commit_workload(self, mod: IRModule) -> Workload:
        """The workload of ``mod``, added if new."""
        i = self._find(mod)
        if i is None:
            self._workloads.append(Workload(mod))
            self._on_new_workload()
            i = len(self._workloads) - 1
        return self._workloads[i]

    # -- records --------------------------------------------------------------------------
    def commit_tuning_record(self, record: TuningRecord) -> None:
        """Add one measured candidate."""
        self.commit_tuning_records([record])

    def commit_tuning_records(self, records: list[TuningRecord]) -> None:
        """Add several measured candidates at once (one write for a file database)."""
        for record in records:
            i = next(k for k, wl in enumerate(self._workloads) if wl is record.workload)
            self._records.append((i, record))
        self._on_new_records()

    def get_all_tuning_records(self) -> list[TuningRecord]:
        """Every record, in the order they were committed."""
        return [r for _, r in self._records]

    def get_top_k(self, workload: Workload, top_k: int) -> list[TuningRecord]:
        """The ``top_k`` fastest valid records of ``workload`` (by median run time)."""
        mine = [r for _, r in self._records if r.workload is workload and is_valid(r.run_secs)]
        return sorted(mine, key=lambda r: r.median_secs)[:top_k]

    def __len__(self) -> int:
        return len(self._records)

    # -- queries --------------------------------------------------------------------------
    def query_tuning_record(self, mod, target=None, workload_name: str = "main"):
        """The best record for ``mod`` (None when it was never tuned)."""
        i = self._find(normalize_mod(mod))
        if i is None:
            return None
        best = self.get_top_k(self._workloads[i], 1)
        return best[0] if best else None

    def query_schedule(self, mod, target=None, workload_name: str = "main"):
        """The best record's trace replayed on ``mod``: a ``tir.Schedule`` (or None)."""
        record = self.query_tuning_record(mod, target, workload_name)
        if record is None:
            return None
        sch = Schedule(normalize_mod(mod))
        record.trace.apply_to_schedule(sch, remove_postproc=False)
        return sch

    def query_ir_module(self, mod, target=None, workload_name: str = "main"):
        """The best record's module (or None)."""
        sch = self.query_schedule(mod, target, workload_name)
        return None if sch is None else sch.mod

    query = query_schedule

    # -- persistence hooks (the JSON database writes files) -------------------------------
    def _on_new_workload(self) -> None:
        pass

    def _on_new_records(self) -> None:
        pass

    # -- scope ----------------------------------------------------------------------------
    def __enter__(self) -> Database:
        Database._current.append(self)
        return self

    def __exit__(self, *exc) -> None:
        Database._current.pop()

    @staticmethod
    def current() -> Database | None:
        """The database of the innermost ``with database:`` (None outside)."""
        return Database._current[-1] if Database._current else None


# How relax.transform.MetaScheduleApplyDatabase (a lower layer) reaches the database.
register_func("meta_schedule.database.current", override=True)(Database.current)
