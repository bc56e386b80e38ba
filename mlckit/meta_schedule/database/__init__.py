"""Tuning databases: ``JSONDatabase`` (TVM's two files in ``work_dir``) and ``MemoryDatabase``."""

from .database import Database, TuningRecord, Workload
from .json_database import JSONDatabase
from .memory_database import MemoryDatabase

__all__ = ["Database", "JSONDatabase", "MemoryDatabase", "TuningRecord", "Workload"]
