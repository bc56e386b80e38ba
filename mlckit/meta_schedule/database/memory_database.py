"""``MemoryDatabase``: workloads and records kept in memory only.

Example::

    db = ms.database.MemoryDatabase()
    ms.tune_tir(mod, "llvm", work_dir="tune", max_trials_global=8, database=db)
"""

from __future__ import annotations

from .database import Database


class MemoryDatabase(Database):
    """A database that lives as long as the Python object (TVM's ``MemoryDatabase``).

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
    >>> db = ms.database.MemoryDatabase()
    >>> workload = db.commit_workload(Mod)
    >>> db.commit_tuning_record(ms.database.TuningRecord(sch.trace, workload, [1e-6], tvm.target.Target("llvm")))
    >>> len(db), [r.run_secs for r in db.get_top_k(workload, 1)]
    (1, [[1e-06]])
    """

    def __init__(self, module_equality: str = "structural"):
        super().__init__()
