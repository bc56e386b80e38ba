"""``MemoryDatabase``: workloads and records kept in memory only.

Example::

    db = ms.database.MemoryDatabase()
    ms.tune_tir(mod, "llvm", work_dir="tune", max_trials_global=8, database=db)
"""

from __future__ import annotations

from .database import Database


class MemoryDatabase(Database):
    """A database that lives as long as the Python object (TVM's ``MemoryDatabase``)."""

    def __init__(self, module_equality: str = "structural"):
        super().__init__()
